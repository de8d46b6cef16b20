package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"

	"ducklm/backend"
	"ducklm/backend/api"
)

// method is one callable method of the facade.
type method struct {
	name     string
	fn       reflect.Value
	params   []reflect.Type
	hasValue bool // returns a value besides the error
	hasErr   bool // the last result is an error
}

var errorType = reflect.TypeFor[error]()

// methodsOf lists the exported methods of a whose results the UI can
// receive: (T, error), (error), T or nothing. Unexported methods are not in
// reflect's method set, so they can never be called.
func methodsOf(a *api.API) map[string]method {
	v := reflect.ValueOf(a)
	t := v.Type()
	out := map[string]method{}
	for i := range t.NumMethod() {
		m := t.Method(i)
		fn := v.Method(i)
		ft := fn.Type()
		if ft.IsVariadic() {
			continue
		}
		mm := method{name: m.Name, fn: fn}
		for j := range ft.NumIn() {
			mm.params = append(mm.params, ft.In(j))
		}
		switch ft.NumOut() {
		case 0:
		case 1:
			mm.hasErr = ft.Out(0) == errorType
			mm.hasValue = !mm.hasErr
		case 2:
			if ft.Out(1) != errorType {
				continue
			}
			mm.hasValue, mm.hasErr = true, true
		default:
			continue
		}
		out[m.Name] = mm
	}
	return out
}

// serveCall answers POST /api/call/{Method} with a JSON array of arguments.
func (s *Server) serveCall(w http.ResponseWriter, r *http.Request, name string) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		writeError(w, http.StatusMethodNotAllowed, "API calls are POST requests with a JSON array of arguments")
		return
	}
	m, ok := s.methods[name]
	if !ok {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("there is no API method %s", quote(name)))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the arguments of %s are larger than the %d MiB a call may send", name, MaxBodyBytes>>20))
			return
		}
		writeError(w, http.StatusBadRequest, "the request body could not be read")
		return
	}
	args, err := m.decode(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	value, err := s.invoke(m, args)
	if err != nil {
		status, msg := failure(err)
		writeError(w, status, msg)
		return
	}
	writeJSON(w, http.StatusOK, value)
}

// internalSentence is what the facade says for an unexpected failure; it is
// the one error that is the server's fault rather than the request's.
var internalSentence = backend.ErrorMessage(errors.New(""))

// decode reads the JSON array body into m's parameter types. An empty body
// is no arguments. Unknown object fields are ignored, as the window's
// bindings ignore them, so both transports accept the same calls.
func (m method) decode(body []byte) ([]reflect.Value, error) {
	var raw []json.RawMessage
	if len(bytes.TrimSpace(body)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(body))
		if err := dec.Decode(&raw); err != nil || raw == nil || dec.More() {
			return nil, fmt.Errorf("the body of a call to %s must be a JSON array of its arguments", m.name)
		}
	}
	if len(raw) != len(m.params) {
		return nil, fmt.Errorf("%s takes %s, but the call sent %d", m.name, m.describeParams(), len(raw))
	}
	args := make([]reflect.Value, len(raw))
	for i, p := range m.params {
		v := reflect.New(p)
		if err := json.Unmarshal(raw[i], v.Interface()); err != nil {
			return nil, fmt.Errorf("argument %d of %s %s", i+1, m.name, argProblem(p, err))
		}
		args[i] = v.Elem()
	}
	return args, nil
}

// describeParams says what m takes, e.g. "2 arguments (a string, a number)".
func (m method) describeParams() string {
	if len(m.params) == 0 {
		return "no arguments"
	}
	kinds := make([]string, len(m.params))
	for i, p := range m.params {
		kinds[i] = kindOf(p)
	}
	n := "1 argument"
	if len(m.params) > 1 {
		n = fmt.Sprintf("%d arguments", len(m.params))
	}
	return n + " (" + strings.Join(kinds, ", ") + ")"
}

// argProblem turns a decoding error into the end of a sentence.
func argProblem(p reflect.Type, err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := ""
		if te.Field != "" {
			field = " (at " + te.Field + ")"
		}
		got := te.Value
		if got != "" {
			got = ", not " + article(strings.Fields(got)[0])
		}
		return fmt.Sprintf("must be %s%s%s", kindOf(te.Type), got, field)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return "is not valid JSON"
	}
	return "must be " + kindOf(p)
}

// kindOf names the JSON value a Go type decodes from.
func kindOf(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Pointer:
		return kindOf(t.Elem())
	}
	return "a JSON value"
}

func article(jsonKind string) string {
	switch jsonKind {
	case "object", "array":
		return "an " + jsonKind
	case "bool":
		return "true or false"
	case "number", "string":
		return "a " + jsonKind
	}
	return jsonKind
}

// invoke calls m and returns its value (nil when it has none). A panic in a
// method is an internal error, logged, never a dropped connection.
func (s *Server) invoke(m method, args []reflect.Value) (value any, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("api call panicked", "method", m.name, "panic", p)
			value, err = nil, errors.New(internalSentence)
		}
	}()
	out := m.fn.Call(args)
	if m.hasErr {
		if e, _ := out[len(out)-1].Interface().(error); e != nil {
			return nil, e
		}
	}
	if m.hasValue {
		return out[0].Interface(), nil
	}
	return nil, nil
}

// failure returns the status and sentence of a method's error. The facade
// already turns errors into sentences (plain errors); a coded *backend.Error,
// should a method return one, is translated here once.
func failure(err error) (int, string) {
	var be *backend.Error
	msg := err.Error()
	internal := msg == internalSentence
	if errors.As(err, &be) {
		msg = backend.ErrorMessage(err)
		internal = be.Code == backend.EINTERNAL || msg == internalSentence
	}
	if internal {
		return http.StatusInternalServerError, internalSentence
	}
	return http.StatusUnprocessableEntity, msg
}
