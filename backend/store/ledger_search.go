package store

import (
	"context"
	"database/sql/driver"
	"fmt"
	"regexp/syntax"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	gosqlite "modernc.org/sqlite"

	"ducklm/backend"
)

// A history search reads a million events in seconds only if the database
// picks the matches: handing every row to Go costs ~6 µs a row in this
// driver (6.3 s for 1M events, measured), while SQLite's own LIKE over the
// payload and type costs ~1 µs. So plain ASCII text is matched in SQL, field
// by field; what SQL cannot match the way Go does (regular expressions,
// letters outside ASCII, whose case SQLite does not fold) goes through
// matchFunc, a Go function called by SQLite with only the fields a line is
// made of.

// matchFunc is the SQL function that tests an event's line with a matcher
// registered in matchers: matchFunc(key, type, stream, seq, payload).
const matchFunc = "ducklm_line_match"

var (
	matchers   sync.Map // key (string) -> func(line string) bool
	matcherKey atomic.Int64
)

func init() {
	err := gosqlite.RegisterDeterministicScalarFunction(matchFunc, 5, func(_ *gosqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		key, _ := args[0].(string)
		m, ok := matchers.Load(key)
		if !ok {
			return nil, fmt.Errorf("no search %q is running", key)
		}
		typ, _ := args[1].(string)
		stream, _ := args[2].(string)
		seq, _ := args[3].(int64)
		var line string
		switch p := args[4].(type) {
		case []byte: // an encoded payload
			json, err := readPayload(p)
			if err != nil {
				return nil, err
			}
			line = typ + " " + stream + " #" + strconv.FormatInt(seq, 10) + " " + string(json)
		default:
			payload, _ := p.(string)
			line = typ + " " + stream + " #" + strconv.FormatInt(seq, 10) + " " + payload
		}
		return m.(func(string) bool)(line), nil
	})
	if err != nil {
		panic(err) // only a second registration of the same name fails
	}
}

// Search implements world.Events: the events q selects whose line t
// matches, in seq order (pos order without a stream). It reads only the
// matches into Go.
func (l *Ledger) Search(ctx context.Context, q backend.EventQuery, t backend.EventText) ([]backend.Event, error) {
	match, err := t.Matcher()
	if err != nil {
		return nil, err
	}
	if match == nil {
		return l.Query(ctx, q)
	}
	where, args, err := queryWhere(q)
	if err != nil {
		return nil, err
	}
	cond, condArgs, done := textCondition(l.db.dialect, q.Stream, t, match)
	if done != nil {
		defer done()
	}
	if cond != "" {
		where = append(where, cond)
		args = append(args, condArgs...)
	}
	stmt := "SELECT " + eventColumns + " FROM events"
	if len(where) > 0 {
		stmt += " WHERE " + strings.Join(where, " AND ")
	}
	if done != nil {
		stmt += orderAndLimit(q, &args)
		return l.query(ctx, stmt, min(max(q.Limit, 0), 4096), args...)
	}
	// A database without Go functions (PostgreSQL) reads the candidates
	// and Go decides, up to the limit.
	limit := q.Limit
	q.Limit = 0
	stmt += orderAndLimit(q, &args)
	events, err := l.query(ctx, stmt, 64, args...)
	if err != nil {
		return nil, err
	}
	out := events[:0]
	for _, e := range events {
		if match(e.Type + " " + e.Stream + " #" + strconv.FormatInt(e.Seq, 10) + " " + string(e.Payload)) {
			out = append(out, e)
			if limit > 0 && len(out) == limit {
				break
			}
		}
	}
	return out, nil
}

// textCondition is the SQL condition for t over events of stream (""
// for any), its arguments, and what to call once the query has run. Where
// the database has no Go functions (PostgreSQL) the condition only picks
// candidates for a regular expression or text outside ASCII, and the
// returned func is nil: the caller matches in Go.
//
// On SQLite a payload may be encoded (payload.go): a BLOB that LIKE cannot
// read. Such rows go to the Go function, which decodes them; rows of JSON
// text keep the LIKE conditions.
func textCondition(d *Dialect, stream string, t backend.EventText, match func(string) bool) (string, []any, func()) {
	like := " LIKE "
	if d.Name == "postgres" {
		like = " ILIKE " // SQLite's LIKE folds ASCII case; PostgreSQL's does not
	}
	goFunc := d.Name == "sqlite"
	var key string
	register := func() func() {
		key = strconv.FormatInt(matcherKey.Add(1), 10)
		matchers.Store(key, match)
		return func() { matchers.Delete(key) }
	}
	needle := strings.ToLower(t.Text)
	if !t.Regex && isASCII(needle) {
		if stream != "" && strings.Contains(strings.ToLower(stream), needle) {
			return "", nil, func() {} // every line holds its stream's id
		}
		cond, args := likeCondition(like, stream, needle)
		if !goFunc {
			return cond, args, func() {}
		}
		done := register()
		return `(CASE WHEN typeof(payload) = 'blob' THEN ` + matchFunc + `(?, type, stream_id, seq, payload) ELSE ` + cond + ` END)`,
			append([]any{key}, args...), done
	}
	var cond string
	var args []any
	// Every match of a regular expression holds its required literals in
	// order: the database's LIKE picks the candidates, Go decides. Over
	// 1M events, `"value":\s*7\b` hands Go the ~100k events whose payload
	// holds `"value":` and a 7 after it instead of the ~520k that hold
	// `"value":` (each call from SQLite into Go costs ~2 µs of CPU). An
	// encoded payload is always a candidate.
	if t.Regex {
		if pre, preArgs := requiredCondition(like, stream, t.Text); pre != "" {
			cond, args = pre, preArgs
			if goFunc {
				cond = `(typeof(payload) = 'blob' OR ` + pre + `)`
			}
		}
	}
	if !goFunc {
		return cond, args, nil
	}
	done := register()
	call := matchFunc + "(?, type, stream_id, seq, payload)"
	if cond != "" {
		return cond + " AND " + call, append(args, key), done
	}
	return call, []any{key}, done
}

// likeCondition is the SQL condition that an event's line holds needle
// (lower case, ASCII), with LIKE (or ILIKE), and its arguments.
func likeCondition(like, stream, needle string) (string, []any) {
	pattern := "%" + likeEscaper.Replace(needle) + "%"
	if strings.Contains(needle, " ") {
		// The needle may span fields: match the whole line.
		return `(type || ' ' || stream_id || ' #' || seq || ' ' || payload)` + like + `? ESCAPE '\'`, []any{pattern}
	}
	// Every separator of a line holds a space, so a needle without one
	// lies inside one field.
	return fieldCondition(like, stream, needle, pattern, pattern)
}

// fieldCondition is the SQL condition that one field of an event's line
// holds needle (lower case, ASCII, no space): the payload matching
// payloadPattern, or the type, the stream (when the search spans streams)
// or the "#seq" field (when needle could be part of one) matching pattern.
func fieldCondition(like, stream, needle, payloadPattern, pattern string) (string, []any) {
	cond := `(payload` + like + `? ESCAPE '\' OR type` + like + `? ESCAPE '\'`
	args := []any{payloadPattern, pattern}
	if stream == "" {
		cond += ` OR stream_id` + like + `? ESCAPE '\'`
		args = append(args, pattern)
	}
	if strings.Trim(needle, "#0123456789") == "" {
		cond += ` OR ('#' || seq)` + like + `? ESCAPE '\'`
		args = append(args, pattern)
	}
	return cond + ")", args
}

// requiredCondition is a SQL condition every event whose line pattern
// matches passes ("" when there is none to say), and its arguments.
func requiredCondition(like, stream, pattern string) (string, []any) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return "", nil
	}
	pieces := requiredPieces(re.Simplify())
	if len(pieces) == 0 {
		return "", nil
	}
	all := "%"
	for _, p := range pieces {
		all += likeEscaper.Replace(strings.ToLower(p)) + "%"
	}
	first := strings.ToLower(pieces[0])
	line := `(type || ' ' || stream_id || ' #' || seq || ' ' || payload)` + like + `? ESCAPE '\'`
	if strings.Contains(first, " ") || (stream != "" && strings.Contains(strings.ToLower(stream), first)) {
		// The match may start in any field: the pieces are in the line.
		return line, []any{all}
	}
	// The first piece lies inside one field (every separator holds a
	// space). Where it lies in the payload, the last field, the match and
	// so every later piece lie there too; elsewhere the first piece alone
	// says the event may match.
	return fieldCondition(like, stream, first, all, "%"+likeEscaper.Replace(first)+"%")
}

// requiredPieces returns ASCII strings that every match of re holds, in
// this order and apart, or none.
func requiredPieces(re *syntax.Regexp) []string {
	switch re.Op {
	case syntax.OpLiteral:
		if s := string(re.Rune); s != "" && isASCII(s) {
			return []string{s}
		}
	case syntax.OpConcat:
		var out []string
		for _, sub := range re.Sub {
			out = append(out, requiredPieces(sub)...)
		}
		return out
	case syntax.OpCapture, syntax.OpPlus:
		return requiredPieces(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredPieces(re.Sub[0])
		}
	}
	return nil
}

// likeEscaper escapes LIKE's wildcards (and its escape character).
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
