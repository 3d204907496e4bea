package httpserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/kgsearch/kgsearch/pkg/fielderr"
)

// Error separates what the client is told (Status, Title, Detail, Field) from what
// is logged (Err). Detail must say what to fix.
type Error struct {
	Status int
	Title  string
	Detail string
	// Field names the request field at fault, when there is one.
	Field string
	// Retry, when set on a 503 or 429, becomes the Retry-After header (seconds).
	Retry int
	Err   error
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("%d %s: %s", e.Status, e.Title, e.Detail)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// BadRequest is a 400 naming the field at fault.
func BadRequest(field, detail string) *Error {
	return &Error{Status: http.StatusBadRequest, Title: "invalid request", Field: field, Detail: detail}
}

// NotFound is a 404.
func NotFound(detail string) *Error {
	return &Error{Status: http.StatusNotFound, Title: "not found", Detail: detail}
}

// Conflict is a 409.
func Conflict(detail string) *Error {
	return &Error{Status: http.StatusConflict, Title: "conflict", Detail: detail}
}

// Unavailable is a 503 for a dependency that cannot be reached; err is logged only.
func Unavailable(detail string, err error) *Error {
	return &Error{Status: http.StatusServiceUnavailable, Title: "service unavailable", Detail: detail, Retry: 5, Err: err}
}

// Timeout is a 503 with Retry-After for work that ran out of time (a context
// deadline); err is logged only. See the package documentation for why 503.
func Timeout(detail string, err error) *Error {
	return &Error{Status: http.StatusServiceUnavailable, Title: "timeout", Detail: detail, Retry: 5, Err: err}
}

// Internal wraps an internal error as a 500; the client sees only a generic message.
func Internal(err error) *Error {
	return &Error{Status: http.StatusInternalServerError, Title: "internal error", Detail: "the server failed to handle the request; see the server log for this request id", Err: err}
}

// asError converts any error into an *Error: an *Error as it is, a body over the
// limit as 413, a *fielderr.Error as 400 naming its field, a context deadline as
// 503 with Retry-After, and anything else as an internal error.
func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return &Error{Status: http.StatusRequestEntityTooLarge, Title: "request body too large",
			Detail: fmt.Sprintf("the request body exceeds the limit of %d bytes", mbe.Limit), Err: err}
	}
	var fe *fielderr.Error
	if errors.As(err, &fe) {
		return &Error{Status: http.StatusBadRequest, Title: "invalid request", Field: fe.Field, Detail: fe.Reason, Err: err}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return Timeout("the request ran out of time; retry later", err)
	}
	return Internal(err)
}

// Problem is an RFC 9457 problem document.
type Problem struct {
	Type      string `json:"type"`
	Title     string `json:"title"`
	Status    int    `json:"status"`
	Detail    string `json:"detail,omitempty"`
	Instance  string `json:"instance,omitempty"`
	Field     string `json:"field,omitempty"`
	RequestID string `json:"request_id,omitempty"`
}
