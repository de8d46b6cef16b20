package store

import (
	"context"
	"time"

	"gorm.io/gorm"

	"ducklm/backend"
	"ducklm/backend/memory"
)

// txWrite is a write this store prepared for another caller's append to
// make in its transaction (backend.Prepared): a memory decision's rows,
// written with the step result that records the decision.
type txWrite func(ctx context.Context, gtx *gorm.DB) error

// PreparedBy implements backend.Prepared.
func (txWrite) PreparedBy() string { return "ducklm's database" }

// preparedHere returns the writes of also, each of which this store must
// have prepared: another's cannot join this store's transaction.
func preparedHere(also []backend.Prepared) ([]txWrite, error) {
	var out []txWrite
	for _, p := range also {
		if p == nil {
			continue
		}
		w, ok := p.(txWrite)
		if !ok {
			return nil, backend.Errorf(backend.EINTERNAL, "a write prepared by %s cannot join a transaction of ducklm's database", p.PreparedBy())
		}
		out = append(out, w)
	}
	return out, nil
}

// PrepareInsert implements memory.Repo: Insert's rows, for an append's
// transaction.
func (r *Memories) PrepareInsert(m memory.Memory) backend.Prepared {
	return txWrite(func(ctx context.Context, gtx *gorm.DB) error {
		return r.insert(gtx.WithContext(ctx), m)
	})
}

// PrepareMerge implements memory.Repo: Merge's rows, for an append's
// transaction; merged receives the memory as stored after the merge.
func (r *Memories) PrepareMerge(id string, src memory.Source, weight float64, at time.Time, merged *memory.Memory) backend.Prepared {
	return txWrite(func(ctx context.Context, gtx *gorm.DB) error {
		m, err := r.merge(gtx.WithContext(ctx), id, src, weight, at)
		if err == nil && merged != nil {
			*merged = m
		}
		return err
	})
}
