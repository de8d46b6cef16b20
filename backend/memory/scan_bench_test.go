package memory_test

import (
	"strings"
	"testing"

	"ducklm/backend/memory"
)

// BenchmarkScanSecrets scans what a step's output usually is: prose and
// code with no secret in it, about 2 KB.
func BenchmarkScanSecrets(b *testing.B) {
	text := strings.Repeat("The build passed on the second try; see main.go:42 for the fix (a nil map).\n", 26)
	for b.Loop() {
		memory.ScanSecrets(text)
	}
}
