package store

import (
	"bytes"
	"sync"

	"github.com/klauspost/compress/zstd"

	"ducklm/backend"
)

// An event's payload is JSON. On SQLite a payload of at least
// minEncodedPayload bytes is stored as a zstd frame with ducklm's preset
// dictionary (payload_dict.go) when that is smaller: a step's result of
// ~780 B takes ~165. The frame is a BLOB and starts with zstd's magic
// number, which no JSON text starts with, so a reader tells the two apart
// by their first bytes, and databases written before read unchanged.
// PostgreSQL keeps plain JSON text: its history search has no Go function
// to decode with and matches in SQL (TOAST compresses its large values).
// So do world-local streams (simulated worlds, deliberation branches):
// their programs write thousands of events a second, which a frame would
// slow by ~7 µs each, and their long histories are what history search
// reads most, in SQL. Task runs (external_real) are what a user keeps, a
// few events a step, each behind a durable commit that costs far more.
//
// The decision is taken once, in payloadValue (every INSERT of events goes
// through insertEvents), and undone once, in readPayload (every read of a
// payload: the ledger's scans, the import's comparison, history search's
// matcher). Everything above the store sees JSON.

// minEncodedPayload is the smallest payload worth a frame: below it the
// frame's ~11 bytes of header and the row's few saved bytes do not pay.
const minEncodedPayload = 128

// zstdMagic starts every zstd frame.
var zstdMagic = []byte{0x28, 0xB5, 0x2F, 0xFD}

// The encoder and the decoder are made on first use (a process that never
// writes or reads an encoded payload never pays for them), and are safe for
// concurrent EncodeAll and DecodeAll.
var (
	payloadEncoder = sync.OnceValues(func() (*zstd.Encoder, error) {
		return zstd.NewWriter(nil,
			zstd.WithEncoderDictRaw(payloadDictID, []byte(payloadDict1)),
			zstd.WithEncoderLevel(zstd.SpeedFastest),
			zstd.WithEncoderCRC(false),
			zstd.WithEncoderConcurrency(2)) // appends take the store's write lock, one at a time
	})
	payloadDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
		return zstd.NewReader(nil,
			zstd.WithDecoderDictRaw(payloadDictID, []byte(payloadDict1)),
			// A frame states its size; no payload SQLite can hold is
			// larger, and a damaged frame claims no more memory than this.
			zstd.WithDecoderMaxMemory(1e9))
	})
)

// encodePayload returns p as a dictionary frame when that pays, else nil.
func encodePayload(p []byte) []byte {
	if len(p) < minEncodedPayload {
		return nil
	}
	enc, err := payloadEncoder()
	if err != nil {
		return nil // plain JSON is always a valid way to store it
	}
	frame := enc.EncodeAll(p, make([]byte, 0, len(p)/2))
	if len(frame) >= len(p) {
		return nil
	}
	return frame
}

// payloadValue is what an INSERT stores for payload p of an event of
// reality on d: a frame (a BLOB) where the dialect keeps encoded payloads,
// for an external_real event, when it pays; else the JSON text.
func payloadValue(d *Dialect, reality backend.Reality, p []byte) any {
	if d.Name == "sqlite" && reality == backend.ExternalReal {
		if frame := encodePayload(p); frame != nil {
			return frame
		}
	}
	return string(p)
}

// isFrame reports whether a stored payload is an encoded one.
func isFrame(stored []byte) bool {
	return bytes.HasPrefix(stored, zstdMagic)
}

// readPayload returns the JSON of a stored payload: stored itself when it
// is JSON text, the decoded frame otherwise.
func readPayload(stored []byte) ([]byte, error) {
	if !isFrame(stored) {
		return stored, nil
	}
	dec, err := payloadDecoder()
	if err != nil {
		return nil, backend.Wrap(err, backend.EINTERNAL, "cannot start the payload decoder")
	}
	p, err := dec.DecodeAll(stored, nil)
	if err != nil {
		return nil, backend.Wrap(err, backend.ECORRUPT, "its stored payload is damaged")
	}
	return p, nil
}
