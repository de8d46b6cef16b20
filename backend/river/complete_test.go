package river

import (
	"context"
	"database/sql"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	rv "github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/store/postgres/pgtest"
	"ducklm/backend/world"
)

// A job completed inside the ledger's transaction is completed only for the
// attempt that runs it: another attempt's completion is refused with a
// sentence and changes nothing; this attempt's records the output (one JSON
// string the queue reads back), finalizes the job and announces it at the
// commit.
func TestCompleteInLedgerCompletesOnlyThisAttempt(t *testing.T) {
	url := pgtest.URL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pool, err := connect(ctx, url)
	require.NoError(t, err)
	defer pool.Close()
	client, err := rv.NewClient(riverpgxv5.New(pool), &rv.Config{})
	require.NoError(t, err)
	ins, err := client.Insert(ctx, BranchesArgs{}, nil)
	require.NoError(t, err)
	id := ins.Job.ID
	// As River's fetch leaves it: running, its first attempt.
	_, err = pool.Exec(ctx, "UPDATE river_job SET state = 'running', attempt = 1, attempted_at = now() WHERE id = $1", id)
	require.NoError(t, err)
	job, err := client.JobGet(ctx, id)
	require.NoError(t, err)

	listener, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer listener.Close(context.Background())
	_, err = listener.Exec(ctx, "LISTEN "+DoneChannel)
	require.NoError(t, err)

	db, err := sql.Open("pgx", url)
	require.NoError(t, err)
	defer db.Close()
	out := []world.BranchResult{{Digest: "sha256:ab", Steps: 1, Score: -3, HasScore: true, Next: []json.RawMessage{json.RawMessage(`"N"`)}}}

	other := *job
	other.Attempt = 2 // the job was given to another worker meanwhile
	tx, err := db.BeginTx(ctx, nil)
	require.NoError(t, err)
	err = completeInLedger(ctx, tx, &other, branchesOutput(out))
	require.Equal(t, backend.ECONFLICT, backend.ErrorCode(err))
	require.ErrorContains(t, err, "no longer running on this worker")
	require.NoError(t, tx.Rollback())
	row, err := client.JobGet(ctx, id)
	require.NoError(t, err)
	require.Equal(t, rivertype.JobStateRunning, row.State)

	tx, err = db.BeginTx(ctx, nil)
	require.NoError(t, err)
	require.NoError(t, completeInLedger(ctx, tx, job, branchesOutput(out)))
	require.NoError(t, tx.Commit())
	row, err = client.JobGet(ctx, id)
	require.NoError(t, err)
	require.Equal(t, rivertype.JobStateCompleted, row.State)
	require.NotNil(t, row.FinalizedAt)
	require.Equal(t, byte('"'), row.Output()[0], "the output is one JSON string")
	got, err := readBranchesOutput(row.Output())
	require.NoError(t, err)
	sameJSON(t, out, got)
	n, err := listener.WaitForNotification(ctx)
	require.NoError(t, err)
	require.Equal(t, strconv.FormatInt(id, 10), n.Payload, "announced at the commit")

	// Outputs written before, as the results themselves, still read.
	legacy, err := json.Marshal(out)
	require.NoError(t, err)
	got, err = readBranchesOutput(legacy)
	require.NoError(t, err)
	sameJSON(t, out, got)
}

// sameJSON checks that two results say the same once written (a result
// read back has null where the written one had nothing).
func sameJSON(t *testing.T, want, got []world.BranchResult) {
	t.Helper()
	w, err := json.Marshal(want)
	require.NoError(t, err)
	g, err := json.Marshal(got)
	require.NoError(t, err)
	require.JSONEq(t, string(w), string(g))
}
