package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"ducklm/backend"
	"ducklm/backend/bwrap"
)

// decodeArgs reads a call's args into v, refusing unknown fields and
// trailing data, as the tool's schema does (additionalProperties: false).
func decodeArgs(tool string, raw json.RawMessage, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return backend.Wrap(err, backend.EINVALID, "the arguments of %s are not valid", tool)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return backend.Errorf(backend.EINVALID, "the arguments of %s hold more than one JSON value", tool)
	}
	return nil
}

// limits are the call's limits with defaults for what it left unset.
func limits(call backend.ToolCall) backend.Limits { return bwrap.FillLimits(call.Limits) }

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic("tool: result does not marshal: " + err.Error())
	}
	return b
}
