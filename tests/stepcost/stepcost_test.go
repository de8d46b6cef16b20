// Package stepcost_test counts what a task run's step costs a data
// directory, exactly: the durable syncs of its files (fsync and fdatasync
// system calls on the database, its write-ahead log and the blobs, counted
// by strace) and the bytes the directory grows by. Each run happens in a
// child process (this test binary) that opens the data directory as ducklm
// does (service.OpenWith: store, ledger, blobs, memory, critic, tools),
// runs one explicit plan to its end and closes.
package stepcost_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/bwrap"
	"ducklm/backend/prereq"
	"ducklm/backend/runtime"
	"ducklm/backend/service"
)

const (
	childDirEnv   = "DUCKLM_STEPCOST_DIR"
	childToolEnv  = "DUCKLM_STEPCOST_TOOL"
	childStepsEnv = "DUCKLM_STEPCOST_STEPS"
	noOllama      = "127.0.0.1:1" // the plans are explicit: no model is needed
)

// TestMain runs this binary as a child when childDirEnv names its data
// directory, and as the tests otherwise.
func TestMain(m *testing.M) {
	if dir := os.Getenv(childDirEnv); dir != "" {
		n, err := strconv.Atoi(os.Getenv(childStepsEnv))
		if err != nil {
			fmt.Fprintln(os.Stderr, "child: steps:", err)
			os.Exit(3)
		}
		if err := runChild(dir, os.Getenv(childToolEnv), n); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(3)
		}
		return
	}
	os.Exit(m.Run())
}

// chain is n steps of tool, each after the one before: file_read reads
// the same small file, file_write replaces one.
func chain(tool string, n int) *backend.TaskGraph {
	g := &backend.TaskGraph{}
	for i := 0; i < n; i++ {
		args := json.RawMessage(`{"path":"f.txt"}`)
		if tool == "file_write" {
			args = json.RawMessage(fmt.Sprintf(`{"path":"out.txt","content":"step %d\n"}`, i))
		}
		node := backend.TaskNode{ID: fmt.Sprintf("s%d", i), Kind: backend.KindToolStep, Tool: tool, Args: args, DependsOn: []string{}}
		if i > 0 {
			node.DependsOn = []string{fmt.Sprintf("s%d", i-1)}
		}
		g.Nodes = append(g.Nodes, node)
	}
	return g
}

// runChild opens dir, runs a chain of n steps of tool (none: only opens
// and closes) and closes.
func runChild(dir, tool string, n int) error {
	ctx := context.Background()
	lock, err := service.AcquireLock(dir)
	if err != nil {
		return err
	}
	defer lock.Release()
	svc, err := service.OpenWith(ctx, dir, service.Options{OllamaHost: noOllama})
	if err != nil {
		return err
	}
	defer svc.Close()
	if _, err := svc.StartRuntime(ctx); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	// The store's own count of the write transactions it committed, synced
	// and deferred, when the run has ended.
	defer func() {
		synced, deferred := svc.DB.Commits()
		fmt.Printf("commits synced %d deferred %d flushed %d\n", synced, deferred, svc.DB.Flushes())
	}()
	return runChain(ctx, svc, filepath.Join(dir, "..", "ws"), tool, n)
}

// runChain runs a chain of n steps of tool in workspace ws on svc, to its
// end: an error unless it completed.
func runChain(ctx context.Context, svc *service.Service, ws, tool string, n int) error {
	run, err := svc.Runtime.Submit(ctx, runtime.TaskRequest{Task: "step cost", Plan: chain(tool, n), Workspace: ws,
		ApprovalMode: runtime.AutoSandboxed, MaxSteps: n, MaxPlanSteps: n, Concurrency: 1})
	if err != nil {
		return err
	}
	for {
		if err := svc.Runtime.Wait(ctx, run.ID); err != nil {
			return err
		}
		st, _, err := svc.Runtime.Load(ctx, run.ID)
		if err != nil {
			return err
		}
		if st.Status.Terminal() || st.Status == backend.RunAwaitingApproval {
			if st.Status != backend.RunCompleted {
				return fmt.Errorf("the run ended %s: %s", st.Status, st.StatusReason)
			}
			return nil
		}
		time.Sleep(time.Millisecond)
	}
}

// child runs one child on a fresh data directory under root, under strace
// when trace is set, and returns the data directory and the child's output.
func child(t *testing.T, root, tool string, n int, trace string) (dir string, out string) {
	t.Helper()
	dir = filepath.Join(root, fmt.Sprintf("%s-%d", tool, n), "data")
	ws := filepath.Join(dir, "..", "ws")
	require.NoError(t, os.MkdirAll(ws, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "f.txt"), []byte("hello\n"), 0o600))
	self, err := os.Executable()
	require.NoError(t, err)
	args := []string{self, "-test.run=^$"}
	if trace != "" {
		args = append([]string{"strace", "-f", "--seccomp-bpf", "-y", "-qq", "-e", "trace=fsync,fdatasync,sync_file_range,syncfs", "-o", trace}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), childDirEnv+"="+dir, childToolEnv+"="+tool, childStepsEnv+"="+strconv.Itoa(n),
		"DUCKLM_HOME="+dir)
	output, err := cmd.CombinedOutput()
	require.NoError(t, err, "child %s × %d: %s", tool, n, output)
	return dir, string(output)
}

// commitsLine is what a child prints of its store's commits.
var commitsLine = regexp.MustCompile(`commits synced (\d+) deferred (\d+) flushed (\d+)`)

// commitsOf reads a child's count of synced and deferred commits, and of
// the synced ones that were flushes.
func commitsOf(t *testing.T, out string) (synced, deferred, flushed int) {
	t.Helper()
	m := commitsLine.FindStringSubmatch(out)
	require.NotNil(t, m, "the child printed its commits: %s", out)
	synced, _ = strconv.Atoi(m[1])
	deferred, _ = strconv.Atoi(m[2])
	flushed, _ = strconv.Atoi(m[3])
	return synced, deferred, flushed
}

// syncLine is one traced sync of a file: the call, and the file's path
// (strace -y).
var syncLine = regexp.MustCompile(`(fsync|fdatasync|sync_file_range|syncfs)\(\d+<([^>]*)>`)

// syncs are the traced syncs of the files inside a data directory.
type syncs struct {
	log, db, other int // the write-ahead log's, the database file's, the rest (blobs, folders)
}

func (s syncs) total() int { return s.log + s.db + s.other }

// dataSyncs counts the traced syncs of files inside dir.
func dataSyncs(t *testing.T, trace, dir string) syncs {
	t.Helper()
	f, err := os.Open(trace)
	require.NoError(t, err)
	defer f.Close()
	real, err := filepath.EvalSymlinks(dir)
	require.NoError(t, err)
	var s syncs
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := syncLine.FindStringSubmatch(sc.Text())
		if m == nil || (m[2] != real && !strings.HasPrefix(m[2], real+"/")) {
			continue
		}
		switch filepath.Base(m[2]) {
		case "ducklm.db-wal":
			s.log++
		case "ducklm.db":
			s.db++
		default:
			s.other++
		}
	}
	require.NoError(t, sc.Err())
	return s
}

// dirBytes is the size of every file under dir.
func dirBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var total int64
	require.NoError(t, filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			total += info.Size()
		}
		return err
	}))
	return total
}

// syncsPerStep is the marginal durable syncs of a step of tool: the
// difference between a run of long and one of short steps, each counted
// whole, over the steps between. A commit syncs the log once; a checkpoint
// of the log into the database syncs the log and then the database; a
// run's state (a checkpoint base) is a blob, synced with its folder. It
// also returns, per step and as the store counted them, the synced commits
// of the steps themselves and the flushes: the synced commits of a
// deferred result that no step's commit covered within the run's grace
// (runtime/flush.go), which a loaded machine makes now and then.
func syncsPerStep(t *testing.T, tool string, short, long int) (total, commits, flushes float64) {
	t.Helper()
	root := t.TempDir()
	type counted struct {
		s                         syncs
		synced, deferred, flushed int
	}
	count := func(n int) counted {
		trace := filepath.Join(root, fmt.Sprintf("trace-%s-%d", tool, n))
		dir, out := child(t, root, tool, n, trace)
		c := counted{s: dataSyncs(t, trace, dir)}
		c.synced, c.deferred, c.flushed = commitsOf(t, out)
		return c
	}
	a, b := count(short), count(long)
	steps := float64(long - short)
	total = float64(b.s.total()-a.s.total()) / steps
	commits = float64((b.synced-b.flushed)-(a.synced-a.flushed)) / steps
	flushes = float64(b.flushed-a.flushed) / steps
	t.Logf("%s: %d syncs for %d steps, %d for %d: %.3f syncs per step, of which %.3f commits' (the steps' own) and %.3f flushes' (the store's count: %d and %d synced, "+
		"of them %d and %d flushes; %d and %d deferred; the rest: log checkpoints %d and %d, blobs and folders %d and %d)",
		tool, a.s.total(), short, b.s.total(), long, total, commits, flushes, a.synced, b.synced, a.flushed, b.flushed, a.deferred, b.deferred,
		a.s.db, b.s.db, a.s.other, b.s.other)
	return total, commits, flushes
}

// maintenance bounds the syncs a step adds beyond its commits': copying
// the log into the database (two syncs every 10,000 pages of log) and the
// run's state written as a blob now and then (checkpoint bases).
const maintenance = 0.02

// atMost says whether v rounds to goal or less at two decimals, as the
// bench prints it.
func atMost(v, goal float64) bool { return math.Round(v*100) <= math.Round(goal*100) }

func needStrace(t *testing.T) {
	if _, err := exec.LookPath("strace"); err != nil {
		prereq.Missing(t, "counting syncs needs strace: %v", err)
	}
	if err := exec.Command("strace", "-qq", "-o", "/dev/null", "true").Run(); err != nil {
		prereq.Missing(t, "strace cannot trace here: %v", err)
	}
}

// TestSyncsPerReadOnlyStep: a step safe to repeat (file_read) needs one
// durable sync, its result's; its start is not synced.
func TestSyncsPerReadOnlyStep(t *testing.T) {
	needStrace(t)
	total, commits, flushes := syncsPerStep(t, "file_read", 20, 520)
	require.True(t, atMost(commits, 1.0), "%.3f commit syncs per read-only step, more than 1", commits)
	require.Zero(t, flushes, "a read defers no result, so nothing is flushed")
	require.True(t, atMost(total, 1.1), "%.3f syncs per read-only step, more than 1.1", total)
}

// TestSyncsPerEffectfulStep: a step whose effect must happen once
// (file_write) syncs its start before the effect. Its result commits
// without a sync of its own: the next step's start, synced a moment later,
// makes it durable too (runtime/flush.go). So a chain of them syncs once a
// step, as reads do, and commits twice.
//
// When the next start comes later than the grace after a result (20 ms: a
// loaded machine, strace's own cost), the result is flushed alone: the
// steps' own commits stay at one sync each, exactly, and the flushes are
// bounded loosely, as a timer's count on a shared machine must be (CI read
// 0.010 a step once; a quiet machine reads 0). A flush after every step
// would read 1.0.
func TestSyncsPerEffectfulStep(t *testing.T) {
	needStrace(t)
	if _, ok, why := bwrap.Available(); !ok {
		prereq.Missing(t, "file_write steps must run without asking, which needs the sandbox: %s", why)
	}
	total, commits, flushes := syncsPerStep(t, "file_write", 20, 520)
	require.True(t, atMost(commits, 1.0), "%.3f commit syncs per effectful step, more than 1", commits)
	require.LessOrEqual(t, flushes, 0.1, "a result was flushed alone after %.0f%% of the steps: the next start should cover it", flushes*100)
	require.True(t, atMost(total, 1.0+flushes+maintenance), "%.3f syncs per effectful step, more than 1, %.3f of flushes and %.2f of upkeep",
		total, flushes, maintenance)
}

// bytesNow is what a trivial step adds to the data directory today, with a
// few percent for page splits that follow the clock: the test keeps it
// from growing. Measured: 3,790 before issue 28's second round; 2,320 once
// a step's result carried its critique, checkpoint and memory decision and
// memory.decided said each thing once; then the task's request stored
// once (no spec program blob): 2,226; then payloads of 128 B or more
// stored as zstd frames with ducklm's dictionary on SQLite: 1,252. Issue
// 28's goal is 1,600 B; make bench prints the measure against it
// (docs/checkpoints.md says what is left).
const bytesNow = 1300

// TestBytesPerTrivialStep: what a 1,000-step chain of trivial steps adds
// to the whole data directory (database, blobs, memory index), per step,
// against a data directory opened and closed with no run.
func TestBytesPerTrivialStep(t *testing.T) {
	root := t.TempDir()
	emptyDir, _ := child(t, root, "file_read", 0, "")
	fullDir, _ := child(t, root, "file_read", 1000, "")
	empty, full := dirBytes(t, emptyDir), dirBytes(t, fullDir)
	per := float64(full-empty) / 1000
	t.Logf("data directory: %d bytes opened empty, %d after 1,000 steps: %.0f bytes per step", empty, full, per)
	require.LessOrEqual(t, per, float64(bytesNow), "bytes per trivial step grew (issue 28's goal is 1,600)")
}
