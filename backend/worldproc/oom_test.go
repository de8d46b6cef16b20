package worldproc

import "testing"

// TestOutOfMemoryReadsEveryWayTheRuntimeDiesAtItsLimit: the words a Go
// runtime leaves on stderr when a world program's worker meets its memory
// limit, each from a real death, are read as the limit; a bug of ducklm's
// own (a panic, a fault in its code) and an ordinary exit are not.
func TestOutOfMemoryReadsEveryWayTheRuntimeDiesAtItsLimit(t *testing.T) {
	for _, c := range []struct {
		name, stderr string
		want         bool
	}{
		{"the heap", "fatal error: out of memory\n\ngoroutine 1 gp=0xc000002380 m=0 mp=0x8a5e60 [running]:\n", true},
		{"a mapping", "runtime: mmap: cannot allocate memory\nfatal error: runtime: cannot allocate memory\n", true},
		{"a thread", "runtime/cgo: pthread_create failed: Resource temporarily unavailable\nSIGABRT: abort\n", true},
		// Go 1.26's Green Tea collector does not check the mapping of a
		// new span queue (newSpanSPMC's sysAlloc): when it fails at the
		// limit, the mark worker writes through nil.
		{"the collector's span queue", "SIGSEGV: segmentation violation\nPC=0x43925d m=4 sigcode=1 addr=0x0\n\n" +
			"goroutine 0 gp=0x3c942b1041e0 m=4 mp=0x3c942b100008 [idle]:\n" +
			"runtime.(*spanQueue).tryDrain(0xa4d00000400?, 0xa4d0000000a4d00?, 0x4d000000?)\n" +
			"\t/usr/local/go/src/runtime/mgcmark_greenteagc.go:520 +0x5d fp=0x7f1eb7e9eb48 sp=0x7f1eb7e9eb28 pc=0x43925d\n", true},
		{"a fault inside the runtime on a goroutine", "fatal error: unexpected signal during runtime execution\n" +
			"[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x43925d]\n\nruntime stack:\nruntime.throw({0x5b2f1e?, 0x0?})\n", true},
		{"a nil dereference in ducklm's code", "panic: runtime error: invalid memory address or nil pointer dereference\n" +
			"[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4d8f2a]\n\ngoroutine 1 [running]:\nducklm/backend/worldproc.serve()\n", false},
		{"a fault in ducklm's code off the runtime", "SIGSEGV: segmentation violation\nPC=0x4d8f2a m=0 sigcode=1 addr=0x0\n\n" +
			"goroutine 1 gp=0xc000002380 m=0 mp=0x8a5e60 [running]:\nducklm/backend/worldproc.serve()\n", false},
		{"a panic", "panic: unreachable\n\ngoroutine 1 [running]:\n", false},
		{"nothing said", "", false},
	} {
		if got := OutOfMemory(c.stderr); got != c.want {
			t.Errorf("%s: OutOfMemory = %v, want %v for\n%s", c.name, got, c.want, c.stderr)
		}
	}
}
