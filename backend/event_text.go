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
		return func(line string) bool { return strings.Contains(strings.ToLower(line), needle) }, nil
	}
	re, err := regexp.Compile("(?i)" + t.Text)
	if err != nil {
		why := strings.TrimPrefix(err.Error(), "error parsing regexp: ")
		return nil, Errorf(EINVALID, "the search is not a valid regular expression (%s)", why)
	}
	return re.MatchString, nil
}
