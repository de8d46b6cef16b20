package bundle

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
)

func TestClassifyAcceptsOnlyTheBundleShapes(t *testing.T) {
	t.Parallel()
	run := backend.NewID(backend.KindRun)
	hex := strings.Repeat("ab", 32)
	for name, want := range map[string]kind{
		"manifest.json":                    kindManifest,
		"signature":                        kindSignature,
		"specs.jsonl":                      kindRecords,
		"checkpoints.jsonl":                kindRecords,
		"events/" + run + ".jsonl":         kindEvents,
		"events/dlb_" + run[4:] + ".jsonl": kindEvents,
		"blobs/sha256/" + hex:              kindBlob,
		"/manifest.json":                   kindBad,
		"./manifest.json":                  kindBad,
		"../specs.jsonl":                   kindBad,
		"events/../../" + run + ".jsonl":   kindBad,
		"events/" + run + ".jsonl/x":       kindBad,
		"events/sub/" + run + ".jsonl":     kindBad,
		"events/" + backend.NewID(backend.KindWorld) + ".jsonl": kindBad,
		"blobs/sha256/" + strings.ToUpper(hex):                  kindBad,
		"blobs/sha256/" + hex + "/..":                           kindBad,
		"blobs/sha256/../" + hex[:61]:                           kindBad,
		"blobs/" + hex:                                          kindBad,
		"":                                                      kindBad,
		"C:\\evil":                                              kindBad,
	} {
		got, _ := classify(name)
		require.Equal(t, want, got, name)
	}
}

func TestBudgetReaderStopsAtTheDeclaredSize(t *testing.T) {
	t.Parallel()
	b := &budgetReader{r: bytes.NewReader(make([]byte, 10_000)), max: 4096}
	n, err := io.Copy(io.Discard, b)
	require.Equal(t, backend.ELIMIT, backend.ErrorCode(err))
	require.LessOrEqual(t, n, int64(4097))
	require.ErrorContains(t, err, "decompression bomb")

	b = &budgetReader{r: bytes.NewReader(make([]byte, 4096)), max: 4096}
	n, err = io.Copy(io.Discard, b)
	require.NoError(t, err)
	require.EqualValues(t, 4096, n)
}
