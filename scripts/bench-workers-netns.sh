#!/usr/bin/env bash
# Deliberation branches on `ducklm worker` processes that run as separate
# hosts: PostgreSQL, the searching process and each worker each in a
# network namespace of their own, the clients reaching PostgreSQL over a
# veth pair each (10.215.N.0/30 links made here, for this script only). A
# 2,000-branch round on 1 worker and on 2, interleaved ROUNDS times (3), each
# on a fresh database; prints every run, the medians and the speed-up, and
# checks that every round found what the same round (a SQLite copy of its
# parent, the same ids and so the same seeds) finds in one process.
#
# Needs root (ip netns, veth) and Debian's postgresql; not part of make
# test (CI may lack the capability). Everything it makes is removed at exit.
#   sudo scripts/bench-workers-netns.sh
#   ROUNDS=1 DUCKLM_BENCH_BUDGET=600 scripts/bench-workers-netns.sh
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
rounds=${ROUNDS:-3}
[ "$(id -u)" = 0 ] || { echo "bench-workers-netns: run as root (network namespaces and veth pairs need it)" >&2; exit 1; }
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)
[ -x "$pgbin/postgres" ] || { echo "bench-workers-netns: Debian's postgresql is not installed (apt-get install postgresql)" >&2; exit 1; }
id postgres >/dev/null 2>&1 || { echo "bench-workers-netns: there is no postgres user to run PostgreSQL as" >&2; exit 1; }

tag="dk$$"                       # namespace and link names of this run
out=$(mktemp -d /tmp/ducklm-netns-XXXXXX)
chmod 755 "$out"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  [ -f "$out/pg/data/postmaster.pid" ] && su postgres -s /bin/sh -c "$pgbin/pg_ctl -D $out/pg/data -m immediate stop" >/dev/null 2>&1 || true
  for ns in db q w1 w2; do ip netns del "$tag-$ns" 2>/dev/null || true; done
  rm -rf "$out"
}
trap cleanup EXIT

echo "building ducklm and the benchmark"
go build -tags webkit2_41 -o "$out/ducklm" . || { echo "bench-workers-netns: ducklm does not build here (it needs WebKitGTK 4.1, which make deps installs)" >&2; exit 1; }
go test -c -o "$out/river.test" ./backend/river/

# PostgreSQL's namespace, and one link from it to each client's namespace.
ip netns add "$tag-db"
ip -n "$tag-db" link set lo up
i=0
for ns in q w1 w2; do
  i=$((i + 1))
  ip netns add "$tag-$ns"
  ip -n "$tag-$ns" link set lo up
  ip link add "$tag-$ns-a" netns "$tag-db" type veth peer name "$tag-$ns-b" netns "$tag-$ns"
  ip -n "$tag-db" addr add "10.215.$i.1/30" dev "$tag-$ns-a"
  ip -n "$tag-$ns" addr add "10.215.$i.2/30" dev "$tag-$ns-b"
  ip -n "$tag-db" link set "$tag-$ns-a" up
  ip -n "$tag-$ns" link set "$tag-$ns-b" up
done
# Each client sees PostgreSQL at its own link's far end (a host of its own).
dbaddr() { case $1 in q) echo 10.215.1.1 ;; w1) echo 10.215.2.1 ;; w2) echo 10.215.3.1 ;; esac; }

mkdir -p "$out/pg" && chown postgres "$out/pg"
su postgres -s /bin/sh -c "$pgbin/initdb -D $out/pg/data -U postgres --auth=trust --encoding=UTF8 --locale=C --no-sync" >"$out/initdb.log" 2>&1
echo "host all all 10.215.0.0/16 trust" >>"$out/pg/data/pg_hba.conf"
# As the tests' throw-away cluster (backend/store/postgres/pgtest): durability is
# not measured here.
ip netns exec "$tag-db" su postgres -s /bin/sh -c "exec $pgbin/postgres -D $out/pg/data -p 5432 \
  -c listen_addresses=10.215.1.1,10.215.2.1,10.215.3.1 -c unix_socket_directories=$out/pg \
  -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200 -c shared_buffers=32MB" \
  >"$out/pg/postgres.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 300); do
  ip netns exec "$tag-q" "$pgbin/pg_isready" -q -h 10.215.1.1 -p 5432 && break
  sleep 0.2
done
psql() { ip netns exec "$tag-q" "$pgbin/psql" -X -q -h 10.215.1.1 -p 5432 -U postgres "$@"; }
# Each client reaches PostgreSQL over its own link, and only there: its
# namespace has nothing else (no route to the others' links).
for ns in q w1 w2; do
  ip netns exec "$tag-$ns" "$pgbin/psql" -X -q -h "$(dbaddr "$ns")" -p 5432 -U postgres -d postgres -c "select 1" >/dev/null \
    || { echo "bench-workers-netns: $ns cannot reach PostgreSQL over its veth link" >&2; cat "$out/pg/postgres.log" >&2; exit 1; }
done
if ip netns exec "$tag-w1" "$pgbin/psql" -X -q -h "$(dbaddr w2)" -p 5432 -U postgres -d postgres -c "select 1" >/dev/null 2>&1; then
  echo "bench-workers-netns: w1 reached w2's link: the namespaces are not separate" >&2; exit 1
fi
echo "PostgreSQL in namespace $tag-db; the searcher and each worker in their own, each over its own veth pair"

metric() { awk -v unit="$2" '/^BenchmarkBranchesOnWorkers/ { for (i = 2; i < NF; i++) if ($(i+1) == unit) print $i }' "$1" | head -n1; }
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print "n/a"; else if (NR % 2) print a[(NR + 1) / 2]; else printf "%.4g\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

run() { # workers round
  local w=$1 r=$2 db="bench_w$1_r$2" wp=()
  psql -d postgres -c "CREATE DATABASE $db TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'"
  for k in $(seq 1 "$w"); do
    mkdir -p "$out/home-w$k-$r"
    ip netns exec "$tag-w$k" env DUCKLM_HOME="$out/home-w$k-$r" OLLAMA_HOST=127.0.0.1:1 \
      DUCKLM_DATABASE_URL="postgres://postgres@$(dbaddr "w$k"):5432/$db?sslmode=disable" \
      "$out/ducklm" worker --slots 1 >"$out/worker-w$k-$r.log" 2>&1 &
    wp+=($!); pids+=($!)
  done
  loads+=("$(cut -d' ' -f1 /proc/loadavg)")
  (cd backend/river && ip netns exec "$tag-q" env OLLAMA_HOST=127.0.0.1:1 DUCKLM_BENCH_EXTERNAL_WORKERS="$w" DUCKLM_BENCH_PARENT="$out" \
    DUCKLM_BENCH_WORKERS_URL="postgres://postgres@10.215.1.1:5432/$db?sslmode=disable" DUCKLM_BENCH_RESULT="$out/results.txt" \
    "$out/river.test" -test.run '^$' -test.bench "^BenchmarkBranchesOnWorkers/workers=$w\$" -test.benchtime 1x -test.count 1 \
    -test.timeout 30m) >"$out/w$w-$r.txt" 2>&1 || { cat "$out/w$w-$r.txt" >&2; exit 1; }
  for p in "${wp[@]}"; do kill -TERM "$p"; wait "$p" || true; done
  printf "round %d, %d worker(s) in their own namespaces: %s branches/s (%s branches; load %s)\n" "$r" "$w" \
    "$(metric "$out/w$w-$r.txt" branches/s)" "$(metric "$out/w$w-$r.txt" branches/round)" "${loads[-1]}"
}
loads=()
for r in $(seq 1 "$rounds"); do run 1 "$r"; run 2 "$r"; done

med() { for r in $(seq 1 "$rounds"); do metric "$out/w$1-$r.txt" "$2"; done | median; }
w1=$(med 1 branches/s); w2=$(med 2 branches/s)
ratio=$(awk -v a="$w2" -v b="$w1" 'BEGIN { printf "%.2f", a / b }')
echo
echo "== workers in separate network namespaces over veth pairs: medians of $rounds interleaved runs (load at each start: ${loads[*]}; $(nproc) cores)"
printf "| %-24s | %12s | %12s |\n" "measure" "1 worker" "2 workers"
printf "| %-24s | %12s | %12s |\n" "----" "----" "----"
for u in branches/s branches/round pg-cpu-ms/branch commits/branch commits/s rows/branch wal-B/branch ledger-lock-waiters; do
  printf "| %-24s | %12s | %12s |\n" "$u" "$(med 1 "$u")" "$(med 2 "$u")"
done
printf "\nspeed-up, 2 workers vs 1: %sx (goal >= 1.7x): %s\n" "$ratio" "$(awk -v r="$ratio" 'BEGIN { print (r >= 1.7) ? "yes" : "NO" }')"
# Each run also searched a SQLite copy of its parent (same ids, so the same
# seeds) in one process; the workers' round must have found exactly that.
same=yes
while read -r line; do
  echo "$line"
  w=${line#* on-workers: }; w=${w% | in-process: *}; p=${line##* | in-process: }
  [ "$w" = "$p" ] || same=NO
done <"$out/results.txt"
echo "every round on workers in namespaces found what the same round finds in one process: $same"
[ "$same" = yes ]
