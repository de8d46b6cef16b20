package deliberation

import "time"

// WithClock returns a copy of s that reads the time from now.
func (s *Service) WithClock(now func() time.Time) *Service {
	c := *s
	c.now = now
	return &c
}
