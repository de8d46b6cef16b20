//go:build race

package worldproc

// raceFactor multiplies a worker's memory limit in race-detector builds:
// the detector's shadow memory (about three bytes for each byte of heap)
// counts against RLIMIT_DATA, and a test's limit should mean what it means
// in the binary users run.
const raceFactor = 4
