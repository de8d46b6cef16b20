package starlark

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"

	"ducklm/backend"

	sl "go.starlark.net/starlark"
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
	// Reject an oversized checkpoint before parsing it; the envelope around
	// the state is well under 256 bytes.
	max := w.prog.limits.MaxStateBytes
	if len(data) > max+256 {
		return backend.Errorf(backend.ELIMIT, "checkpoint is %d bytes, more than this program's state limit of %d allows", len(data), max)
	}
	ck, err := parseCheckpoint(data)
	if err != nil {
		return err
	}
	state, cerr := encodeJSON(ck.state, 0)
	if cerr != nil {
		return backend.Errorf(backend.ECORRUPT, "checkpoint state is not a world state: %v", cerr)
	}
	if len(state) > max {
		return backend.Errorf(backend.ELIMIT, "checkpoint state is %d bytes, more than this program's limit of %d", len(state), max)
	}
	var pcg rand.PCG
	if err := pcg.UnmarshalBinary(ck.rng); err != nil {
		return backend.Wrap(err, backend.ECORRUPT, "checkpoint RNG is not a PCG state")
	}
	if !bytes.Equal(appendCheckpoint(make([]byte, 0, len(data)), ck.done, ck.rng, ck.seed, state, ck.time), data) {
		return backend.Errorf(backend.ECORRUPT, "checkpoint bytes are not in canonical form; they were not written by CheckpointBytes or were altered")
	}
	w.state, w.rng, w.seed, w.time, w.done, w.ready = state, pcg, ck.seed, ck.time, ck.done, true
	return nil
}

type checkpointFields struct {
	done   bool
	format int64
	rng    []byte
	seed   uint64
	state  sl.Value
	time   int64
}

// parseCheckpoint reads the checkpoint envelope with the state parser, so a
// megabyte of state is parsed once, not once to split it out and again to
// check it. The seed is read as a uint64, which a state may not hold.
func parseCheckpoint(data []byte) (*checkpointFields, error) {
	var ck checkpointFields
	seen := map[string]bool{}
	var unknown []string
	p := parser{data: data}
	p.space()
	if p.pos >= len(data) || data[p.pos] != '{' {
		return nil, backend.Errorf(backend.ECORRUPT, "checkpoint is not a readable world checkpoint (not a JSON object)")
	}
	err := p.members(func(key string) error {
		if seen[key] {
			return fmt.Errorf("duplicate field %q", key)
		}
		seen[key] = true
		if key == "seed" {
			if p.pos >= len(data) || !(data[p.pos] >= '0' && data[p.pos] <= '9') {
				return fmt.Errorf("seed is not an unsigned integer")
			}
			text, float, err := p.number()
			if err != nil {
				return err
			}
			if ck.seed, err = strconv.ParseUint(text, 10, 64); err != nil || float {
				return fmt.Errorf("seed %s is not an unsigned 64-bit integer", clip(text))
			}
			return nil
		}
		v, err := p.value(1)
		if err != nil {
			return err
		}
		var ok bool
		switch key {
		case "state":
			ck.state, ok = v, true
		case "done":
			var b sl.Bool
			b, ok = v.(sl.Bool)
			ck.done = bool(b)
		case "format":
			ck.format, ok = int64Of(v)
		case "time":
			ck.time, ok = int64Of(v)
		case "rng":
			var s sl.String
			if s, ok = v.(sl.String); ok {
				ck.rng, err = base64.StdEncoding.DecodeString(string(s))
				if err != nil {
					return fmt.Errorf("rng is not valid base64")
				}
			}
		default:
			unknown = append(unknown, key)
			return nil
		}
		if !ok {
			return fmt.Errorf("field %q is a %s", key, v.Type())
		}
		return nil
	})
	if err == nil {
		if p.space(); p.pos != len(data) {
			err = errors.New("unexpected data after the checkpoint")
		}
	}
	if err != nil {
		return nil, backend.Errorf(backend.ECORRUPT, "checkpoint is not a readable world checkpoint: %v", err)
	}
	// The format decides what the other fields mean, so judge it first.
	switch {
	case !seen["format"]:
		return nil, corrupt("format")
	case ck.format != CheckpointFormat:
		return nil, backend.Errorf(backend.EINVALID, "checkpoint format %d is not supported; this version reads format %d",
			ck.format, CheckpointFormat)
	case len(unknown) > 0:
		return nil, backend.Errorf(backend.ECORRUPT, "checkpoint has an unknown field %q", unknown[0])
	}
	for _, f := range []string{"done", "rng", "seed", "state", "time"} {
		if !seen[f] {
			return nil, corrupt(f)
		}
	}
	if ck.time < 0 {
		return nil, backend.Errorf(backend.ECORRUPT, "checkpoint has a negative world-local time %d", ck.time)
	}
	return &ck, nil
}

func int64Of(v sl.Value) (int64, bool) {
	i, ok := v.(sl.Int)
	if !ok {
		return 0, false
	}
	return i.Int64()
}

func corrupt(field string) error {
	return backend.Errorf(backend.ECORRUPT, "checkpoint has no %q field", field)
}
