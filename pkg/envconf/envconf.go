// Package envconf reads service configuration from environment variables. A Reader
// collects every malformed value so that a service refuses to start with one message
// naming each bad variable, instead of failing on the first or silently using a default.
package envconf

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"
)

// Reader reads typed values; call Err after the last read.
type Reader struct {
	lookup func(string) (string, bool)
	errs   []error
}

// New reads from the process environment.
func New() *Reader { return &Reader{lookup: os.LookupEnv} }

// FromMap reads from a map (tests).
func FromMap(m map[string]string) *Reader {
	return &Reader{lookup: func(k string) (string, bool) { v, ok := m[k]; return v, ok }}
}

// FromFunc reads through getenv (os.Getenv, or a test's function); an empty
// value counts as unset.
func FromFunc(getenv func(string) string) *Reader {
	return &Reader{lookup: func(k string) (string, bool) { v := getenv(k); return v, v != "" }}
}

func (r *Reader) get(key string) (string, bool) {
	v, ok := r.lookup(key)
	if !ok {
		return "", false
	}
	v = strings.TrimSpace(v)
	return v, v != ""
}

func (r *Reader) fail(key, v, want string) {
	r.errs = append(r.errs, fmt.Errorf("%s=%q: %s", key, v, want))
}

// String returns the value or def.
func (r *Reader) String(key, def string) string {
	if v, ok := r.get(key); ok {
		return v
	}
	return def
}

// Int returns the value or def; a non-integer is recorded as an error.
func (r *Reader) Int(key string, def int) int {
	v, ok := r.get(key)
	if !ok {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		r.fail(key, v, "want an integer")
		return def
	}
	return n
}

// Int64 is Int for sizes.
func (r *Reader) Int64(key string, def int64) int64 {
	v, ok := r.get(key)
	if !ok {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		r.fail(key, v, "want an integer")
		return def
	}
	return n
}

// Float returns the value or def.
func (r *Reader) Float(key string, def float64) float64 {
	v, ok := r.get(key)
	if !ok {
		return def
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		r.fail(key, v, "want a number")
		return def
	}
	return f
}

// Bool accepts 1/0, true/false, yes/no, on/off.
func (r *Reader) Bool(key string, def bool) bool {
	v, ok := r.get(key)
	if !ok {
		return def
	}
	switch strings.ToLower(v) {
	case "1", "true", "yes", "on":
		return true
	case "0", "false", "no", "off":
		return false
	}
	r.fail(key, v, "want true or false")
	return def
}

// Duration accepts Go durations ("500ms", "2m").
func (r *Reader) Duration(key string, def time.Duration) time.Duration {
	v, ok := r.get(key)
	if !ok {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		r.fail(key, v, "want a duration such as 500ms or 2m")
		return def
	}
	return d
}

// List splits a comma-separated value, dropping empty items.
func (r *Reader) List(key string, def []string) []string {
	v, ok := r.get(key)
	if !ok {
		return def
	}
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// LogLevel accepts debug, info, warn or error.
func (r *Reader) LogLevel(key string, def slog.Level) slog.Level {
	v, ok := r.get(key)
	if !ok {
		return def
	}
	var l slog.Level
	if err := l.UnmarshalText([]byte(v)); err != nil {
		r.fail(key, v, "want debug, info, warn or error")
		return def
	}
	return l
}

// Parse hands a set value to parse, which stores it; a parse error is recorded
// naming the variable. An unset or empty variable leaves the default alone.
func (r *Reader) Parse(key string, parse func(string) error) {
	v, ok := r.get(key)
	if !ok {
		return
	}
	if err := parse(v); err != nil {
		r.fail(key, v, err.Error())
	}
}

// Secret reads a value from KEY, or from the file named by KEY_FILE.
func (r *Reader) Secret(key string) string {
	if v, ok := r.get(key); ok {
		return v
	}
	if path, ok := r.get(key + "_FILE"); ok {
		b, err := os.ReadFile(path) //nolint:gosec // G304: reading the file the operator named in KEY_FILE is the point
		if err != nil {
			r.errs = append(r.errs, fmt.Errorf("%s_FILE=%q: cannot read: %w", key, path, err))
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	return ""
}

// Err returns every malformed value, or nil.
func (r *Reader) Err() error { return errors.Join(r.errs...) }
