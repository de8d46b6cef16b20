package backend_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"ducklm/backend"
)

// A regular expression matches exactly what RE2's case-insensitive
// matching over the whole line matches, however the matcher gets there
// (it starts at the first place the pattern's literal prefix occurs).
func TestARegularExpressionMatchesAsRE2Does(t *testing.T) {
	t.Parallel()
	lines := []string{
		`world.event run_7 #12 {"kind":"reading","value":7}`,
		`world.event run_7 #13 {"kind":"reading","VALUE": 7,"x":1}`,
		`world.event run_7 #14 {"kind":"reading","value":70}`,
		`world.event run_7 #15 {"value":1,"other":{"value":7}}`,
		`world.event run_7 #16 {"kind":"Kelvin \u212a","value":7}`,
		`world.event run_7 #17 {"note":"\u017fkip","value":7}`,
		`world.step run_7 #18 {"action":null}`,
		`TOOL.RESULT run_7 #19 {"kind":"alarm level"}`,
		``,
	}
	for _, pattern := range []string{
		`"value":\s*7\b`, `"kind":"k`, `skip`, `tool\.result .* #\d+`, `^world\.event`, `alarm|reading`,
		`"value":7$`, `value":\s*7\}\}`, `#1[3-5] `, `(?-i)"VALUE"`, `x*`, `run_7 #1\d \{"value`,
	} {
		re := regexp.MustCompile("(?i)" + pattern)
		match, err := backend.EventText{Text: pattern, Regex: true}.Matcher()
		require.NoError(t, err)
		for _, line := range lines {
			require.Equal(t, re.MatchString(line), match(line), "%q on %q", pattern, line)
		}
	}
}

// Plain text matches exactly what a search of the lower-cased line for the
// lower-cased text matches (letters outside ASCII included), however the
// matcher gets there.
func TestPlainTextMatchesAsLowerCasedContains(t *testing.T) {
	t.Parallel()
	lines := []string{
		`world.event run_7 #12 {"kind":"reading","value":7}`,
		`world.event run_7 #16 {"kind":"Kelvin \u212a","value":7}`,
		"world.event run_7 #16 {\"kind\":\"Kelvin \u212a\",\"value\":7}",
		"world.event run_7 #17 {\"note\":\"\u0130stanbul \u00dcBER\"}",
		`TOOL.RESULT run_7 #19 {"kind":"alarm level"}`,
		`step.finished run_7 #20 {"note":"100% done_now"}`,
		``,
	}
	for _, text := range []string{"k", "K", "kelvin k", "value", "alarm LEVEL", "tool.result run_7", "i", "istanbul", "über", "#1", "%", "zzz", "#17 {"} {
		match, err := backend.EventText{Text: text}.Matcher()
		require.NoError(t, err)
		for _, line := range lines {
			require.Equal(t, strings.Contains(strings.ToLower(line), strings.ToLower(text)), match(line), "%q on %q", text, line)
		}
	}
}

// BenchmarkRegexLine is one line of a history search by a regular
// expression with a literal prefix: the matcher against RE2 over the line.
func BenchmarkRegexLine(b *testing.B) {
	line := `world.event run_01a232cb9187772d9557f8b87fc5e4d2 #500003 {"kind":"reading","level":324141,"value":29}`
	re := regexp.MustCompile(`(?i)"value":\s*7\b`)
	match, err := backend.EventText{Text: `"value":\s*7\b`, Regex: true}.Matcher()
	require.NoError(b, err)
	b.Run("re2", func(b *testing.B) {
		for range b.N {
			re.MatchString(line)
		}
	})
	b.Run("matcher", func(b *testing.B) {
		for range b.N {
			match(line)
		}
	})
}
