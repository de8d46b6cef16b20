package starlark

import (
	"bytes"
	"fmt"
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
		return nil, backend.Errorf(backend.EINVALID, "value is not valid JSON: %v", err)
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
	pairs := make([]member, len(items))
	for i, kv := range items {
		k, ok := kv[0].(sl.String)
		if !ok {
			return &convError{what: "dict with a key of type " + kv[0].Type()}
		}
		if !utf8.ValidString(string(k)) {
			return &convError{what: "dict key that is not valid UTF-8"}
		}
		pairs[i] = member{string(k), kv[1]}
	}
	// Dicts decoded from a state are in key order already.
	cmp := func(a, b member) int { return strings.Compare(a.key, b.key) }
	if !slices.IsSortedFunc(pairs, cmp) {
		slices.SortFunc(pairs, cmp) // keys are unique, so no need for stability
	}
	e.buf = append(e.buf, '{')
	for i, m := range pairs {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.buf = appendString(e.buf, m.key)
		e.buf = append(e.buf, ':')
		if err := e.value(m.val, depth+1); err != nil {
			err.path = "[" + strconv.Quote(m.key) + "]" + err.path
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
