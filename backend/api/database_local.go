package api

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"ducklm/backend"
	"ducklm/backend/bundle"
	"ducklm/backend/service"
)

// LocalDataView is, while ducklm runs on a team's database, this machine's
// own database: where it is, and what it holds. ducklm does not write to
// it while the team's database is in use.
type LocalDataView struct {
	// Path is the SQLite file in the data directory.
	Path   string `json:"path"`
	Exists bool   `json:"exists"`
	// TaskRuns and SimulatedWorlds count as the Runs list and the Worlds
	// screen count; Roots is how many lineages a copy brings over.
	TaskRuns        int64 `json:"taskRuns"`
	SimulatedWorlds int64 `json:"simulatedWorlds"`
	Roots           int   `json:"roots"`
	// Unfinished counts the task runs there that have not ended (waiting
	// for an approval, paused…): they are not copied until they finish.
	Unfinished int `json:"unfinished"`
	// Problem says why it cannot be read, and so cannot be copied ("" when
	// it can).
	Problem string `json:"problem"`
}

// localData reads the local database of a team's installation.
func (a *API) localData() *LocalDataView {
	v := &LocalDataView{Path: service.DatabasePath(a.svc.Dir)}
	if _, err := os.Stat(v.Path); err != nil {
		return v
	}
	v.Exists = true
	l, err := a.svc.OpenLocal(a.ctx())
	if err != nil {
		a.log.Warn("read the local database", "err", err)
		v.Problem = backend.ErrorMessage(err)
		return v
	}
	defer l.Close()
	v.TaskRuns, v.SimulatedWorlds, v.Roots = l.Counts.TaskRuns, l.Counts.SimulatedWorlds, len(l.Roots)
	for _, r := range l.Roots {
		if r.Unfinished != "" {
			v.Unfinished++
		}
	}
	return v
}

// CopiedLineage is one local lineage brought to the team's database: its
// root world and what importing its bundle did.
type CopiedLineage struct {
	Root   string       `json:"root"`
	Name   string       `json:"name"`
	Domain string       `json:"domain"`
	Import ImportResult `json:"import"`
	// Problem says why it was not copied ("" when its import ran).
	Problem string `json:"problem"`
}

// LocalCopy is what "Copy my local runs and worlds to the team database"
// did: one bundle per local lineage, exported from the local database and
// imported here by the import path of Import bundle.
type LocalCopy struct {
	Lineages []CopiedLineage `json:"lineages"`
	// Added sums what the imports added.
	Added bundle.Counts `json:"added"`
	// Message says it in a sentence.
	Message string `json:"message"`
}

// CopyLocalToTeam copies every run and world of this machine's own
// database to the team's database in use: each lineage (a root world with
// everything forked from it) is exported as a bundle signed by this
// installation, and imported by ImportBundle, verified, all of it or
// nothing. The local database is only read. Copying twice adds nothing the
// second time.
func (a *API) CopyLocalToTeam(op string) (LocalCopy, error) {
	if err := a.ready(); err != nil {
		return LocalCopy{}, err
	}
	l, err := a.svc.OpenLocal(a.ctx())
	if err != nil {
		return LocalCopy{}, a.fail("copy local data", err)
	}
	defer l.Close()
	tmp, err := os.MkdirTemp("", "ducklm-copy-")
	if err != nil {
		return LocalCopy{}, a.fail("copy local data", backend.Wrap(err, backend.EUNAVAILABLE, "cannot make a temporary folder for the bundles"))
	}
	defer os.RemoveAll(tmp)
	out := LocalCopy{Lineages: []CopiedLineage{}}
	copied := 0
	for i, root := range l.Roots {
		c := CopiedLineage{Root: root.ID, Name: root.Name, Domain: string(root.Domain)}
		if root.Unfinished != "" {
			c.Problem = "Not copied: this task run is still " + strings.ReplaceAll(string(root.Unfinished), "_", " ") +
				", and only finished runs are copied (a moving one would go on running in two places). Switch back to this machine's database, let it finish or cancel it there, then copy again."
			out.Lineages = append(out.Lineages, c)
			continue
		}
		path := filepath.Join(tmp, fmt.Sprintf("%d%s", i, bundleExt))
		if _, err := l.Export(a.ctx(), root.ID, path, a.svc.Dir, a.bundleProgress(op)); err != nil {
			a.log.Error("copy local data: export", "root", root.ID, "err", err)
			c.Problem = "Not copied: " + backend.ErrorMessage(err)
			out.Lineages = append(out.Lineages, c)
			continue
		}
		res, err := a.ImportBundle(ImportInput{Path: path, Op: op})
		switch {
		case err != nil:
			c.Problem = err.Error()
		case !res.Imported:
			c.Problem = res.Problem
		default:
			copied++
			out.Added = addCounts(out.Added, res.Added)
		}
		c.Import = res
		out.Lineages = append(out.Lineages, c)
		if err := a.ctx().Err(); err != nil {
			return out, a.fail("copy local data", backend.Wrap(err, backend.ECANCELLED, "the copy stopped after %d of %d lineages", i+1, len(l.Roots)))
		}
	}
	out.Message = copyMessage(l.Path, len(l.Roots), copied, out.Added)
	a.log.Info("local data copied", "lineages", len(l.Roots), "copied", copied, "added", out.Added.String())
	return out, nil
}

func copyMessage(path string, roots, copied int, added bundle.Counts) string {
	switch {
	case roots == 0:
		return path + " holds no runs or worlds: nothing to copy."
	case copied < roots:
		return fmt.Sprintf("Copied %d of %d lineages from %s (left as it was); the others say why below. Added here: %s.", copied, roots, path, added.String())
	case added.Zero():
		return fmt.Sprintf("Everything in %s was already in the team database (%s): nothing added.", path, plural(roots, "lineage"))
	default:
		return fmt.Sprintf("Copied %s from %s (left as it was). Added here: %s.", plural(roots, "lineage"), path, added.String())
	}
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func addCounts(a, b bundle.Counts) bundle.Counts {
	return bundle.Counts{Worlds: a.Worlds + b.Worlds, Runs: a.Runs + b.Runs, Forks: a.Forks + b.Forks,
		Checkpoints: a.Checkpoints + b.Checkpoints, Streams: a.Streams + b.Streams, Events: a.Events + b.Events, Blobs: a.Blobs + b.Blobs}
}

// restartUnavailable is what RestartApp answers where ducklm cannot start
// itself again: the browser, whose server prints a new token each start.
const restartUnavailable = "ducklm serve cannot restart itself from this page: stop it where it runs (Ctrl+C) and start `ducklm serve` again, " +
	"then open the new address it prints (its token changes at each start)"

// SetRestart gives the facade the window's restart (quit, then start
// again on the same data directory); nil in a browser. It is a function,
// not a method, so that the UI bindings never see it.
func SetRestart(a *API, restart func() error) { a.restart = restart }

// CanRestart reports whether RestartApp can start ducklm again (the
// desktop window), or the person must (the browser).
func (a *API) CanRestart() bool { return a.restart != nil }

// RestartApp quits the window and starts ducklm again on the same data
// directory, so that a saved database opens. Runs in progress stop as at
// any quit and go on after the start. In a browser it is a sentence saying
// what to do instead.
func (a *API) RestartApp() error {
	if a.restart == nil {
		return errors.New(restartUnavailable)
	}
	a.log.Info("restart asked from the window")
	if err := a.restart(); err != nil {
		a.log.Error("restart", "err", err)
		return fmt.Errorf("ducklm could not restart (%s); quit it and start it again", strings.TrimSuffix(err.Error(), "."))
	}
	return nil
}
