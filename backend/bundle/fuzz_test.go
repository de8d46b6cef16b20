package bundle_test

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"

	"ducklm/backend"
	"ducklm/backend/bundle"
)

// FuzzReadBundle feeds the reader arbitrary files. The first byte picks
// what the rest is: 0, the file as it is (mostly stopped by zstd); 1, a tar
// stream the test compresses, so mutations reach the archive, manifest,
// signature, records and events. The reader must never panic, must answer
// within a bounded time, and must call every refusal a corrupt or
// over-limit bundle. Run it with a bounded minimisation, which by default
// spends 60 s on each new ~30 KB input:
//
//	go test -run '^$' -fuzz FuzzReadBundle -fuzztime 60s -fuzzminimizetime 100x ./backend/bundle/
func FuzzReadBundle(f *testing.F) {
	fx := setup(f)
	_, child := fx.grid(f, 3)
	key, err := bundle.LoadOrCreateKey(fx.dir)
	require.NoError(f, err)
	valid := fx.export(f, child.ID, bundle.ExportOptions{Ancestry: true, Key: &key})
	zr, err := zstd.NewReader(bytes.NewReader(valid))
	require.NoError(f, err)
	raw, err := io.ReadAll(zr)
	require.NoError(f, err)
	zr.Close()
	f.Add(append([]byte{0}, valid...))
	f.Add(append([]byte{1}, raw...))
	f.Add(append([]byte{1}, raw[:len(raw)/3]...))
	f.Add(append([]byte{0}, valid[:len(valid)/2]...))
	f.Add([]byte{1})

	enc, err := zstd.NewWriter(nil)
	require.NoError(f, err)
	limits := bundle.Limits{MaxEntries: 64, MaxEntryBytes: 256 << 10, MaxRecordsBytes: 128 << 10, MaxLineBytes: 32 << 10,
		MaxTotalBytes: 1 << 20, MaxWindowBytes: 1 << 20, MaxSignatureSize: 1 << 10}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		in := data[1:]
		if data[0]%2 == 1 {
			in = enc.EncodeAll(in, nil)
		}
		type answer struct {
			rep bundle.Report
			err error
		}
		done := make(chan answer, 1)
		go func() {
			rep, err := bundle.Verify(fx.ctx, bundle.Local{}, bytes.NewReader(in), bundle.VerifyOptions{Limits: limits})
			done <- answer{rep, err}
		}()
		var rep bundle.Report
		select {
		case a := <-done:
			rep, err = a.rep, a.err
		case <-time.After(5 * time.Second):
			t.Fatalf("verification did not end within 5 s")
		}
		if err == nil {
			require.True(t, rep.OK)
			return
		}
		require.False(t, rep.OK)
		code := backend.ErrorCode(err)
		require.Contains(t, []string{backend.ECORRUPT, backend.ELIMIT}, code, "%v", err)
		require.NotEmpty(t, rep.Problem)
	})
}
