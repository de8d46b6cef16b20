//go:build !race

package worldproc

// raceFactor multiplies a worker's memory limit; see race_on.go.
const raceFactor = 1
