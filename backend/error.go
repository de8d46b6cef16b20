package backend

import (
	"errors"
	"fmt"
)

// Error codes. One error type with a code is translated once at the edge
// (app/, the CLI, the HTTP server) into what the user sees.
const (
	EINVALID     = "invalid"     // the input is malformed or breaks a rule
	ENOTFOUND    = "not_found"   // the thing named does not exist
	ECONFLICT    = "conflict"    // the request collides with what is stored
	ECORRUPT     = "corrupt"     // stored data failed verification
	EUNAVAILABLE = "unavailable" // a dependency (Ollama, bubblewrap, the display) is missing
	ELIMIT       = "limit"       // a resource limit was reached
	ECANCELLED   = "cancelled"   // the user stopped it before it finished
	EINTERNAL    = "internal"    // a bug or an unexpected failure
)

// Error is ducklm's one error type. Message is a sentence meant for a person;
// Err keeps the underlying cause for logs and errors.Is.
type Error struct {
	Code    string
	Message string
	Err     error
}

// Error implements error.
func (e *Error) Error() string {
	if e.Err != nil && e.Message == "" {
		return e.Err.Error()
	}
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with the given code and formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an *Error with code and message that keeps err as its cause.
func Wrap(err error, code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Err: err}
}

// ErrorCode returns the code of the first *Error in err's chain, EINTERNAL for
// any other non-nil error, and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the sentence a person should see for err. Internal
// errors that are not *Error never leak their text (it may hold SQL or paths
// the user cannot act on); they are logged by the caller instead.
func ErrorMessage(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		if e.Message != "" {
			return e.Message
		}
	}
	return "An internal error occurred; details are in the log."
}
