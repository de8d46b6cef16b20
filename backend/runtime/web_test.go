package runtime_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/bwrap"
	"ducklm/backend/router"
	"ducklm/backend/runtime"
)

// notesServer serves two article pages on loopback and counts requests.
func notesServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<html><head><title>Notes %[1]s</title></head><body><nav>Home | Log in</nav><article>
<p>The release notes at %[1]s say the fetch tool reads pages within time, size and redirect limits.</p>
<p>They also say the raw body is kept as a blob and the text is extracted by readability.</p>
<p>Each host is approved on its own, and private addresses need an approval of their own.</p></article></body></html>`, r.URL.Path)
	}))
	t.Cleanup(s.Close)
	return s, &hits
}

func fetchStep(id, url string, deps ...string) backend.TaskNode {
	args, _ := json.Marshal(map[string]string{"url": url})
	return backend.TaskNode{ID: id, Kind: backend.KindToolStep, Tool: "web_fetch", Args: args, DependsOn: deps}
}

func TestWebFetchAsksForItsHostAndAnApprovalCanAllowItForTheRun(t *testing.T) {
	t.Parallel()
	f := setup(t)
	srv, hits := notesServer(t)
	run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "summarise the release notes", ApprovalMode: runtime.AutoSandboxed,
		Plan: plan(fetchStep("notes", srv.URL+"/notes"), fetchStep("more", srv.URL+"/more", "notes"))})
	require.NoError(t, err)
	f.waitStatus(t, run.ID, backend.RunAwaitingApproval)
	approvals, err := f.rt.Approvals(f.ctx, run.ID)
	require.NoError(t, err)
	require.Len(t, approvals, 1)
	a := approvals[0]
	require.Equal(t, router.RuleWebPrivate, a.Rule, "the URL names a loopback address")
	require.True(t, a.Network)
	require.NotNil(t, a.Web)
	require.Equal(t, "127.0.0.1", a.Web.Host)
	require.Equal(t, "GET", a.Web.Method)
	require.Equal(t, "loopback", a.Web.Local)
	require.Equal(t, srv.URL+"/notes", a.Web.URL)
	require.Positive(t, a.Web.MaxBytes)
	require.Positive(t, a.Web.TimeoutMS)
	require.Zero(t, hits.Load(), "nothing is fetched before the approval")

	require.NoError(t, f.rt.Answer(f.ctx, run.ID, runtime.Answer{RequestID: a.RequestID, Approve: true, AllowHost: true, By: "test"}))
	st := f.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed)
	require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)
	require.Contains(t, st.Steps["notes"].Result.StdoutTail, "The release notes at /notes say the fetch tool reads pages")
	require.Contains(t, st.Steps["more"].Result.StdoutTail, "The release notes at /more say")
	require.Equal(t, int64(2), hits.Load())
	require.Equal(t, []string{"127.0.0.1"}, st.AllowedHosts)
	require.Equal(t, 1, count(f.events(t, run.ID), runtime.EvApprovalRequested), "the second page's host was allowed for the run")

	// Each start records what it was granted.
	for _, e := range f.events(t, run.ID) {
		if e.Type == runtime.EvStepStarted {
			var p struct {
				Hosts   []string `json:"hosts"`
				Private []string `json:"privateHosts"`
			}
			require.NoError(t, json.Unmarshal(e.Payload, &p))
			require.Equal(t, []string{"127.0.0.1"}, p.Hosts)
			require.Equal(t, []string{"127.0.0.1"}, p.Private)
		}
	}
	var out struct {
		Status   int              `json:"status"`
		FinalURL string           `json:"final_url"`
		Raw      *backend.BlobRef `json:"raw"`
	}
	require.NoError(t, json.Unmarshal(st.Steps["notes"].Result.Output, &out))
	require.Equal(t, 200, out.Status)
	require.NotNil(t, out.Raw)
	raw, err := f.blobs.Get(f.ctx, *out.Raw)
	require.NoError(t, err)
	require.Contains(t, string(raw), "<nav>Home | Log in</nav>", "the blob is the raw body")
}

func TestADeniedWebStepSendsNoRequest(t *testing.T) {
	t.Parallel()
	f := setup(t)
	srv, hits := notesServer(t)
	run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "read it", ApprovalMode: runtime.AutoSandboxed,
		Plan: plan(fetchStep("notes", srv.URL+"/notes"))})
	require.NoError(t, err)
	f.waitStatus(t, run.ID, backend.RunAwaitingApproval)
	approvals, err := f.rt.Approvals(f.ctx, run.ID)
	require.NoError(t, err)
	require.NoError(t, f.rt.Answer(f.ctx, run.ID, runtime.Answer{RequestID: approvals[0].RequestID, Approve: false, By: "test"}))
	st := f.waitStatus(t, run.ID, backend.RunFailed)
	require.True(t, st.Steps["notes"].Denied)
	require.Zero(t, hits.Load())
}

func TestAHostAllowedForTheRunIsFetchedWithoutAsking(t *testing.T) {
	t.Parallel()
	f := setup(t)
	srv, hits := notesServer(t)
	run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "read it", ApprovalMode: runtime.AutoSandboxed,
		AllowedHosts: []string{" 127.0.0.1 ", "127.0.0.1"}, Plan: plan(fetchStep("notes", srv.URL+"/notes"))})
	require.NoError(t, err)
	st := f.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed)
	require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)
	require.Equal(t, []string{"127.0.0.1"}, st.Request.AllowedHosts)
	require.Zero(t, count(f.events(t, run.ID), runtime.EvApprovalRequested))
	require.Equal(t, int64(1), hits.Load())

	_, err = f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "x", AllowedHosts: []string{"https://example.com/x"}})
	require.Equal(t, backend.EINVALID, backend.ErrorCode(err))
	require.Contains(t, err.Error(), "write only the host")
}

func TestAFetchedPageIsOfferedToMemoryWithItsURLAndTime(t *testing.T) {
	t.Parallel()
	spy := &memorySpy{}
	f := setup(t, func(d *runtime.Deps) { d.Memory = spy })
	srv, _ := notesServer(t)
	run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "read the notes", ApprovalMode: runtime.AutoSandboxed,
		AllowedHosts: []string{"127.0.0.1"}, Plan: plan(fetchStep("notes", srv.URL+"/notes"))})
	require.NoError(t, err)
	st := f.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed)
	require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)
	require.NoError(t, f.rt.Wait(f.ctx, run.ID))
	spy.mu.Lock()
	defer spy.mu.Unlock()
	require.Len(t, spy.seen, 1)
	c := spy.seen[0]
	require.Equal(t, srv.URL+"/notes", c.URL)
	require.False(t, c.ObservedAt.IsZero())
	require.WithinDuration(t, time.Now(), c.ObservedAt, 5*time.Minute)
	require.Contains(t, c.Text, "web_fetch: "+srv.URL+"/notes answered 200 at ")
	require.Contains(t, c.Text, "the fetch tool reads pages")
}

// A fetch's record says it ran in a web worker, and whether bubblewrap held
// the worker, as the approval card said before it ran. A fetch recorded
// before results said where ran in ducklm itself, and its record is read so.
func TestAFetchSaysItRanInAWebWorker(t *testing.T) {
	t.Parallel()
	f := setup(t)
	srv, hits := notesServer(t)
	run, err := f.rt.Submit(f.ctx, runtime.TaskRequest{Task: "read the notes", ApprovalMode: runtime.AskEvery,
		Plan: plan(fetchStep("notes", srv.URL+"/notes"))})
	require.NoError(t, err)
	f.waitStatus(t, run.ID, backend.RunAwaitingApproval)
	as, err := f.rt.Approvals(f.ctx, run.ID)
	require.NoError(t, err)
	require.Len(t, as, 1)
	require.Equal(t, backend.ConfinedWebWorker, as[0].Confinement)
	f.approveAll(t, run.ID)
	st := f.waitStatus(t, run.ID, backend.RunCompleted, backend.RunFailed)
	require.Equal(t, backend.RunCompleted, st.Status, st.StatusReason)
	require.Equal(t, int64(1), hits.Load())
	res := st.Steps["notes"].Result
	require.Equal(t, backend.ConfinedWebWorker, res.Confinement)
	_, sandboxed, _ := bwrap.Available()
	require.Equal(t, sandboxed, res.Sandboxed)

	res.Confinement = ""
	f.rt.NoteConfinement(st)
	require.Equal(t, backend.ConfinedHosts, res.Confinement, "before the web worker, ducklm fetched pages itself")
}
