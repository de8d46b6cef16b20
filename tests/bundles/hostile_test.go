package bundles_test

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/bundle"
	"ducklm/backend/cli"
	"ducklm/backend/service"
)

type result struct {
	stdout, stderr string
	code           int
}

func ducklm(args ...string) result {
	var out, errOut bytes.Buffer
	code := cli.Run(cli.Env{Ctx: context.Background(), Stdout: &out, Stderr: &errOut, Stdin: strings.NewReader("")}, args)
	return result{stdout: out.String(), stderr: errOut.String(), code: code}
}

// snapshot is what "untouched" compares: the database file's bytes, what it
// holds, and every file of the data directory and beside it.
func snapshot(t *testing.T, home string) map[string]string {
	t.Helper()
	out := map[string]string{}
	data, err := os.ReadFile(filepath.Join(home, "ducklm.db"))
	require.NoError(t, err)
	sum := sha256.Sum256(data)
	out["db sha256"] = hex.EncodeToString(sum[:])
	root := filepath.Dir(home)
	require.NoError(t, filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		name := d.Name()
		if strings.HasSuffix(name, "-wal") || strings.HasSuffix(name, "-shm") || name == "ducklm.lock" {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		out["file "+rel] = info.Mode().String()
		return nil
	}))
	svc, err := service.Open(context.Background(), home)
	require.NoError(t, err)
	defer svc.Close()
	for k, v := range dbState(t, svc) {
		out["rows "+k] = strconv.FormatInt(v, 10)
	}
	return out
}

// Every hostile bundle is refused by import (exit 1, a clear sentence,
// nothing written) and by verify (exit 1), except those that are sound but
// not acceptable here (unsigned, unknown signer, a conflict with what is
// stored), which verify reports and import refuses.
func TestHostileBundlesAreRefused(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	t.Setenv("DUCKLM_HOME", home)
	srcKey, ok, err := bundle.LoadKey(filepath.Join(src.dir, "home"))
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, os.MkdirAll(home, 0o700))
	require.NoError(t, os.WriteFile(bundle.TrustedKeysPath(home),
		[]byte("# the machine the tests export from\n"+bundle.FormatFingerprint(srcKey.Fingerprint())+"\n"), 0o600))
	r := ducklm("import", src.task)
	require.Equal(t, cli.ExitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "listed in trusted_keys")
	require.Contains(t, r.stdout, "added: ")

	base := unpack(t, src.childBundle)
	require.Equal(t, bundle.ManifestName, base[0].hdr.Name)
	require.Equal(t, bundle.SignatureName, base[1].hdr.Name)
	insert := func(a archive, at int, e entry) archive {
		return append(a[:at:at], append(archive{e}, a[at:]...)...)
	}
	reg := func(name string, data string) entry {
		return entry{hdr: tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644}, data: []byte(data)}
	}
	someBlob := base[base.find(t, "blobs/sha256/")].hdr.Name
	stranger, err := bundle.LoadOrCreateKey(t.TempDir())
	require.NoError(t, err)

	cases := []struct {
		name     string
		want     string
		verifyOK bool // the bundle is sound; only this installation refuses it
		file     func(t *testing.T) string
	}{
		{"truncated archive", "truncated", false, func(t *testing.T) string {
			data, err := os.ReadFile(src.childBundle)
			require.NoError(t, err)
			path := filepath.Join(t.TempDir(), "truncated.ducklm")
			require.NoError(t, os.WriteFile(path, data[:len(data)*2/3], 0o600))
			return path
		}},
		{"flipped byte in an event", "has been altered", false, func(t *testing.T) string {
			a := base.clone()
			e := &a[a.find(t, "events/")]
			at := bytes.Index(e.data, []byte(`"stateDigest":"sha256:`)) + len(`"stateDigest":"sha256:`)
			e.data[at] ^= 0x01
			return a.pack(t)
		}},
		{"blob whose digest lies", "a blob's name is its digest", false, func(t *testing.T) string {
			a := base.clone()
			a[a.find(t, "blobs/sha256/")].data = []byte("not the content the name promises")
			return a.reseal(t, &srcKey, nil).pack(t)
		}},
		{"manifest signature mismatch", "signature does not match the manifest", false, func(t *testing.T) string {
			a := base.clone()
			a[0].data = bytes.Replace(a[0].data, []byte(`"appVersion":"`), []byte(`"appVersion":"forged-`), 1)
			return a.pack(t)
		}},
		{"path traversal", "has a name no bundle uses", false, func(t *testing.T) string {
			return insert(base.clone(), 2, reg("../../evil.txt", "pwned")).pack(t)
		}},
		{"absolute path", "has a name no bundle uses", false, func(t *testing.T) string {
			return insert(base.clone(), 2, reg(filepath.Join(home, "evil.txt"), "pwned")).pack(t)
		}},
		{"nested folder in blobs", "has a name no bundle uses", false, func(t *testing.T) string {
			return insert(base.clone(), 2, reg("blobs/sha256/../../../evil.txt", "pwned")).pack(t)
		}},
		{"symlink entry", "is a symbolic link", false, func(t *testing.T) string {
			return insert(base.clone(), 2, entry{hdr: tar.Header{Typeflag: tar.TypeSymlink, Name: someBlob, Linkname: "/etc/passwd"}}).pack(t)
		}},
		{"hard link entry", "is a hard link", false, func(t *testing.T) string {
			return insert(base.clone(), 2, entry{hdr: tar.Header{Typeflag: tar.TypeLink, Name: someBlob, Linkname: "/etc/passwd"}}).pack(t)
		}},
		{"device entry", "is a device", false, func(t *testing.T) string {
			return insert(base.clone(), 2, entry{hdr: tar.Header{Typeflag: tar.TypeChar, Name: someBlob, Devmajor: 1, Devminor: 3}}).pack(t)
		}},
		{"lineage cycle", "cycle", false, func(t *testing.T) string {
			a := base.clone()
			e := &a[a.find(t, bundle.SpecsName)]
			ls := lines(e.data)
			require.Len(t, ls, 2)
			var root, child backend.WorldSpec
			require.NoError(t, json.Unmarshal(ls[0], &root))
			require.NoError(t, json.Unmarshal(ls[1], &child))
			root.ParentWorldID, root.ForkID = child.ID, child.ForkID
			ls[0], _ = json.Marshal(root)
			e.data = joinLines(ls)
			return a.reseal(t, &srcKey, nil).pack(t)
		}},
		{"seq gap", "jumps from seq 2 to seq 4", false, func(t *testing.T) string {
			a := base.clone()
			e := &a[a.find(t, "events/")]
			ls := lines(e.data)
			e.data = joinLines(append(ls[:2:2], ls[3:]...))
			return a.reseal(t, &srcKey, nil).pack(t)
		}},
		{"event of the wrong reality", "but its world's events are world_local", false, func(t *testing.T) string {
			a := base.clone()
			e := &a[a.find(t, "events/")]
			e.data = bytes.Replace(e.data, []byte(`"reality":"world_local"`), []byte(`"reality":"external_real"`), 1)
			return a.reseal(t, &srcKey, nil).pack(t)
		}},
		{"event id of another kind", "has an id that is not an event id", false, func(t *testing.T) string {
			a := base.clone()
			e := &a[a.find(t, "events/")]
			e.data = bytes.Replace(e.data, []byte(`"id":"evt_`), []byte(`"id":"run_`), 1)
			return a.reseal(t, &srcKey, nil).pack(t)
		}},
		{"dangling checkpoint", "neither in the bundle nor here", false, func(t *testing.T) string {
			a := base.clone()
			e := &a[a.find(t, bundle.CheckpointsName)]
			var cp backend.Checkpoint
			ls := lines(e.data)
			require.NoError(t, json.Unmarshal(ls[0], &cp))
			cp.RunID = backend.NewID(backend.KindRun)
			ls[0], _ = json.Marshal(cp)
			e.data = joinLines(ls)
			return a.reseal(t, &srcKey, nil).pack(t)
		}},
		{"oversized entry", "past the limit", false, func(t *testing.T) string {
			a := base.clone()[:2]
			return append(a, entry{hdr: tar.Header{Typeflag: tar.TypeReg, Name: bundle.SpecsName, Size: 300 << 20}, headerOnly: true}).pack(t)
		}},
		{"decompression bomb", "but the manifest says", false, func(t *testing.T) string {
			a := base.clone()
			i := a.find(t, "blobs/sha256/")
			a[i].hdr.Size, a[i].headerOnly = 8<<30, true
			return a[:i+1].pack(t)
		}},
		{"decompression bomb in a tar header", "decompression bomb", false, func(t *testing.T) string {
			a := base.clone()
			i := a.find(t, "events/")
			a[i].hdr.PAXRecords = map[string]string{"comment": strings.Repeat("0", 900<<10)}
			return a.pack(t)
		}},
		{"entry not in the manifest", "is not listed in the manifest", false, func(t *testing.T) string {
			sum := sha256.Sum256([]byte("x"))
			return append(base.clone(), reg("blobs/sha256/"+hex.EncodeToString(sum[:]), "x")).pack(t)
		}},
		{"newer format version", "format version 2", false, func(t *testing.T) string {
			return base.clone().reseal(t, &srcKey, func(m *bundle.Manifest) { m.FormatVersion = 2 }).pack(t)
		}},
		{"a task run still moving", "only finished task runs travel in bundles", false, func(t *testing.T) string {
			// Its events stop before its end (the record's status is not
			// read: the events say what the run is).
			a := unpack(t, src.task)
			e := &a[a.find(t, "events/")]
			ls := lines(e.data)
			end := slices.IndexFunc(ls, func(l []byte) bool { return bytes.Contains(l, []byte(`"type":"run.completed"`)) })
			require.Positive(t, end)
			e.data = joinLines(ls[:end])
			return a.reseal(t, &srcKey, nil).pack(t)
		}},
		{"world events altered and signed again", replayDivergence(t, base), false, func(t *testing.T) string {
			a := base.clone()
			e := &a[a.find(t, "events/")]
			ls := lines(e.data)
			i := slices.IndexFunc(ls, func(l []byte) bool { return bytes.Contains(l, []byte(`"type":"world.step"`)) })
			at := bytes.Index(ls[i], []byte(`"stateDigest":"sha256:`)) + len(`"stateDigest":"sha256:`)
			ls[i][at] ^= 0x01
			e.data = joinLines(ls)
			return a.reseal(t, &srcKey, nil).pack(t)
		}},
		{"a simulated world without its program", "has no program", false, func(t *testing.T) string {
			// Only a task world may name none (its request is its run's
			// first event).
			a := base.clone()
			e := &a[a.find(t, bundle.SpecsName)]
			ls := lines(e.data)
			for i := range ls {
				var spec map[string]any
				require.NoError(t, json.Unmarshal(ls[i], &spec))
				spec["program"] = map[string]any{"digest": "", "size": 0, "mediaType": "text/x-starlark"}
				ls[i], _ = json.Marshal(spec)
			}
			e.data = joinLines(ls)
			return a.reseal(t, &srcKey, nil).pack(t)
		}},
		{"events of a newer schema version", "has schema version 2; this ducklm reads events up to version 1 (upgrade ducklm to import it)", false, func(t *testing.T) string {
			a := base.clone()
			e := &a[a.find(t, "events/")]
			ls := lines(e.data)
			ls[1] = bytes.Replace(ls[1], []byte(`"schemaVersion":1`), []byte(`"schemaVersion":2`), 1)
			e.data = joinLines(ls)
			return a.reseal(t, &srcKey, nil).pack(t)
		}},
		{"unsigned without --allow-unsigned", "the bundle is unsigned", true, func(t *testing.T) string {
			return src.unsignedTask
		}},
		{"unknown signer", "signed by an unknown key", true, func(t *testing.T) string {
			return base.clone().reseal(t, &stranger, nil).pack(t)
		}},
		{"an id stored here with other content", "already recorded here with different content", true, func(t *testing.T) string {
			a := unpack(t, src.task)
			e := &a[a.find(t, "events/")]
			ls := lines(e.data)
			var ev map[string]any
			require.NoError(t, json.Unmarshal(ls[0], &ev))
			ev["type"] = "task.forged"
			ls[0], _ = json.Marshal(ev)
			e.data = joinLines(ls)
			return a.reseal(t, &srcKey, nil).pack(t)
		}},
	}
	before := snapshot(t, home)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			file := c.file(t)
			r := ducklm("import", file)
			require.Equal(t, cli.ExitFail, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
			require.Contains(t, r.stderr, c.want)
			require.Contains(t, r.stderr, "nothing was written")
			require.Equal(t, 1, strings.Count(strings.TrimSpace(r.stderr), "\n")+1, "one line: %s", r.stderr)
			require.Equal(t, before, snapshot(t, home), "the data directory is untouched")

			v := ducklm("verify", file)
			if c.verifyOK {
				require.Equal(t, cli.ExitOK, v.code, v.stdout+v.stderr)
				return
			}
			require.Equal(t, cli.ExitFail, v.code, v.stdout+v.stderr)
			require.Contains(t, v.stdout, "result: bad bundle: ")
			require.Contains(t, v.stdout, c.want)
		})
	}
	for _, p := range []string{filepath.Join(home, "evil.txt"), filepath.Join(filepath.Dir(home), "evil.txt")} {
		require.NoFileExists(t, p)
	}

	// The explicit choice lets an unsigned bundle in (here: nothing new).
	r = ducklm("import", src.unsignedTask, "--allow-unsigned")
	require.Equal(t, cli.ExitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "already present")
}

// forgeRuns rewrites every run record of the bundle at path with edit and
// signs the result with key again: a bundle whose signature is good but
// whose records say what its events do not.
func forgeRuns(t *testing.T, path string, key *bundle.Key, edit func(backend.WorldRun) backend.WorldRun) string {
	t.Helper()
	a := unpack(t, path)
	e := &a[a.find(t, bundle.RunsName)]
	ls := lines(e.data)
	for i := range ls {
		var r backend.WorldRun
		require.NoError(t, json.Unmarshal(ls[i], &r))
		var err error
		ls[i], err = json.Marshal(edit(r))
		require.NoError(t, err)
	}
	e.data = joinLines(ls)
	return a.reseal(t, key, nil).pack(t)
}

// TestVerifySaysWhenARunsRecordedStatusDisagreesWithItsEvents is issue 27's
// `ducklm verify` saying "result: ok" of a signed bundle whose run records
// claim a status its events do not give: the bundle is still good (import
// recomputes the status), but verify says so, a line per run and in --json
// (the run's recordedStatus and a note), and says nothing of the kind for
// an honest bundle.
func TestVerifySaysWhenARunsRecordedStatusDisagreesWithItsEvents(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	t.Setenv("DUCKLM_HOME", home)
	srcKey, ok, err := bundle.LoadKey(filepath.Join(src.dir, "home"))
	require.NoError(t, err)
	require.True(t, ok)
	forged := forgeRuns(t, src.task, &srcKey, func(r backend.WorldRun) backend.WorldRun {
		r.Status, r.Error = backend.RunFailed, "forged"
		return r
	})

	honest := ducklm("verify", src.task)
	require.Equal(t, cli.ExitOK, honest.code, honest.stdout+honest.stderr)
	require.NotContains(t, honest.stdout, "recomputes")

	v := ducklm("verify", forged)
	require.Equal(t, cli.ExitOK, v.code, v.stdout+v.stderr)
	require.Contains(t, v.stdout, "result: ok")
	require.Regexp(t, `(?m)^note: run run_[0-9a-f]+ is recorded as failed \("forged"\), but its events say completed; import recomputes the status from the events$`, v.stdout)

	v = ducklm("verify", forged, "--json")
	require.Equal(t, cli.ExitOK, v.code, v.stdout+v.stderr)
	var rep bundle.Report
	require.NoError(t, json.Unmarshal([]byte(v.stdout), &rep))
	require.True(t, rep.OK)
	require.Len(t, rep.Notes, 1)
	require.Contains(t, rep.Notes[0], "import recomputes the status from the events")
	var disagree []bundle.HeldRun
	for _, w := range rep.Worlds {
		for _, r := range w.Runs {
			if r.RecordedStatus != "" {
				disagree = append(disagree, r)
			}
		}
	}
	require.Len(t, disagree, 1)
	require.Equal(t, backend.RunFailed, disagree[0].RecordedStatus)
	require.Equal(t, "forged", disagree[0].RecordedError)
	require.Equal(t, backend.RunCompleted, disagree[0].Status)
}

// A run's status comes from its events: a bundle whose run records claim
// another status (a running world run as completed, a completed task run as
// failed) is imported with the status its events give, and verify reports
// that status.
func TestRunStatusIsRecomputedFromTheEvents(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	t.Setenv("DUCKLM_HOME", home)
	srcKey, ok, err := bundle.LoadKey(filepath.Join(src.dir, "home"))
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, os.MkdirAll(home, 0o700))
	require.NoError(t, os.WriteFile(bundle.TrustedKeysPath(home), []byte(bundle.FormatFingerprint(srcKey.Fingerprint())+"\n"), 0o600))

	forge := func(path string, edit func(backend.WorldRun) backend.WorldRun) string {
		return forgeRuns(t, path, &srcKey, edit)
	}
	worlds := forge(src.childBundle, func(r backend.WorldRun) backend.WorldRun {
		r.Status, r.Error = backend.RunCompleted, ""
		return r
	})
	task := forge(src.task, func(r backend.WorldRun) backend.WorldRun {
		r.Status, r.Error = backend.RunFailed, "forged"
		return r
	})

	statusOf := func(file string) map[string]backend.RunStatus {
		v := ducklm("verify", file, "--json")
		require.Equal(t, cli.ExitOK, v.code, v.stdout+v.stderr)
		var rep bundle.Report
		require.NoError(t, json.Unmarshal([]byte(v.stdout), &rep))
		out := map[string]backend.RunStatus{}
		for _, w := range rep.Worlds {
			for _, r := range w.Runs {
				out[r.ID] = r.Status
			}
		}
		return out
	}
	honest := statusOf(src.childBundle)
	require.Contains(t, slices.Collect(maps.Values(honest)), backend.RunRunning, "the bundle holds a world run still running")
	require.Equal(t, honest, statusOf(worlds), "verify reports the status the events give, not the record's")
	for _, file := range []string{worlds, task} {
		r := ducklm("import", file)
		require.Equal(t, cli.ExitOK, r.code, r.stdout+r.stderr)
	}
	svc, err := service.Open(context.Background(), home)
	require.NoError(t, err)
	defer svc.Close()
	rows, err := svc.DB.SQL.Query("SELECT id, status, coalesce(error, '') FROM world_runs")
	require.NoError(t, err)
	defer rows.Close()
	statuses := map[string]int{}
	for rows.Next() {
		var id, status, msg string
		require.NoError(t, rows.Scan(&id, &status, &msg))
		require.NotEqual(t, "forged", msg, "run %s", id)
		statuses[status]++
	}
	require.NoError(t, rows.Err())
	require.Positive(t, statuses[string(backend.RunRunning)], "the running world run runs on: %v", statuses)
	require.Positive(t, statuses[string(backend.RunCompleted)], "the task run completed: %v", statuses)
	require.Zero(t, statuses[string(backend.RunFailed)], "%v", statuses)
}

// replayDivergence is the sentence naming where the first step event of the
// archive's first events entry is: the seq a replay must stop at.
func replayDivergence(t *testing.T, a archive) string {
	e := a[a.find(t, "events/")]
	for _, l := range lines(e.data) {
		var ev backend.Event
		require.NoError(t, json.Unmarshal(l, &ev))
		if ev.Type == "world.step" {
			return fmt.Sprintf("does not replay: at seq %d of stream %s (world.step) the state after this step differs", ev.Seq, ev.Stream)
		}
	}
	t.Fatal("no step event")
	return ""
}
