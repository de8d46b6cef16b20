package starlark

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"ducklm/backend"

	sl "go.starlark.net/starlark"
)

// maxNesting bounds how deep arrays and objects may nest in either direction.
// It also turns a cyclic Starlark value (a list that contains itself) into an
// error instead of an endless recursion.
const maxNesting = 1000

// convError says why a value could not cross the JSON boundary. The world
// turns it into a sentence naming the program line and the function.
type convError struct {
	tooLarge bool   // the canonical bytes passed the size limit
	what     string // what was found instead of JSON ("set", "float nan", ...)
	path     string // where in the value, e.g. ["walls"][3]; "" for the root
}

func (e *convError) Error() string {
	if e.tooLarge {
		return "canonical JSON larger than the limit"
	}
	if e.path == "" {
		return e.what
	}
	return e.what + " (at " + e.path + ")"
}

// ToJSON returns the canonical JSON of v: objects with keys sorted by their
// UTF-8 bytes, no whitespace, integers in decimal, floats in the shortest
// round-trip form that always shows a '.' or an exponent (1.0, not 1), and
// strings with only '"', '\\' and control characters escaped. Equal values
// therefore always give equal bytes.
//
// Only None, bool, int (within int64), finite float, string (valid UTF-8),
// list, tuple and dict with string keys are JSON; anything else fails with
// EINVALID, and output longer than maxBytes (when > 0) fails with ELIMIT.
func ToJSON(v sl.Value, maxBytes int) ([]byte, error) {
	b, cerr := encodeJSON(v, maxBytes)
	if cerr != nil {
		if cerr.tooLarge {
			return nil, backend.Errorf(backend.ELIMIT, "value's canonical JSON is larger than %d bytes", maxBytes)
		}
		return nil, backend.Errorf(backend.EINVALID, "value is not JSON: %s", cerr)
	}
	return b, nil
}

// FromJSON parses one JSON value into fresh, unfrozen Starlark values:
// objects become dicts (keys inserted in sorted order, so iteration order
// never depends on how the input was written), arrays become lists, numbers
// without a fraction or exponent become ints (which must fit in int64) and
// all other numbers floats. Malformed input, duplicate keys or trailing data
// fail with EINVALID.
func FromJSON(data []byte) (sl.Value, error) {
	v, err := decodeJSON(data)
	if err != nil {
		return nil, backend.Wrap(err, backend.EINVALID, "value is not valid JSON")
	}
	return v, nil
}

// CanonicalJSON rewrites any JSON value into its canonical bytes (see
// [ToJSON]); it is how a caller normalises a state patch or an action before
// it hashes or stores it.
func CanonicalJSON(data []byte, maxBytes int) ([]byte, error) {
	v, err := FromJSON(data)
	if err != nil {
		return nil, err
	}
	return ToJSON(v, maxBytes)
}

func encodeJSON(v sl.Value, maxBytes int) ([]byte, *convError) {
	e := encoder{max: maxBytes}
	if err := e.value(v, 0); err != nil {
		return nil, err
	}
	return e.buf, nil
}

type encoder struct {
	buf []byte
	max int
}

func (e *encoder) value(v sl.Value, depth int) *convError {
	if depth > maxNesting {
		return &convError{what: fmt.Sprintf("a value nested more than %d levels deep (or one that contains itself)", maxNesting)}
	}
	switch v := v.(type) {
	case sl.NoneType:
		e.buf = append(e.buf, "null"...)
	case sl.Bool:
		e.buf = strconv.AppendBool(e.buf, bool(v))
	case sl.Int:
		i, ok := v.Int64()
		if !ok {
			return &convError{what: "int " + clip(v.String()) + " that does not fit in 64 bits"}
		}
		e.buf = strconv.AppendInt(e.buf, i, 10)
	case sl.Float:
		f := float64(v)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return &convError{what: "float " + v.String()}
		}
		e.buf = appendFloat(e.buf, f)
	case sl.String:
		if !utf8.ValidString(string(v)) {
			return &convError{what: "string that is not valid UTF-8"}
		}
		e.buf = appendString(e.buf, string(v))
	case *sl.List:
		if err := e.array(v, depth); err != nil {
			return err
		}
	case sl.Tuple:
		if err := e.array(v, depth); err != nil {
			return err
		}
	case *sl.Dict:
		if err := e.object(v, depth); err != nil {
			return err
		}
	default:
		return &convError{what: v.Type()}
	}
	// Checking after every value keeps the buffer near the limit even when a
	// program aliases one big list many times over.
	if e.max > 0 && len(e.buf) > e.max {
		return &convError{tooLarge: true}
	}
	return nil
}

func (e *encoder) array(v sl.Indexable, depth int) *convError {
	e.buf = append(e.buf, '[')
	for i := range v.Len() {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		if err := e.value(v.Index(i), depth+1); err != nil {
			err.path = "[" + strconv.Itoa(i) + "]" + err.path
			return err
		}
	}
	e.buf = append(e.buf, ']')
	return nil
}

func (e *encoder) object(d *sl.Dict, depth int) *convError {
	items := d.Items()
	keys := make([]string, len(items))
	byKey := make(map[string]sl.Value, len(items))
	for i, kv := range items {
		k, ok := kv[0].(sl.String)
		if !ok {
			return &convError{what: "dict with a key of type " + kv[0].Type()}
		}
		if !utf8.ValidString(string(k)) {
			return &convError{what: "dict key that is not valid UTF-8"}
		}
		keys[i] = string(k)
		byKey[string(k)] = kv[1]
	}
	slices.Sort(keys)
	e.buf = append(e.buf, '{')
	for i, k := range keys {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.buf = appendString(e.buf, k)
		e.buf = append(e.buf, ':')
		if err := e.value(byKey[k], depth+1); err != nil {
			err.path = "[" + strconv.Quote(k) + "]" + err.path
			return err
		}
	}
	e.buf = append(e.buf, '}')
	return nil
}

// appendFloat uses strconv's shortest round-trip 'g' form and adds ".0" when
// that form would read back as an int, so a float stays a float through a
// checkpoint.
func appendFloat(b []byte, f float64) []byte {
	start := len(b)
	b = strconv.AppendFloat(b, f, 'g', -1, 64)
	if bytes.ContainsAny(b[start:], ".e") {
		return b
	}
	return append(b, ".0"...)
}

// appendString escapes only what JSON requires, one fixed way, so there is a
// single canonical spelling of every string.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// clip keeps an error message one readable sentence when a program built an
// enormous int.
func clip(s string) string {
	if len(s) > 40 {
		return s[:20] + "..." + s[len(s)-10:]
	}
	return s
}

func decodeJSON(data []byte) (sl.Value, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("unexpected end of input")
		}
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder, depth int) (sl.Value, error) {
	if depth > maxNesting {
		return nil, fmt.Errorf("nested more than %d levels deep", maxNesting)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case nil:
		return sl.None, nil
	case bool:
		return sl.Bool(t), nil
	case string:
		return sl.String(t), nil
	case json.Number:
		return decodeNumber(string(t))
	case json.Delim:
		switch t {
		case '[':
			var elems []sl.Value
			for dec.More() {
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				elems = append(elems, v)
			}
			if _, err := dec.Token(); err != nil { // ']'
				return nil, err
			}
			return sl.NewList(elems), nil
		case '{':
			return decodeObject(dec, depth)
		}
	}
	return nil, fmt.Errorf("unexpected %v", tok)
}

func decodeObject(dec *json.Decoder, depth int) (sl.Value, error) {
	type member struct {
		key string
		val sl.Value
	}
	var members []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("object key %v is not a string", tok)
		}
		v, err := decodeValue(dec, depth+1)
		if err != nil {
			return nil, err
		}
		members = append(members, member{key, v})
	}
	if _, err := dec.Token(); err != nil { // '}'
		return nil, err
	}
	slices.SortStableFunc(members, func(a, b member) int { return strings.Compare(a.key, b.key) })
	d := sl.NewDict(len(members))
	for i, m := range members {
		if i > 0 && members[i-1].key == m.key {
			return nil, fmt.Errorf("duplicate object key %s", strconv.Quote(clip(m.key)))
		}
		if err := d.SetKey(sl.String(m.key), m.val); err != nil {
			return nil, err
		}
	}
	return d, nil
}

func decodeNumber(s string) (sl.Value, error) {
	if strings.ContainsAny(s, ".eE") {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsInf(f, 0) {
			return nil, fmt.Errorf("number %s is out of the float64 range", clip(s))
		}
		return sl.Float(f), nil
	}
	i, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("integer %s does not fit in 64 bits", clip(s))
	}
	return sl.MakeInt64(i), nil
}
