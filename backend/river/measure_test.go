package river_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
)

// measures are the counters the benchmark reads before and after a round.
type measures struct {
	workerCPU, pgCPU, selfCPU time.Duration
	commits, rows, wal        int64
}

func (m measures) sub(o measures) measures {
	return measures{m.workerCPU - o.workerCPU, m.pgCPU - o.pgCPU, m.selfCPU - o.selfCPU,
		m.commits - o.commits, m.rows - o.rows, m.wal - o.wal}
}

func (m measures) add(o measures) measures {
	return measures{m.workerCPU + o.workerCPU, m.pgCPU + o.pgCPU, m.selfCPU + o.selfCPU,
		m.commits + o.commits, m.rows + o.rows, m.wal + o.wal}
}

// measure reads the CPU of the worker processes' trees, of the PostgreSQL
// server's tree and of this process's world workers, and the database's
// commits, rows written and WAL position. This process's own CPU is read
// apart (ownCPU), right around the round: measure's scans of /proc are the
// benchmark's cost, not the searching process's.
func measure(t testing.TB, ctx context.Context, pool *pgxpool.Pool, workers []int) measures {
	t.Helper()
	var m measures
	for _, pid := range workers {
		m.workerCPU += treeCPU(pid)
	}
	var backendPID int
	require.NoError(t, pool.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&backendPID))
	if st, ok := readStat(backendPID); ok {
		m.pgCPU = treeCPU(st.ppid) // the postmaster, its children, those it reaped
	}
	for _, pid := range children(os.Getpid()) {
		if !contains(workers, pid) && !strings.HasSuffix(comm(pid), "postgres") {
			m.selfCPU += treeCPU(pid) // this process's world workers
		}
	}
	var lsn string
	require.NoError(t, pool.QueryRow(ctx, `SELECT xact_commit, tup_inserted + tup_updated + tup_deleted, pg_current_wal_lsn()::text
		FROM pg_stat_database WHERE datname = current_database()`).Scan(&m.commits, &m.rows, &lsn))
	m.wal = lsnBytes(lsn)
	return m
}

func comm(pid int) string {
	b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "comm"))
	return strings.TrimSpace(string(b))
}

func contains(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func lsnBytes(lsn string) int64 {
	hi, lo, _ := strings.Cut(lsn, "/")
	h, _ := strconv.ParseInt(hi, 16, 64)
	l, _ := strconv.ParseInt(lo, 16, 64)
	return h<<32 | l
}

type stat struct {
	ppid int
	cpu  time.Duration // utime + stime + cutime + cstime
}

const clockTick = 100 // USER_HZ, 100 on Linux

func readStat(pid int) (stat, bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return stat{}, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return stat{}, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 15 {
		return stat{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	var ticks int64
	for _, k := range []int{11, 12, 13, 14} { // utime stime cutime cstime
		n, _ := strconv.ParseInt(f[k], 10, 64)
		ticks += n
	}
	return stat{ppid: ppid, cpu: time.Duration(ticks) * time.Second / time.Duration(clockTick)}, true
}

func children(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := readStat(p); ok && st.ppid == pid {
			out = append(out, p)
		}
	}
	return out
}

// treeCPU is the CPU of pid and every live descendant, with what each
// reaped of its children.
func treeCPU(pid int) time.Duration {
	st, ok := readStat(pid)
	if !ok {
		return 0
	}
	total := st.cpu
	for _, c := range children(pid) {
		total += treeCPU(c)
	}
	return total
}

// sampleLockWaits counts, every 250 ms until stopped
// (DUCKLM_BENCH_LOCK_SAMPLE_MS), the sessions of this database waiting for
// an advisory lock (the ledger's: every append takes it); stop returns the waiters summed over the samples and the samples.
// Their mean is how many workers stand in line for the ledger at a time.
// (Every 5 ms, its own queries were ~4 % of PostgreSQL's time in a round.)
func sampleLockWaits(ctx context.Context, pool *pgxpool.Pool) (stop func() (waiting, samples int)) {
	done := make(chan struct{})
	var waiting, samples int
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		every := 250 * time.Millisecond
		if ms := envInt("DUCKLM_BENCH_LOCK_SAMPLE_MS", 0); ms > 0 {
			every = time.Duration(ms) * time.Millisecond
		}
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			var n int
			if pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
				AND wait_event_type = 'Lock' AND wait_event = 'advisory'`).Scan(&n) == nil {
				waiting += n
				samples++
			}
		}
	}()
	return func() (int, int) {
		close(done)
		<-finished
		return waiting, samples
	}
}

// ownCPU is the CPU this process has used.
func ownCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
