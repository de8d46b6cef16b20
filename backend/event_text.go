package backend

import (
	"regexp"
	"strconv"
	"strings"
)

// EventText is a text search over events. Text is looked for in an event's
// line, "TYPE STREAM #SEQ PAYLOAD", with case ignored: as plain text, or as
// a regular expression (RE2 syntax) when Regex. An empty Text matches every
// event.
type EventText struct {
	Text  string
	Regex bool
}

// EventLine is what a text search reads of e: "TYPE STREAM #SEQ PAYLOAD".
func EventLine(e Event) string {
	return e.Type + " " + e.Stream + " #" + strconv.FormatInt(e.Seq, 10) + " " + string(e.Payload)
}

// Matcher compiles t into a test of an event's line; nil when Text is empty
// (every event matches). A regular expression that does not compile is an
// EINVALID error that says why.
func (t EventText) Matcher() (func(line string) bool, error) {
	if t.Text == "" {
		return nil, nil
	}
	if !t.Regex {
		needle := strings.ToLower(t.Text)
		if !asciiOnly(needle) {
			return func(line string) bool { return strings.Contains(strings.ToLower(line), needle) }, nil
		}
		// An ASCII line is searched with its case folded in place, not
		// copied lower-cased first (on SQLite every encoded payload of a
		// history search is matched here). A line outside ASCII is
		// lower-cased whole, as before: Unicode folds letters such as the
		// Kelvin sign to ASCII ones.
		return func(line string) bool {
			at, ascii := indexFoldASCII(line, needle)
			if !ascii {
				return strings.Contains(strings.ToLower(line), needle)
			}
			return at >= 0
		}, nil
	}
	re, err := regexp.Compile("(?i)" + t.Text)
	if err != nil {
		why := strings.TrimPrefix(err.Error(), "error parsing regexp: ")
		return nil, Errorf(EINVALID, "the search is not a valid regular expression (%s)", why)
	}
	// RE2 skips to a literal prefix only when case matters, so "(?i)"
	// would run its machine from every byte of the line. Every match
	// begins with the pattern's literal prefix (as written, so also
	// case-insensitively), and nothing before a match's first literal
	// byte can change it: matching from the first place the prefix occurs,
	// ASCII case folded, finds what the whole line does, in a fraction of
	// the time (a 1M-event history search is mostly this). A line outside
	// ASCII is matched whole: Unicode folds K and S to non-ASCII letters.
	var prefix string
	if cased, err := regexp.Compile(t.Text); err == nil {
		prefix, _ = cased.LiteralPrefix()
	}
	if prefix == "" || !asciiOnly(prefix) {
		return re.MatchString, nil
	}
	prefix = strings.ToLower(prefix)
	return func(line string) bool {
		at, ascii := indexFoldASCII(line, prefix)
		if !ascii {
			return re.MatchString(line)
		}
		return at >= 0 && re.MatchString(line[at:])
	}, nil
}

// indexFoldASCII is the first index of lower (lower-case ASCII) in s with
// ASCII case folded, or -1; ascii is false when s holds a byte outside
// ASCII, and then the index is not looked for.
func indexFoldASCII(s, lower string) (at int, ascii bool) {
	at = -1
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			return -1, false
		}
		if at < 0 && i+len(lower) <= len(s) && foldASCII(c) == lower[0] {
			j := 1
			for j < len(lower) && foldASCII(s[i+j]) == lower[j] {
				j++
			}
			if j == len(lower) {
				at = i
			}
		}
	}
	return at, true
}

func foldASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func asciiOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
