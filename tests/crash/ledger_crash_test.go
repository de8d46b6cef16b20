// Package crash kills processes that write to the ledger at random moments
// and checks that nothing acknowledged is ever lost.
package crash_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/store"
)

const childEnv = "DUCKLM_CRASH_CHILD_DB"

// TestMain runs this binary as one of the crash tests' children when its
// variable names what it works on, and as the tests otherwise.
func TestMain(m *testing.M) {
	if path := os.Getenv(childEnv); path != "" {
		appendForever(path)
		return
	}
	for env, child := range map[string]func(dir string){
		runtimeChildEnv:      runtimeCrashChild,
		worldChildEnv:        worldRunCrashChild,
		deliberationChildEnv: deliberationCrashChild,
	} {
		if dir := os.Getenv(env); dir != "" {
			child(dir)
			return
		}
	}
	os.Exit(m.Run())
}

// appendForever is the child: it appends single events and batches to a few
// streams and prints "ack <stream> <seq> <id>" for every event once Append
// has returned, i.e. once the ledger acknowledged it as durable.
func appendForever(path string) {
	ctx := context.Background()
	db, err := store.Open(ctx, path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	l := store.NewLedger(db)
	streams := []string{backend.NewID(backend.KindRun), backend.NewID(backend.KindRun), backend.NewID(backend.KindRun)}
	out := bufio.NewWriter(os.Stdout)
	for i := 0; ; i++ {
		n := 1
		if i%3 == 0 {
			n = 1 + rand.IntN(200)
		}
		events := make([]backend.Event, n)
		for j := range events {
			events[j] = backend.Event{Type: "tick", Payload: []byte(fmt.Sprintf(`{"i":%d,"j":%d}`, i, j)), Reality: backend.ExternalReal}
		}
		stored, err := l.Append(ctx, streams[i%len(streams)], backend.ExpectAny, events...)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(4)
		}
		for _, e := range stored {
			fmt.Fprintf(out, "ack %s %d %s\n", e.Stream, e.Seq, e.ID)
		}
		out.Flush()
	}
}

type ack struct {
	stream string
	seq    int64
	id     string
}

func TestKilledAppenderLosesNothingAcknowledged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ducklm.db")
	self, err := os.Executable()
	require.NoError(t, err)
	const trials = 24
	var acked []ack
	for trial := 0; trial < trials; trial++ {
		cmd := exec.Command(self, "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+path)
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		require.NoError(t, cmd.Start())

		var pending []string
		lines := make(chan string, 4096)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		// Kill at a random moment after the child has started appending.
		kill := time.After(time.Duration(30+rand.IntN(400)) * time.Millisecond)
		killed := false
		for !killed {
			select {
			case <-kill:
				require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
				killed = true
			case line, ok := <-lines:
				if !ok {
					t.Fatalf("trial %d: child exited on its own: %s", trial, stderr.String())
				}
				pending = append(pending, line)
			}
		}
		for line := range lines { // what was printed before the kill landed
			pending = append(pending, line)
		}
		// The kill may cut the last line in half; a half-printed line was
		// never an acknowledgement the test could rely on.
		for i, line := range pending {
			a, ok := parseAck(line)
			require.True(t, ok || i == len(pending)-1, "trial %d: malformed line %q", trial, line)
			if ok {
				acked = append(acked, a)
			}
		}
		err = cmd.Wait()
		require.Error(t, err, "child was killed")
		verify(t, path, acked, trial)
	}
	require.NotEmpty(t, acked)
	t.Logf("%d trials, %d acknowledged events, all present", trials, len(acked))
}

func parseAck(line string) (ack, bool) {
	f := strings.Fields(line)
	if len(f) != 4 || f[0] != "ack" || backend.CheckID(f[3], backend.KindEvent) != nil {
		return ack{}, false
	}
	seq, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil {
		return ack{}, false
	}
	return ack{stream: f[1], seq: seq, id: f[3]}, true
}

func verify(t *testing.T, path string, acked []ack, trial int) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, path)
	require.NoError(t, err, "trial %d: the database reopens", trial)
	defer db.Close()

	var integrity string
	require.NoError(t, db.SQL.QueryRow("PRAGMA integrity_check").Scan(&integrity))
	require.Equal(t, "ok", integrity, "trial %d", trial)

	l := store.NewLedger(db)
	byStream := map[string]map[int64]string{}
	rows, err := db.SQL.Query("SELECT stream_id, seq, id FROM events")
	require.NoError(t, err)
	for rows.Next() {
		var s, id string
		var seq int64
		require.NoError(t, rows.Scan(&s, &seq, &id))
		if byStream[s] == nil {
			byStream[s] = map[int64]string{}
		}
		byStream[s][seq] = id
	}
	require.NoError(t, rows.Err())
	rows.Close()

	for s, seqs := range byStream {
		head, err := l.Head(ctx, s)
		require.NoError(t, err)
		require.EqualValues(t, len(seqs), head, "trial %d: stream %s head matches its events", trial, s)
		for seq := int64(1); seq <= head; seq++ {
			_, ok := seqs[seq]
			require.True(t, ok, "trial %d: stream %s has a gap at seq %d", trial, s, seq)
		}
	}
	for _, a := range acked {
		require.Equal(t, a.id, byStream[a.stream][a.seq], "trial %d: acknowledged event %s (stream %s seq %d) is present", trial, a.id, a.stream, a.seq)
	}
}
