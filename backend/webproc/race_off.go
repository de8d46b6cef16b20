//go:build !race

package webproc

// raceFactor is 1 outside race-detector builds (see race_on.go).
const raceFactor = 1
