//go:build race

package webproc

// raceFactor multiplies the memory cgroup's limit of a worker in
// race-detector builds: the detector's shadow memory (about three bytes for
// each byte of heap) is resident too, and a test's limit should mean what it
// means in the binary users run. (The worker's own RLIMIT_DATA is scaled
// by worldproc.LimitMemory.)
const raceFactor = 4
