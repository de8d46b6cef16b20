package bundle

import (
	"context"

	"ducklm/backend"
)

// localCache remembers what the local data directory answered, absent
// things included (as nil), so each id is looked up once.
type localCache struct {
	specs map[string]*backend.WorldSpec
	runs  map[string]*backend.WorldRun
	cps   map[string]*backend.Checkpoint
	forks map[string]*backend.Fork // by child world
	heads map[string]int64
	blobs map[string]bool
}

func newLocalCache() localCache {
	return localCache{specs: map[string]*backend.WorldSpec{}, runs: map[string]*backend.WorldRun{},
		cps: map[string]*backend.Checkpoint{}, forks: map[string]*backend.Fork{}, heads: map[string]int64{}, blobs: map[string]bool{}}
}

// lookup asks the local store once for id; absent is (nil, nil).
func lookup[T any](ctx context.Context, cache map[string]*T, id string, get func(context.Context, string) (T, error)) (*T, error) {
	if v, ok := cache[id]; ok {
		return v, nil
	}
	v, err := get(ctx, id)
	switch backend.ErrorCode(err) {
	case "":
		cache[id] = &v
		return &v, nil
	case backend.ENOTFOUND, backend.EINVALID:
		cache[id] = nil
		return nil, nil
	}
	return nil, err
}

// specOf returns a world's spec from the bundle, else from here (nil: neither).
func (c *checked) specOf(ctx context.Context, id string) (*backend.WorldSpec, error) {
	if i, ok := c.spec[id]; ok {
		return &c.specs[i], nil
	}
	if c.local.Store == nil {
		return nil, nil
	}
	return lookup(ctx, c.cache.specs, id, c.local.Store.GetSpec)
}

func (c *checked) runOf(ctx context.Context, id string) (*backend.WorldRun, error) {
	if i, ok := c.run[id]; ok {
		return &c.runs[i], nil
	}
	if c.local.Store == nil {
		return nil, nil
	}
	return lookup(ctx, c.cache.runs, id, c.local.Store.GetRun)
}

func (c *checked) checkpointOf(ctx context.Context, id string) (*backend.Checkpoint, error) {
	if i, ok := c.cp[id]; ok {
		return &c.cps[i], nil
	}
	if c.local.Store == nil {
		return nil, nil
	}
	return lookup(ctx, c.cache.cps, id, c.local.Store.GetCheckpoint)
}

// forkOf returns the fork that created a world.
func (c *checked) forkOf(ctx context.Context, childWorldID string) (*backend.Fork, error) {
	if i, ok := c.forkByChild[childWorldID]; ok {
		return &c.forks[i], nil
	}
	if c.local.Store == nil {
		return nil, nil
	}
	return lookup(ctx, c.cache.forks, childWorldID, c.local.Store.ForkOf)
}

// headOf returns how many events a run's stream will have after an import:
// the longer of the bundle's and the local one (they agree where both are).
func (c *checked) headOf(ctx context.Context, runID string) (int64, error) {
	head := c.heads[runID]
	if c.local.Events == nil {
		return head, nil
	}
	local, ok := c.cache.heads[runID]
	if !ok {
		var err error
		if local, err = c.local.Events.Head(ctx, runID); err != nil {
			return 0, err
		}
		c.cache.heads[runID] = local
	}
	return max(head, local), nil
}

func (c *checked) hasLocalBlob(ctx context.Context, digest string) (bool, error) {
	if c.local.Blobs == nil {
		return false, nil
	}
	if ok, seen := c.cache.blobs[digest]; seen {
		return ok, nil
	}
	ok, err := c.local.Blobs.Has(ctx, digest)
	if err != nil {
		return false, err
	}
	c.cache.blobs[digest] = ok
	return ok, nil
}
