package bundle

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"ducklm/backend"
)

// FuzzParseManifest feeds the manifest parser arbitrary JSON. It must never
// panic; a refusal is a corrupt or over-limit bundle with a sentence; an
// accepted manifest lists every record file once, in order, with
// well-formed digests and sizes within the limits. `make test` runs it for
// a bounded time (test-fuzz).
func FuzzParseManifest(f *testing.F) {
	hex := strings.Repeat("ab", 32)
	valid := Manifest{Format: Format, FormatVersion: FormatVersion, AppVersion: "test", CreatedAt: time.Unix(0, 0).UTC(),
		Roots: []string{backend.NewID(backend.KindRun)}, Counts: Counts{Streams: 1, Blobs: 1}}
	for _, n := range metaNames {
		valid.Entries = append(valid.Entries, Entry{Name: n, SHA256: hex, Size: 10})
	}
	valid.Entries = append(valid.Entries, Entry{Name: eventsName(valid.Roots[0]), SHA256: hex, Size: 10},
		Entry{Name: blobName("sha256:" + hex), SHA256: hex, Size: 10})
	data, err := json.Marshal(valid)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"format":"` + Format + `","formatVersion":1,"roots":["x"],"entries":[{"name":"../../etc","sha256":"` + hex + `","size":-1}]}`))
	f.Add([]byte(`null`))
	limits := DefaultLimits()
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parseManifest(data, limits)
		if err != nil {
			if code := backend.ErrorCode(err); code != backend.ECORRUPT && code != backend.ELIMIT {
				t.Fatalf("code %q for %q: %v", code, data, err)
			}
			if backend.ErrorMessage(err) == "" {
				t.Fatalf("no sentence for %q", data)
			}
			return
		}
		if len(m.Entries) < len(metaNames) || len(m.Entries) > limits.MaxEntries {
			t.Fatalf("accepted %d entries", len(m.Entries))
		}
		var total int64
		for i, e := range m.Entries {
			if i < len(metaNames) && e.Name != metaNames[i] {
				t.Fatalf("entry %d is %q, not %q", i, e.Name, metaNames[i])
			}
			if k, _ := classify(e.Name); k == kindManifest || k == kindSignature || strings.Contains(e.Name, "..") {
				t.Fatalf("accepted the entry name %q", e.Name)
			}
			if e.Size < 0 || len(e.SHA256) != 64 {
				t.Fatalf("accepted entry %+v", e)
			}
			total += e.Size
		}
		if total > limits.MaxTotalBytes {
			t.Fatalf("accepted %d bytes in all", total)
		}
	})
}
