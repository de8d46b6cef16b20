package runtime

import "time"

// SetStallPause sets the first pause before a stopped run is driven again,
// returning a function that puts it back.
func SetStallPause(d time.Duration) func() {
	old := stallPause
	stallPause = d
	return func() { stallPause = old }
}
