package backend

import (
	"context"
	"time"
)

// Sleep waits d, or until ctx ends: it reports whether the whole d passed
// (false: ctx is done, stop).
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
