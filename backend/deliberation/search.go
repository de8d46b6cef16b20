package deliberation

import (
	"context"
	"encoding/json"
	"math"
	"sort"
	"strings"
	"sync"
	"time"

	"ducklm/backend"
	"ducklm/backend/world"
)

// node is a place in the search tree: the state reached by the actions on
// the path from the root, under each of the round's K seeds.
type node struct {
	parent *node
	action json.RawMessage
	depth  int
	// outs are the branch results, one per seed (nil at the root). A seed
	// whose world was done at the parent carries the parent's result on.
	outs []*world.BranchResult
	// fresh marks which outs this node's own branches produced.
	fresh []bool
	// cps are the checkpoints its children fork, one per seed.
	cps   []string
	value float64 // mean score over the seeds; -Inf when a branch failed
	done  bool    // every seed's world is done
	next  []json.RawMessage
	key   string // the seeds' digests: equal keys continue identically
	dup   bool   // an earlier node has the same key
	fail  string

	children []*node
	expanded bool
	closed   bool // nothing under it is left to expand

	visits int
	total  float64
	best   *node // the best node under it, itself included
}

func (n *node) leaf(depth int) bool {
	return n.done || n.dup || n.fail != "" || n.depth >= depth || len(n.next) == 0
}

// search is one round's search.
type search struct {
	s     *Service
	opt   Options
	ctx   context.Context
	round int
	index int64
	root  *node
	seeds []int64
	name  string
	ptime int64

	start    time.Time
	budget   Budget
	seen     map[string]*node
	branches []Branch
	lo, hi   float64 // the finite values seen, for UCT's normalisation
}

// timeUp reports whether the round's wall time is spent.
func (sr *search) timeUp() bool {
	return sr.opt.WallTime > 0 && sr.s.now().Sub(sr.start) >= sr.opt.WallTime
}

// expand evaluates the children of ns (each by every action it offers),
// as far as the budget allows whole children, running branches
// concurrently. It returns the children made; stop says the budget or the
// time ran out.
func (sr *search) expand(ns []*node) (made []*node, stop string, err error) {
	k := len(sr.seeds)
	var kids []*node
	for _, n := range ns {
		for _, a := range n.next {
			kids = append(kids, &node{parent: n, action: a, depth: n.depth + 1,
				outs: make([]*world.BranchResult, k), fresh: make([]bool, k), cps: make([]string, k)})
		}
	}
	if sr.timeUp() {
		return nil, "time", nil
	}
	// Whole children only: each needs a branch for every seed still running.
	need := func(c *node) int {
		m := 0
		for i := range k {
			if !c.parent.seedDone(i) {
				m++
			}
		}
		return m
	}
	left := sr.opt.Budget - sr.budget.Used
	for i, c := range kids {
		left -= need(c)
		if left < 0 {
			kids, stop = kids[:i], "budget"
			break
		}
	}
	type job struct {
		c    *node
		seed int
		req  world.BranchRequest
	}
	var jobs []job
	for _, c := range kids {
		for i := range k {
			p := c.parent
			if p.seedDone(i) {
				c.outs[i], c.cps[i] = p.outs[i], p.cps[i]
				continue
			}
			req := world.BranchRequest{CheckpointID: p.cps[i], Actions: []json.RawMessage{c.action},
				Name: sr.name, ParentTime: sr.ptime, DeliberationIndex: sr.index}
			if p == sr.root {
				req.Seed = &sr.seeds[i] // the round's seeds start at its first actions
			}
			jobs = append(jobs, job{c: c, seed: i, req: req})
		}
	}

	ctx, cancel := context.WithCancel(sr.ctx)
	defer cancel()
	var mu sync.Mutex
	var firstErr error
	sem := make(chan struct{}, sr.opt.Workers)
	var wg sync.WaitGroup
	var last *node // the last child whose branches were started
	for ji, j := range jobs {
		sem <- struct{}{}
		if ctx.Err() != nil {
			<-sem
			break
		}
		if ji == 0 || jobs[ji-1].c != j.c {
			// The time is checked before each child, not only before each
			// batch: a batch can be the whole budget. A child once started
			// runs all its seeds, so it is whole.
			if ji > 0 && sr.timeUp() {
				<-sem
				stop = "time"
				break
			}
			last = j.c
		}
		wg.Go(func() {
			defer func() { <-sem }()
			res, err := sr.s.eval.Branch(ctx, j.req)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if firstErr == nil {
					firstErr = err
					cancel()
				}
				return
			}
			j.c.outs[j.seed], j.c.fresh[j.seed], j.c.cps[j.seed] = &res, true, res.Checkpoint.ID
		})
	}
	wg.Wait()
	if firstErr != nil {
		return nil, "", firstErr
	}
	if err := sr.ctx.Err(); err != nil {
		return nil, "", err
	}
	if stop == "time" {
		// The children not started are not made; those before the last
		// started one whose seeds were all done at their parent (no jobs)
		// stay.
		for i, c := range kids {
			if c == last {
				kids = kids[:i+1]
				break
			}
		}
	}

	var added []Branch
	for _, c := range kids {
		sr.settle(c)
		for i, fresh := range c.fresh {
			if !fresh {
				continue
			}
			o := c.outs[i]
			sr.budget.Used++
			sr.budget.Steps += o.Steps
			b := Branch{WorldID: o.Run.WorldID, RunID: o.Run.ID, Parent: o.Fork.ParentWorldID, Action: c.action,
				Depth: c.depth, Seed: i, Score: o.Score, HasScore: o.HasScore, Done: o.Done, Failed: o.Failed, Duplicate: c.dup}
			added = append(added, b)
		}
		c.parent.children = append(c.parent.children, c)
		sr.budget.Depth = max(sr.budget.Depth, c.depth)
	}
	for _, n := range ns {
		n.expanded = true
	}
	sr.branches = append(sr.branches, added...)
	if sr.opt.Progress != nil {
		sr.opt.Progress(Progress{Round: sr.round, DeliberationIndex: sr.index, Branches: sr.budget.Used,
			Budget: sr.opt.Budget, Steps: sr.budget.Steps, Deduplicated: sr.budget.Deduplicated,
			ElapsedMs: sr.s.now().Sub(sr.start).Milliseconds(), Added: added})
	}
	return kids, stop, nil
}

// seedDone reports whether seed i's world is done (or failed) at n: its
// children carry it on instead of branching it.
func (n *node) seedDone(i int) bool {
	if n.outs == nil || n.outs[i] == nil {
		return false
	}
	return n.outs[i].Done
}

// settle computes a new node's value, actions and key, and recognises a
// state found before.
func (sr *search) settle(c *node) {
	var sum float64
	var keys []string
	c.done = true
	seenNext := map[string]bool{}
	for _, o := range c.outs {
		keys = append(keys, o.Digest)
		switch {
		case o.Failed != "":
			if c.fail == "" {
				c.fail = o.Failed
			}
		case !o.HasScore:
			c.fail = "the world program gave no score"
		default:
			sum += o.Score
		}
		if !o.Done {
			c.done = false
		}
		for _, a := range o.Next {
			if !seenNext[string(a)] {
				seenNext[string(a)] = true
				c.next = append(c.next, a)
			}
		}
	}
	if c.fail != "" {
		c.value, c.next, c.closed = math.Inf(-1), nil, true
	} else {
		c.value = sum / float64(len(c.outs))
		sr.lo, sr.hi = math.Min(sr.lo, c.value), math.Max(sr.hi, c.value)
	}
	c.key = strings.Join(keys, ",")
	if first, ok := sr.seen[c.key]; ok && first != c {
		c.dup = true
		sr.budget.Deduplicated++
	} else {
		sr.seen[c.key] = c
	}
	c.visits, c.total, c.best = 1, c.value, c
	if c.leaf(sr.opt.Depth) {
		c.closed = true
	}
}

// better orders nodes: higher value, then reached sooner (a deeper node
// that only ties has had more chances to be lucky under a noisy seed), then
// found first.
func better(a, b *node) bool {
	if a.value != b.value {
		return a.value > b.value
	}
	return a.depth < b.depth
}

// furthest is the end of the line a candidate offers to take: of the nodes
// under n with the best value, one where the world is done, else the
// deepest (found first on a tie). Without noise every node along a best
// path ties, and the deepest says the most of the way.
func furthest(n *node) *node {
	f := n
	for _, c := range n.children {
		if d := furthest(c); d.value > f.value || d.value == f.value && (d.done && !f.done || d.done == f.done && d.depth > f.depth) {
			f = d
		}
	}
	return f
}

// beam runs beam search from the root.
func (sr *search) beam() error {
	frontier := []*node{sr.root}
	for depth := 1; depth <= sr.opt.Depth && len(frontier) > 0; depth++ {
		kids, stop, err := sr.expand(frontier)
		if err != nil {
			return err
		}
		var alive []*node
		for _, c := range kids {
			if !c.dup && c.fail == "" && !c.done {
				alive = append(alive, c)
			}
		}
		sort.SliceStable(alive, func(i, j int) bool { return better(alive[i], alive[j]) })
		frontier = alive[:min(len(alive), sr.opt.Width)]
		for _, n := range frontier {
			if len(n.next) == 0 {
				n.closed = true
			}
		}
		if stop != "" {
			sr.budget.Stopped = stop
			return nil
		}
	}
	sr.budget.Stopped = "exhausted"
	return nil
}

// mcts runs UCT: select down the tree by the UCT bound, expand the leaf by
// all its actions, back the new values up.
func (sr *search) mcts() error {
	for {
		if sr.root.closed {
			sr.budget.Stopped = "exhausted"
			return nil
		}
		n := sr.root
		for n.expanded {
			var pick *node
			var bestU float64
			for _, c := range n.children {
				if c.closed {
					continue
				}
				u := sr.uct(n, c)
				if pick == nil || u > bestU {
					pick, bestU = c, u
				}
			}
			if pick == nil {
				break
			}
			n = pick
		}
		if n.expanded || n.closed {
			// Every child is closed: close it and look again.
			sr.close(n)
			continue
		}
		kids, stop, err := sr.expand([]*node{n})
		if err != nil {
			return err
		}
		for _, c := range kids {
			for p := c.parent; p != nil; p = p.parent {
				p.visits++
				if !math.IsInf(c.value, -1) {
					p.total += c.value
				}
			}
		}
		if len(kids) == 0 && stop == "" {
			n.closed = true
		}
		sr.close(n)
		if stop != "" {
			sr.budget.Stopped = stop
			return nil
		}
	}
}

// close marks n closed when all its children are, and so on upwards.
func (sr *search) close(n *node) {
	for ; n != nil; n = n.parent {
		if !n.expanded {
			return
		}
		for _, c := range n.children {
			if !c.closed {
				return
			}
		}
		n.closed = true
	}
}

// uct is c's upper confidence bound as a child of p, its mean value
// normalised to [0, 1] over the values seen.
func (sr *search) uct(p, c *node) float64 {
	span := sr.hi - sr.lo
	q := 0.5
	if span > 0 {
		q = (c.total/float64(c.visits) - sr.lo) / span
	}
	return q + sr.opt.Exploration*math.Sqrt(math.Log(float64(p.visits))/float64(c.visits))
}

// rank turns the tree under the root into ranked candidates.
func (sr *search) rank() []Candidate {
	var bestOf func(n *node) (*node, int, float64)
	bestOf = func(n *node) (*node, int, float64) {
		b, size, sum := n, 1, n.value
		if math.IsInf(n.value, -1) {
			sum = 0
		}
		for _, c := range n.children {
			cb, cs, csum := bestOf(c)
			if better(cb, b) {
				b = cb
			}
			size, sum = size+cs, sum+csum
		}
		n.best = b
		if sr.opt.Strategy == Beam {
			// Beam search backs nothing up: a candidate's visits and mean
			// are over the nodes under it (MCTS counted them as it went).
			n.visits, n.total = size, sum
		}
		return b, size, sum
	}
	var cands []Candidate
	order := append([]*node(nil), sr.root.children...)
	for _, c := range order {
		bestOf(c)
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i].best, order[j].best
		if a.value != b.value || a.depth != b.depth {
			return better(a, b)
		}
		return order[i].visits > order[j].visits
	})
	for _, c := range order {
		b := c.best
		cand := Candidate{Action: c.action, Score: b.value, Visits: c.visits, Failed: c.fail}
		if c.visits > 0 {
			cand.Mean = c.total / float64(c.visits)
		}
		for i, o := range c.outs {
			if c.fresh[i] {
				cand.Branches = append(cand.Branches, o.Run.WorldID)
			}
		}
		for _, o := range b.outs {
			cand.BestBranches = append(cand.BestBranches, o.Run.WorldID)
		}
		for n := furthest(c); n != sr.root; n = n.parent {
			cand.Line = append([]json.RawMessage{n.action}, cand.Line...)
		}
		if len(b.outs) > 0 && b.outs[0] != nil {
			cand.State = b.outs[0].State
		}
		if math.IsInf(cand.Score, -1) {
			cand.Score = 0 // JSON has no -Inf; Failed says why
		}
		if math.IsInf(cand.Mean, -1) || math.IsNaN(cand.Mean) {
			cand.Mean = 0
		}
		cands = append(cands, cand)
	}
	return cands
}

var errNoChoice = backend.Errorf(backend.EINVALID, "every branch of the round failed, so there is no action to choose")
