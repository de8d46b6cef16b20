// Package boot holds the garbage collector off while the program's packages
// initialise, and gives it back when main starts.
//
// Initialising every package ducklm links allocates about 3.5 MB (compiled
// regular expressions and JSON Schemas of its dependencies), just past the
// 4 MB the first collection waits for, so every command, ducklm version
// included, ran a collection before main: 5 to 8 ms of CPU (perf stat),
// 7 to 14% of the whole of `ducklm version`. A command that allocates more
// after main still collects once, in main; one that does not (version,
// help, a usage error) never does.
// Go initialises the ready package with the smallest import path first, so
// this one, which needs only runtime/debug, runs before the dependencies
// that allocate (github.com/…, golang.org/…, gorm.io/…, modernc.org/…).
//
// It must never do more: main calls Done first, whatever the command, and
// from then on the collector runs as GOGC says.
package boot

import "runtime/debug"

// percent is the collector's setting before init turned it off (GOGC, 100
// unless set).
var percent = debug.SetGCPercent(-1)

// Done gives the collector its setting back. main calls it first; later
// calls do nothing.
func Done() {
	if percent != -1 {
		debug.SetGCPercent(percent)
		percent = -1
	}
}
