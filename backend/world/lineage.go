package world

import (
	"context"

	"ducklm/backend"
)

// Node is a world in the lineage DAG, with what a picture of it needs.
type Node struct {
	World     backend.WorldSpec `json:"world"`
	LatestRun *backend.WorldRun `json:"latestRun,omitempty"`
	Runs      int               `json:"runs"`

	round int64 // backend.BranchRound of the world's runs
}

// Round is the round of deliberation the world serves as a branch
// (backend.BranchRound of its runs); 0 when it is not a branch.
func (n Node) Round() int64 { return n.round }

// Edge is a fork: parent world → child world.
type Edge struct {
	Fork backend.Fork `json:"fork"`
	// At is the parent's world-local time at the fork.
	At int64 `json:"at"`
}

// Lineage is the whole fork DAG.
type Lineage struct {
	Nodes []Node `json:"nodes"`
	Edges []Edge `json:"edges"`
}

// Lineage returns every world and fork. It refuses a graph with a cycle.
func (s *Service) Lineage(ctx context.Context) (Lineage, error) {
	specs, err := s.store.ListSpecs(ctx)
	if err != nil {
		return Lineage{}, err
	}
	runs, err := s.store.ListRuns(ctx, "")
	if err != nil {
		return Lineage{}, err
	}
	forks, err := s.store.ListForks(ctx)
	if err != nil {
		return Lineage{}, err
	}
	if err := CheckAcyclic(specs); err != nil {
		return Lineage{}, err
	}
	latest := map[string]*backend.WorldRun{}
	count := map[string]int{}
	round := map[string]int64{}
	for i := range runs { // newest first
		r := &runs[i]
		if latest[r.WorldID] == nil {
			latest[r.WorldID] = r
		}
		count[r.WorldID]++
		if r.DeliberationIndex != 0 {
			round[r.WorldID] = backend.BranchRound(round[r.WorldID], r.DeliberationIndex)
		}
	}
	out := Lineage{Nodes: make([]Node, len(specs)), Edges: make([]Edge, 0, len(forks))}
	for i, sp := range specs {
		out.Nodes[i] = Node{World: sp, LatestRun: latest[sp.ID], Runs: count[sp.ID], round: round[sp.ID]}
	}
	// One query for every fork's time, not one per fork: 5,000 forks cost
	// the same round trip as one.
	times, err := s.store.ForkTimes(ctx)
	if err != nil {
		return Lineage{}, err
	}
	for _, f := range forks {
		at, ok := times[f.ID]
		if !ok {
			cp, err := s.store.GetCheckpoint(ctx, f.CheckpointID)
			if err != nil {
				return Lineage{}, err
			}
			at = cp.WorldLocalTime
		}
		out.Edges = append(out.Edges, Edge{Fork: f, At: at})
	}
	return out, nil
}

// CheckAcyclic refuses a set of worlds whose parent links form a cycle (a
// damaged database or a hostile import) with the worlds on it.
func CheckAcyclic(specs []backend.WorldSpec) error {
	parent := make(map[string]string, len(specs))
	for _, sp := range specs {
		parent[sp.ID] = sp.ParentWorldID
	}
	const (
		unvisited = iota
		onPath
		done
	)
	state := make(map[string]int, len(specs))
	for _, sp := range specs {
		var path []string
		id := sp.ID
		for id != "" && state[id] == unvisited {
			state[id] = onPath
			path = append(path, id)
			id = parent[id]
		}
		if id != "" && state[id] == onPath {
			return backend.Errorf(backend.ECORRUPT, "the world lineage has a cycle through %s; a fork can never be its own ancestor", id)
		}
		for _, p := range path {
			state[p] = done
		}
	}
	return nil
}

// Ancestors returns a world's ancestors, its parent first.
func (s *Service) Ancestors(ctx context.Context, worldID string) ([]backend.WorldSpec, error) {
	spec, err := s.store.GetSpec(ctx, worldID)
	if err != nil {
		return nil, err
	}
	var out []backend.WorldSpec
	seen := map[string]bool{worldID: true}
	for spec.ParentWorldID != "" {
		if seen[spec.ParentWorldID] || len(out) > maxChain {
			return nil, backend.Errorf(backend.ECORRUPT, "the world lineage has a cycle through %s; a fork can never be its own ancestor", spec.ParentWorldID)
		}
		seen[spec.ParentWorldID] = true
		if spec, err = s.store.GetSpec(ctx, spec.ParentWorldID); err != nil {
			return nil, err
		}
		out = append(out, spec)
	}
	return out, nil
}

// Descendants returns every world forked from worldID, directly or not,
// breadth first.
func (s *Service) Descendants(ctx context.Context, worldID string) ([]backend.WorldSpec, error) {
	if _, err := s.store.GetSpec(ctx, worldID); err != nil {
		return nil, err
	}
	specs, err := s.store.ListSpecs(ctx)
	if err != nil {
		return nil, err
	}
	if err := CheckAcyclic(specs); err != nil {
		return nil, err
	}
	children := map[string][]backend.WorldSpec{}
	for _, sp := range specs {
		if sp.ParentWorldID != "" {
			children[sp.ParentWorldID] = append(children[sp.ParentWorldID], sp)
		}
	}
	var out []backend.WorldSpec
	queue := []string{worldID}
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		for _, c := range children[id] {
			out = append(out, c)
			queue = append(queue, c.ID)
		}
	}
	return out, nil
}

// CommonAncestor returns the nearest world that is a (non-strict) ancestor
// of both a and b, or ENOTFOUND when they share none.
func (s *Service) CommonAncestor(ctx context.Context, a, b string) (backend.WorldSpec, error) {
	ancA, err := s.Ancestors(ctx, a)
	if err != nil {
		return backend.WorldSpec{}, err
	}
	inA := map[string]bool{a: true}
	for _, w := range ancA {
		inA[w.ID] = true
	}
	bSpec, err := s.store.GetSpec(ctx, b)
	if err != nil {
		return backend.WorldSpec{}, err
	}
	if inA[b] {
		return bSpec, nil
	}
	ancB, err := s.Ancestors(ctx, b)
	if err != nil {
		return backend.WorldSpec{}, err
	}
	for _, w := range ancB {
		if inA[w.ID] {
			return w, nil
		}
	}
	return backend.WorldSpec{}, backend.Errorf(backend.ENOTFOUND, "worlds %s and %s share no ancestor", a, b)
}
