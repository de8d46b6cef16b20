package starlark

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"
	"strconv"

	"ducklm/backend"
)

// CheckpointFormat is the version written into every checkpoint. A reader
// refuses other versions rather than guess at them.
const CheckpointFormat = 1

// CheckpointBytes returns the world as canonical JSON:
//
//	{"done":false,"format":1,"rng":"<base64 of PCG.MarshalBinary>","seed":N,"state":<state>,"time":T}
//
// Keys are sorted and there is no whitespace, so equal worlds give equal
// bytes and the blob store keeps one copy. seed is the uint64 the world was
// initialized with, written in decimal even above 2^63.
func (w *World) CheckpointBytes() ([]byte, error) {
	if err := w.check(); err != nil {
		return nil, err
	}
	rng, err := w.rng.MarshalBinary()
	if err != nil {
		return nil, backend.Wrap(err, backend.EINTERNAL, "world RNG could not be saved")
	}
	return appendCheckpoint(make([]byte, 0, len(w.state)+128), w.done, rng, w.seed, w.state, w.time), nil
}

func appendCheckpoint(b []byte, done bool, rng []byte, seed uint64, state []byte, time int64) []byte {
	b = append(b, `{"done":`...)
	b = strconv.AppendBool(b, done)
	b = append(b, `,"format":`...)
	b = strconv.AppendInt(b, CheckpointFormat, 10)
	b = append(b, `,"rng":"`...)
	b = base64.StdEncoding.AppendEncode(b, rng)
	b = append(b, `","seed":`...)
	b = strconv.AppendUint(b, seed, 10)
	b = append(b, `,"state":`...)
	b = append(b, state...)
	b = append(b, `,"time":`...)
	b = strconv.AppendInt(b, time, 10)
	return append(b, '}')
}

// RestoreBytes replaces the world with a checkpoint made by CheckpointBytes
// (of a world of the same program). The bytes must be exactly canonical: a
// checkpoint that parses but is spelled differently is refused, because its
// digest would no longer name it. Damaged or foreign bytes fail with ECORRUPT,
// an unknown format with EINVALID, a state over the size limit with ELIMIT;
// on any error the world is unchanged.
func (w *World) RestoreBytes(data []byte) error {
	if w.terminated {
		return errTerminated()
	}
	var raw struct {
		Done   *bool           `json:"done"`
		Format *int            `json:"format"`
		RNG    *string         `json:"rng"`
		Seed   *uint64         `json:"seed"`
		State  json.RawMessage `json:"state"`
		Time   *int64          `json:"time"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return backend.Wrap(err, backend.ECORRUPT, "checkpoint is not a readable world checkpoint")
	}
	switch {
	case raw.Format == nil:
		return corrupt("format")
	case *raw.Format != CheckpointFormat:
		return backend.Errorf(backend.EINVALID, "checkpoint format %d is not supported; this version reads format %d",
			*raw.Format, CheckpointFormat)
	case raw.Done == nil:
		return corrupt("done")
	case raw.RNG == nil:
		return corrupt("rng")
	case raw.Seed == nil:
		return corrupt("seed")
	case raw.State == nil:
		return corrupt("state")
	case raw.Time == nil:
		return corrupt("time")
	case *raw.Time < 0:
		return backend.Errorf(backend.ECORRUPT, "checkpoint has a negative world-local time %d", *raw.Time)
	}

	rngBytes, err := base64.StdEncoding.DecodeString(*raw.RNG)
	if err != nil {
		return backend.Wrap(err, backend.ECORRUPT, "checkpoint RNG is not valid base64")
	}
	var pcg rand.PCG
	if err := pcg.UnmarshalBinary(rngBytes); err != nil {
		return backend.Wrap(err, backend.ECORRUPT, "checkpoint RNG is not a PCG state")
	}

	if max := w.prog.limits.MaxStateBytes; len(raw.State) > max {
		return backend.Errorf(backend.ELIMIT, "checkpoint state is %d bytes, more than this program's limit of %d", len(raw.State), max)
	}
	v, err := decodeJSON(raw.State)
	if err != nil {
		return backend.Wrap(err, backend.ECORRUPT, "checkpoint state is not valid JSON")
	}
	state, cerr := encodeJSON(v, 0)
	if cerr != nil {
		return backend.Wrap(cerr, backend.ECORRUPT, "checkpoint state is not a world state")
	}
	if !bytes.Equal(appendCheckpoint(nil, *raw.Done, rngBytes, *raw.Seed, state, *raw.Time), data) {
		return backend.Errorf(backend.ECORRUPT, "checkpoint bytes are not in canonical form; they were not written by CheckpointBytes or were altered")
	}

	w.state, w.rng, w.seed, w.time, w.done, w.ready = state, pcg, *raw.Seed, *raw.Time, *raw.Done, true
	return nil
}

func corrupt(field string) error {
	return backend.Errorf(backend.ECORRUPT, "checkpoint has no %q field", field)
}
