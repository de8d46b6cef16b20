package starlark

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	sl "go.starlark.net/starlark"
)

// parser reads JSON straight into Starlark values. It exists because every
// call decodes the whole state: going through encoding/json's token stream
// cost ten times as much for a megabyte of state. It follows RFC 8259, and
// like encoding/json it turns invalid UTF-8 and lone surrogates into U+FFFD.
type parser struct {
	data []byte
	pos  int
}

var errEnd = errors.New("unexpected end of input")

func decodeJSON(data []byte) (sl.Value, error) {
	p := parser{data: data}
	p.space()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos != len(p.data) {
		return nil, p.errorf("unexpected data after the value")
	}
	return v, nil
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("at byte %d: %s", p.pos, fmt.Sprintf(format, args...))
}

func (p *parser) space() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// expect consumes c after optional whitespace.
func (p *parser) expect(c byte) error {
	p.space()
	if p.pos >= len(p.data) {
		return errEnd
	}
	if p.data[p.pos] != c {
		return p.errorf("invalid character %q, expected %q", p.data[p.pos], c)
	}
	p.pos++
	return nil
}

func (p *parser) value(depth int) (sl.Value, error) {
	if depth > maxNesting {
		return nil, fmt.Errorf("nested more than %d levels deep", maxNesting)
	}
	if p.pos >= len(p.data) {
		return nil, errEnd
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		s, err := p.string()
		return sl.String(s), err
	case c == '-' || c >= '0' && c <= '9':
		text, float, err := p.number()
		if err != nil {
			return nil, err
		}
		return decodeNumber(text, float)
	case c == 'n':
		return sl.None, p.literal("null")
	case c == 't':
		return sl.True, p.literal("true")
	case c == 'f':
		return sl.False, p.literal("false")
	default:
		return nil, p.errorf("invalid character %q looking for a value", c)
	}
}

func (p *parser) literal(word string) error {
	if !strings.HasPrefix(string(p.data[p.pos:min(len(p.data), p.pos+len(word))]), word) {
		return p.errorf("invalid literal, expected %s", word)
	}
	p.pos += len(word)
	return nil
}

func (p *parser) array(depth int) (sl.Value, error) {
	p.pos++ // '['
	var elems []sl.Value
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return sl.NewList(elems), nil
	}
	for {
		p.space()
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		elems = append(elems, v)
		p.space()
		if p.pos >= len(p.data) {
			return nil, errEnd
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			return sl.NewList(elems), nil
		default:
			return nil, p.errorf("invalid character %q after an array element", p.data[p.pos])
		}
	}
}

type member struct {
	key string
	val sl.Value
}

func (p *parser) object(depth int) (sl.Value, error) {
	var members []member
	err := p.members(func(key string) error {
		v, err := p.value(depth + 1)
		if err != nil {
			return err
		}
		members = append(members, member{key, v})
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Sorted insertion makes a dict's iteration order a function of its
	// content alone. Canonical input is sorted already, so check first.
	cmp := func(a, b member) int { return strings.Compare(a.key, b.key) }
	if !slices.IsSortedFunc(members, cmp) {
		slices.SortStableFunc(members, cmp)
	}
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

// members walks an object, calling each with the parser positioned at the
// member's value, which each must consume.
func (p *parser) members(each func(key string) error) error {
	p.pos++ // '{'
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return nil
	}
	for {
		p.space()
		if p.pos >= len(p.data) {
			return errEnd
		}
		if p.data[p.pos] != '"' {
			return p.errorf("invalid character %q looking for an object key", p.data[p.pos])
		}
		key, err := p.string()
		if err != nil {
			return err
		}
		if err := p.expect(':'); err != nil {
			return err
		}
		p.space()
		if err := each(key); err != nil {
			return err
		}
		p.space()
		if p.pos >= len(p.data) {
			return errEnd
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			return nil
		default:
			return p.errorf("invalid character %q after an object member", p.data[p.pos])
		}
	}
}

// number scans -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)? and reports whether it
// has a fraction or exponent, which is what makes it a float.
func (p *parser) number() (text string, float bool, err error) {
	start := p.pos
	digits := func() int {
		n := 0
		for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	if p.data[p.pos] == '-' {
		p.pos++
	}
	if p.pos < len(p.data) && p.data[p.pos] == '0' {
		p.pos++
	} else if digits() == 0 {
		return "", false, p.errorf("invalid number")
	}
	if p.pos < len(p.data) && p.data[p.pos] == '.' {
		p.pos++
		float = true
		if digits() == 0 {
			return "", false, p.errorf("invalid number: no digits after '.'")
		}
	}
	if p.pos < len(p.data) && (p.data[p.pos] == 'e' || p.data[p.pos] == 'E') {
		p.pos++
		float = true
		if p.pos < len(p.data) && (p.data[p.pos] == '+' || p.data[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return "", false, p.errorf("invalid number: no digits in the exponent")
		}
	}
	return string(p.data[start:p.pos]), float, nil
}

func decodeNumber(s string, float bool) (sl.Value, error) {
	if float {
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

func (p *parser) string() (string, error) {
	p.pos++ // '"'
	start := p.pos
	// Fast path: plain ASCII without escapes, the common case.
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		if c == '"' {
			s := string(p.data[start:p.pos])
			p.pos++
			return s, nil
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
		p.pos++
	}
	buf := append([]byte(nil), p.data[start:p.pos]...)
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return string(buf), nil
		case c < 0x20:
			return "", p.errorf("invalid control character %q in a string", c)
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(p.data[p.pos:])
			buf = utf8.AppendRune(buf, r) // RuneError for invalid bytes
			p.pos += size
		case c != '\\':
			buf = append(buf, c)
			p.pos++
		default:
			var err error
			if buf, err = p.escape(buf); err != nil {
				return "", err
			}
		}
	}
	return "", errEnd
}

func (p *parser) escape(buf []byte) ([]byte, error) {
	p.pos++ // '\\'
	if p.pos >= len(p.data) {
		return nil, errEnd
	}
	c := p.data[p.pos]
	p.pos++
	switch c {
	case '"', '\\', '/':
		return append(buf, c), nil
	case 'b':
		return append(buf, '\b'), nil
	case 'f':
		return append(buf, '\f'), nil
	case 'n':
		return append(buf, '\n'), nil
	case 'r':
		return append(buf, '\r'), nil
	case 't':
		return append(buf, '\t'), nil
	case 'u':
		r, err := p.hex4()
		if err != nil {
			return nil, err
		}
		if utf16.IsSurrogate(r) {
			r2 := utf8.RuneError
			save := p.pos
			if p.pos+1 < len(p.data) && p.data[p.pos] == '\\' && p.data[p.pos+1] == 'u' {
				p.pos += 2
				if r2, err = p.hex4(); err != nil {
					return nil, err
				}
			}
			if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
				return utf8.AppendRune(buf, dec), nil
			}
			p.pos = save // a lone surrogate; the next escape stands alone
			r = utf8.RuneError
		}
		return utf8.AppendRune(buf, r), nil
	}
	return nil, p.errorf("invalid escape '\\%c' in a string", c)
}

func (p *parser) hex4() (rune, error) {
	if p.pos+4 > len(p.data) {
		return 0, errEnd
	}
	n, err := strconv.ParseUint(string(p.data[p.pos:p.pos+4]), 16, 32)
	if err != nil {
		return 0, p.errorf("invalid \\u escape")
	}
	p.pos += 4
	return rune(n), nil
}
