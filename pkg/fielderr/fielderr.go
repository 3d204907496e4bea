// Package fielderr is the one error type for input the caller must fix, field by
// field. Libraries (pkg/store) and service logic (search's pipeline, the crawler's
// engine) return a *fielderr.Error; pkg/httpserver's error mapper answers it with a
// 400 problem document whose field member is Field and whose detail is Reason. The
// package has no dependencies so that any layer can return the type without
// importing HTTP code.
package fielderr

import "fmt"

// Error is a request or argument field at fault.
type Error struct {
	// Field names the field as the client wrote it: "q", "max_pages",
	// "document.chunks[2].text".
	Field string
	// Reason says what is wrong and what to send instead; it is shown to the client.
	Reason string
	// Err, when set, is a sentinel or cause the error wraps (store.ErrInvalid), so
	// that errors.Is works; it is not shown to the client.
	Err error
}

// New returns the error for field with the given reason.
func New(field, reason string) *Error { return &Error{Field: field, Reason: reason} }

// Newf is New with a formatted reason.
func Newf(field, format string, args ...any) *Error {
	return &Error{Field: field, Reason: fmt.Sprintf(format, args...)}
}

func (e *Error) Error() string { return e.Field + ": " + e.Reason }

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }
