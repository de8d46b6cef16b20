#!/usr/bin/env bash
# Deliberation branches on 1 and 2 `ducklm worker` processes (River jobs on
# a throw-away PostgreSQL): a 2,000-branch round, 1 worker and 2 workers
# interleaved ROUNDS times (3), each run on a fresh cluster; prints every
# run, then the medians, the speed-up and the goal (>= 1.7x), with the load.
# Every run of a grid searches the same parent (DUCKLM_BENCH_PARENT: the
# first run's world, kept as a bundle and imported by the others), so every
# round searches the same tree. It does so for each grid of GRIDS ("9 64"): the Branching Grid example as
# it is (9x9: a branch costs its bookkeeping as much as its simulation) and
# on a 64x64 grid (a branch's shortest-path score costs 13-30 ms of Starlark:
# a world whose branches cost their simulation), see docs/workers-per-postgres.md.
# After each round it times the branches' computation alone in 1 and in 2
# processes (no database): the speed-up these cores allow the work itself,
# which the workers' speed-up is read against.
#   scripts/bench-workers.sh
#   ROUNDS=5 GRIDS=9 DUCKLM_BENCH_BUDGET=600 scripts/bench-workers.sh
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-3}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
go test -c -o "$out/river.test" ./backend/river/
go test -c -o "$out/starlark.test" ./backend/starlark/
# The same branches' computation alone (BenchmarkGridBranch: restore, step,
# actions, score, checkpoint in memory; GOGC 400 as a world program runs),
# in 1 process and in 2 at once: what the cores give the branches' own
# work, the ceiling of any speed-up of theirs on this machine.
compute() { # compute GRID PROCS OUT
  for p in $(seq 1 "$2"); do
    (cd backend/starlark && GOGC=${GOGC:-400} DUCKLM_BENCH_GRID=$1 "$out/starlark.test" -test.run '^$' -test.bench '^BenchmarkGridBranch$' \
      -test.benchtime 3s -test.count 1) >"$3.$p" &
  done
  wait
  cat "$3".* >"$3"
}
metric() { awk -v unit="$2" '/^BenchmarkBranchesOnWorkers/ { for (i = 2; i < NF; i++) if ($(i+1) == unit) print $i }' "$1" | head -n1; }
cmetric() { awk '/^BenchmarkGridBranch/ { for (i = 2; i < NF; i++) if ($(i+1) == "branches/s") s += $i } END { printf "%.1f\n", s }' "$1"; }
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print "n/a"; else if (NR % 2) print a[(NR + 1) / 2]; else printf "%.4g\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
for grid in ${GRIDS:-9 64}; do
  loads=()
  for r in $(seq 1 "$rounds"); do
    for w in 1 2; do
      loads+=("$(cut -d' ' -f1 /proc/loadavg)")
      (cd backend/river && DUCKLM_BENCH_GRID=$grid DUCKLM_BENCH_PARENT="$out" "$out/river.test" -test.run '^$' -test.bench "^BenchmarkBranchesOnWorkers/workers=$w\$" \
        -test.benchtime 1x -test.count 1 -test.timeout 30m) >"$out/g$grid-w$w-$r.txt"
      printf "${grid}x${grid} grid, round %d, %d worker(s): %s branches/s (%s branches; load %s)\n" "$r" "$w" \
        "$(metric "$out/g$grid-w$w-$r.txt" branches/s)" "$(metric "$out/g$grid-w$w-$r.txt" branches/round)" "${loads[-1]}"
    done
    for p in 1 2; do
      compute "$grid" "$p" "$out/c$grid-p$p-$r.txt"
    done
    c1=$(cmetric "$out/c$grid-p1-$r.txt"); c2=$(cmetric "$out/c$grid-p2-$r.txt")
    printf "${grid}x${grid} grid, round %d, the branches' computation alone: %s branches/s in 1 process, %s in 2 (%s)\n" "$r" "$c1" "$c2" \
      "$(awk -v a="$c2" -v b="$c1" 'BEGIN { printf "%.2fx", a / b }')"
  done
  med() { for r in $(seq 1 "$rounds"); do metric "$out/g$grid-w$1-$r.txt" "$2"; done | median; }
  w1=$(med 1 branches/s); w2=$(med 2 branches/s)
  ratio=$(awk -v a="$w2" -v b="$w1" 'BEGIN { printf "%.2f", a / b }')
  met=$(awk -v r="$ratio" 'BEGIN { print (r >= 1.7) ? "yes" : "NO" }')
  echo
  echo "== branches on workers, ${grid}x${grid} grid: medians of $rounds interleaved runs (load at each start: ${loads[*]}; $(nproc) cores)"
  printf "| %-44s | %12s | %12s |\n" "measure" "1 worker" "2 workers"
  printf "| %-44s | %12s | %12s |\n" "----" "----" "----"
  for u in branches/s branches/round worker-cpu-ms/branch pg-cpu-ms/branch queue-cpu-ms/branch commits/branch commits/s rows/branch wal-B/branch ledger-lock-waiters; do
    printf "| %-44s | %12s | %12s |\n" "$u" "$(med 1 "$u")" "$(med 2 "$u")"
  done
  # What the machine allows: all the CPU a branch costs (workers, PostgreSQL,
  # the searching process) against the cores there are. A setup that keeps
  # U cores busy with 1 worker can gain at most cores/U from a second.
  for w in 1 2; do
    read -r cpu used < <(awk -v a="$(med $w worker-cpu-ms/branch)" -v b="$(med $w pg-cpu-ms/branch)" -v c="$(med $w queue-cpu-ms/branch)" \
      -v r="$(med $w branches/s)" 'BEGIN { t = a + b + c; printf "%.3f %.2f\n", t, t * r / 1000 }')
    printf "| %-44s | %12s |\n" "CPU a branch in all, $w worker(s) (ms)" "$cpu"
    printf "| %-44s | %12s |\n" "cores kept busy, $w worker(s)" "$used"
    eval "cpu$w=$cpu used$w=$used"
  done
  echo
  awk -v c="$(nproc)" -v t="$cpu2" -v u="$used1" -v w1="$w1" 'BEGIN {
    printf "at %.3f ms of CPU a branch, %d cores run at most %.0f branches/s; 1 worker keeps %.2f cores busy, so 2 can gain at most %.2fx here\n",
      t, c, c * 1000 / t, u, (u > 0 ? c / u : 0) }'
  printf "speed-up, 2 workers vs 1: %sx (goal >= 1.7x): %s\n" "$ratio" "$met"
  cr=$(for r in $(seq 1 "$rounds"); do awk -v a="$(cmetric "$out/c$grid-p2-$r.txt")" -v b="$(cmetric "$out/c$grid-p1-$r.txt")" 'BEGIN { printf "%.3f\n", a / b }'; done | median)
  awk -v c="$cr" -v r="$ratio" 'BEGIN {
    printf "the branches computation alone, 2 processes vs 1 (median of the rounds): %.2fx: the workers reach %.0f%% of what these cores give it\n", c, 100 * r / c }'
  echo
done
