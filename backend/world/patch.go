package world

import (
	"bytes"
	"encoding/json"

	"ducklm/backend"
)

// mergePatch applies an RFC 7386 JSON merge patch to doc.
func mergePatch(doc, patch json.RawMessage) (json.RawMessage, error) {
	d, err := decodeExact(doc)
	if err != nil {
		return nil, backend.Errorf(backend.EINVALID, "the state is not valid JSON")
	}
	p, err := decodeExact(patch)
	if err != nil {
		return nil, backend.Errorf(backend.EINVALID, "the patch is not valid JSON")
	}
	out, err := json.Marshal(merge(d, p))
	if err != nil {
		return nil, backend.Wrap(err, backend.EINVALID, "the patched state is not JSON")
	}
	return out, nil
}

// decodeExact decodes JSON keeping numbers as written (no float rounding).
func decodeExact(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	return out, nil
}

func merge(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	}
	for k, v := range p {
		if v == nil {
			delete(t, k)
			continue
		}
		t[k] = merge(t[k], v)
	}
	return t
}

// patchParameters changes parameters: the existing scalar values of the
// state's "params" object when it has one (as the Branching Grid does), else
// of the state's top level. It never adds, removes or reshapes structure.
func patchParameters(doc, patch json.RawMessage) (json.RawMessage, error) {
	var state map[string]json.RawMessage
	if err := json.Unmarshal(doc, &state); err != nil || state == nil {
		return nil, backend.Errorf(backend.EINVALID, "a parameter_change needs a state that is a JSON object")
	}
	var changes map[string]json.RawMessage
	if err := json.Unmarshal(patch, &changes); err != nil || changes == nil {
		return nil, backend.Errorf(backend.EINVALID, "a parameter_change delta is a JSON object of parameter values")
	}
	params, where := state, "the state"
	var nested map[string]json.RawMessage
	if raw, ok := state["params"]; ok && json.Unmarshal(raw, &nested) == nil && nested != nil {
		params, where = nested, `the state's "params"`
	}
	for k, v := range changes {
		old, ok := params[k]
		if !ok {
			return nil, backend.Errorf(backend.EINVALID, "%s has no parameter %q (a parameter_change only changes existing values; use state_patch to add)", where, k)
		}
		if !scalar(old) || !scalar(v) {
			return nil, backend.Errorf(backend.EINVALID, "%q is not a scalar parameter (use state_patch for structured changes)", k)
		}
	}
	if nested != nil {
		wrapped, _ := json.Marshal(map[string]json.RawMessage{"params": patch})
		return mergePatch(doc, wrapped)
	}
	return mergePatch(doc, patch)
}

func scalar(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	return len(v) > 0 && v[0] != '{' && v[0] != '[' && !bytes.Equal(v, []byte("null"))
}

func compactJSON(v json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return v
	}
	return b.Bytes()
}
