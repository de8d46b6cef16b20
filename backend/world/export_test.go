package world

import (
	"time"

	"ducklm/backend"
)

// SetSearchSlicing makes s answer searches after slice and at least least
// positions, reading chunk positions at a time (for tests of a search that
// goes on across calls).
func (s *Service) SetSearchSlicing(slice time.Duration, least, chunk int64) {
	s.search = searchSlicing{slice: slice, least: least, chunk: chunk}
}

// BranchRunID is the id of the run a branch with key records.
func BranchRunID(key string) string { return branchID(backend.KindRun, key) }
