package store

import (
	"errors"
	"fmt"

	"github.com/kgsearch/kgsearch/pkg/fielderr"
)

var (
	// ErrNotFound reports that the requested row does not exist.
	ErrNotFound = errors.New("store: not found")
	// ErrNotReady reports that the database is unreachable or the store is not yet
	// usable (for example no embedding model registered for vector operations).
	ErrNotReady = errors.New("store: not ready")
	// ErrModelMismatch is matched (errors.Is) by *ModelMismatchError and *DimensionError.
	ErrModelMismatch = errors.New("store: embedding model mismatch")
	// ErrInvalid is matched by *ValidationError: the caller passed bad input.
	ErrInvalid = errors.New("store: invalid input")
	// ErrLeaseLost reports that a claimed row is no longer held by the caller
	// (its lease expired and another worker took it, or it was never claimed).
	ErrLeaseLost = errors.New("store: lease lost")
	// ErrDuplicateJob is matched by *DuplicateJobError: a queued or running
	// job already has the key of the job to create.
	ErrDuplicateJob = errors.New("store: an identical job is active")
	// ErrWrittenSince reports that DeleteDocumentInJob kept a document because
	// it was written (fetched or updated) since the job started.
	ErrWrittenSince = errors.New("store: document written since the job started")
)

// Model names an embedding model and its vector width.
type Model struct {
	Name string
	Dims int
}

func (m Model) String() string { return fmt.Sprintf("%s (%d dims)", m.Name, m.Dims) }

// ModelMismatchError is returned when a store created with one embedding model is
// opened with another.
type ModelMismatchError struct {
	Registered Model // model recorded in the database
	Requested  Model // model the caller asked for
}

func (e *ModelMismatchError) Error() string {
	return fmt.Sprintf("embedding model mismatch: the store holds vectors of %s, refusing %s (re-embed into a new database to switch models)",
		e.Registered, e.Requested)
}

// Is makes errors.Is(err, ErrModelMismatch) true.
func (e *ModelMismatchError) Is(target error) bool { return target == ErrModelMismatch }

// DimensionError is returned when a vector's length differs from the registered
// model's dimensions.
type DimensionError struct {
	Model Model
	Got   int
	What  string // which vector, e.g. "chunk 3" or "query"
}

func (e *DimensionError) Error() string {
	return fmt.Sprintf("%s vector has %d dimensions, the store's model %s needs %d", e.What, e.Got, e.Model, e.Model.Dims)
}

// Is makes errors.Is(err, ErrModelMismatch) true.
func (e *DimensionError) Is(target error) bool { return target == ErrModelMismatch }

// ValidationError names the field of a bad argument. It is the repository's one
// field-error type, which pkg/httpserver answers with a 400 naming Field; the store's
// wrap ErrInvalid.
type ValidationError = fielderr.Error

func invalid(field, format string, args ...any) error {
	return &ValidationError{Field: field, Reason: fmt.Sprintf(format, args...), Err: ErrInvalid}
}

// isASCII reports whether s can equal a value of an ASCII column (ids, domains).
// MariaDB refuses to compare a non-ASCII parameter with such a column (error 1267,
// illegal mix of collations) instead of finding no row, so callers answer "not
// found" or "invalid" before asking.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
