package bundle

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"ducklm/backend"
)

// ErrNeedsAncestry is the cause of refusing to export a forked world or
// run without the ancestors its history starts in.
var ErrNeedsAncestry = errors.New("export needs ancestry")

// scope is what one export holds: worlds, runs and the forks between them.
type scope struct {
	specs map[string]backend.WorldSpec
	runs  map[string]backend.WorldRun
	forks map[string]backend.Fork // by child world
}

// collect finds what exporting root needs. A run brings its world; a
// world brings all its runs. Descendants adds every world forked from a
// run in the scope, with all its runs, until no more are found. A forked
// world or run needs its ancestors to read its history: with ancestry
// they are added (their worlds, the runs it continues and the forks on
// the way); without it the export is refused.
func collect(ctx context.Context, st Store, root string, ancestry, descendants bool) (*scope, error) {
	sc := &scope{specs: map[string]backend.WorldSpec{}, runs: map[string]backend.WorldRun{}, forks: map[string]backend.Fork{}}
	kind, err := backend.KindOf(root)
	if err != nil {
		return nil, err
	}
	switch kind {
	case backend.KindRun:
		r, err := st.GetRun(ctx, root)
		if err != nil {
			return nil, err
		}
		if err := sc.addRun(ctx, st, r); err != nil {
			return nil, err
		}
	case backend.KindWorld:
		if _, err := sc.addWorld(ctx, st, root); err != nil {
			return nil, err
		}
	default:
		return nil, backend.Errorf(backend.EINVALID, "%s is a %s id; export takes a run or a world", root, kind)
	}
	if descendants {
		forks, err := st.ListForks(ctx)
		if err != nil {
			return nil, err
		}
		byParentRun := map[string][]backend.Fork{}
		for _, f := range forks {
			byParentRun[f.ParentRunID] = append(byParentRun[f.ParentRunID], f)
		}
		queue := sc.runIDs()
		for len(queue) > 0 {
			id := queue[0]
			queue = queue[1:]
			for _, f := range byParentRun[id] {
				if _, seen := sc.specs[f.ChildWorldID]; seen {
					continue
				}
				sc.forks[f.ChildWorldID] = f
				added, err := sc.addWorld(ctx, st, f.ChildWorldID)
				if err != nil {
					return nil, err
				}
				queue = append(queue, added...)
			}
		}
	}
	return sc, sc.close(ctx, st, root, ancestry)
}

// close adds (or, without ancestry, refuses the lack of) what forked
// worlds and runs in the scope come from.
func (sc *scope) close(ctx context.Context, st Store, root string, ancestry bool) error {
	for {
		var needRuns, needWorlds []string
		for _, s := range sc.sortedSpecs() {
			if s.ParentWorldID == "" {
				continue
			}
			f, ok := sc.forks[s.ID]
			if !ok {
				var err error
				if f, err = st.ForkOf(ctx, s.ID); err != nil {
					return err
				}
				sc.forks[s.ID] = f
			}
			if _, ok := sc.specs[s.ParentWorldID]; !ok {
				needWorlds = append(needWorlds, s.ParentWorldID)
			}
			if _, ok := sc.runs[f.ParentRunID]; !ok {
				needRuns = append(needRuns, f.ParentRunID)
			}
		}
		for _, r := range sc.runs {
			if _, ok := sc.runs[r.BaseRunID]; r.BaseRunID != "" && !ok {
				needRuns = append(needRuns, r.BaseRunID)
			}
		}
		if len(needRuns)+len(needWorlds) == 0 {
			return nil
		}
		if !ancestry {
			return &backend.Error{Code: backend.EINVALID, Err: ErrNeedsAncestry, Message: fmt.Sprintf(
				"%s comes from a fork, so its history starts in its ancestors' runs: add --ancestry to export them with it", root)}
		}
		for _, id := range needWorlds {
			s, err := st.GetSpec(ctx, id)
			if err != nil {
				return err
			}
			sc.specs[id] = s
		}
		for _, id := range needRuns {
			r, err := st.GetRun(ctx, id)
			if err != nil {
				return err
			}
			if err := sc.addRun(ctx, st, r); err != nil {
				return err
			}
		}
	}
}

func (sc *scope) addRun(ctx context.Context, st Store, r backend.WorldRun) error {
	sc.runs[r.ID] = r
	if _, ok := sc.specs[r.WorldID]; ok {
		return nil
	}
	s, err := st.GetSpec(ctx, r.WorldID)
	if err != nil {
		return err
	}
	sc.specs[s.ID] = s
	return nil
}

// addWorld adds a world with all its runs and returns the runs' ids.
func (sc *scope) addWorld(ctx context.Context, st Store, worldID string) ([]string, error) {
	s, err := st.GetSpec(ctx, worldID)
	if err != nil {
		return nil, err
	}
	sc.specs[s.ID] = s
	runs, err := st.ListRuns(ctx, worldID)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(runs))
	for _, r := range runs {
		sc.runs[r.ID] = r
		ids = append(ids, r.ID)
	}
	return ids, nil
}

func (sc *scope) runIDs() []string {
	out := make([]string, 0, len(sc.runs))
	for id := range sc.runs {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// sortedSpecs returns the worlds ancestors first (then by creation).
func (sc *scope) sortedSpecs() []backend.WorldSpec {
	depth := map[string]int{}
	var depthOf func(id string, n int) int
	depthOf = func(id string, n int) int {
		if d, ok := depth[id]; ok {
			return d
		}
		s, ok := sc.specs[id]
		if !ok || s.ParentWorldID == "" || n > len(sc.specs) {
			return 0
		}
		d := depthOf(s.ParentWorldID, n+1) + 1
		depth[id] = d
		return d
	}
	out := make([]backend.WorldSpec, 0, len(sc.specs))
	for _, s := range sc.specs {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		di, dj := depthOf(out[i].ID, 0), depthOf(out[j].ID, 0)
		if di != dj {
			return di < dj
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// sortedRuns returns the runs base runs first (then by id).
func (sc *scope) sortedRuns() []backend.WorldRun {
	depth := func(r backend.WorldRun) int {
		d := 0
		for r.BaseRunID != "" && d <= len(sc.runs) {
			base, ok := sc.runs[r.BaseRunID]
			if !ok {
				break
			}
			r, d = base, d+1
		}
		return d
	}
	out := make([]backend.WorldRun, 0, len(sc.runs))
	for _, r := range sc.runs {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		di, dj := depth(out[i]), depth(out[j])
		if di != dj {
			return di < dj
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// sortedForks returns the fork records by child world id order.
func (sc *scope) sortedForks() []backend.Fork {
	out := make([]backend.Fork, 0, len(sc.forks))
	for _, f := range sc.forks {
		if _, ok := sc.specs[f.ChildWorldID]; ok {
			out = append(out, f)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
