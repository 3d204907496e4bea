package envconf

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestReader(t *testing.T) {
	r := FromMap(map[string]string{
		"A_INT": "42", "A_BAD_INT": "4x", "A_DUR": "250ms", "A_BAD_DUR": "soon",
		"A_BOOL": "yes", "A_LIST": " a, ,b ,c", "A_EMPTY": "  ",
	})
	if got := r.Int("A_INT", 1); got != 42 {
		t.Errorf("Int: got %d, want 42", got)
	}
	if got := r.Int("A_MISSING", 7); got != 7 {
		t.Errorf("Int default: got %d, want 7", got)
	}
	if got := r.Duration("A_DUR", time.Second); got != 250*time.Millisecond {
		t.Errorf("Duration: got %v, want 250ms", got)
	}
	if got := r.Bool("A_BOOL", false); !got {
		t.Errorf("Bool: got false, want true")
	}
	if diff := cmp.Diff([]string{"a", "b", "c"}, r.List("A_LIST", nil)); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	if got := r.String("A_EMPTY", "def"); got != "def" {
		t.Errorf("blank value: got %q, want the default", got)
	}
	if err := r.Err(); err != nil {
		t.Fatalf("unexpected error before bad reads: %v", err)
	}
	r.Int("A_BAD_INT", 0)
	r.Duration("A_BAD_DUR", 0)
	err := r.Err()
	if err == nil {
		t.Fatal("got nil error, want one naming A_BAD_INT and A_BAD_DUR")
	}
	for _, name := range []string{"A_BAD_INT", "A_BAD_DUR"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error %q does not name %s", err, name)
		}
	}
}

func TestLogLevel(t *testing.T) {
	r := FromMap(map[string]string{"L_OK": "debug", "L_BAD": "loud"})
	if got := r.LogLevel("L_OK", slog.LevelInfo); got != slog.LevelDebug {
		t.Errorf("LogLevel: got %v, want DEBUG", got)
	}
	if got := r.LogLevel("L_MISSING", slog.LevelWarn); got != slog.LevelWarn {
		t.Errorf("LogLevel default: got %v, want WARN", got)
	}
	if r.Err() != nil {
		t.Fatalf("unexpected error: %v", r.Err())
	}
	r.LogLevel("L_BAD", slog.LevelInfo)
	if err := r.Err(); err == nil || !strings.Contains(err.Error(), "L_BAD") {
		t.Errorf("got %v, want an error naming L_BAD", err)
	}
}

func TestFromFunc(t *testing.T) {
	env := map[string]string{"N": " 7 ", "EMPTY": "", "BAD": "x"}
	r := FromFunc(func(k string) string { return env[k] })
	if got := r.Int("N", 1); got != 7 {
		t.Errorf("N: got %d, want 7 (trimmed)", got)
	}
	if got := r.String("EMPTY", "def"); got != "def" {
		t.Errorf("EMPTY: got %q, want the default", got)
	}
	r.Int("BAD", 0)
	if err := r.Err(); err == nil || !strings.Contains(err.Error(), "BAD") {
		t.Errorf("Err: got %v, want an error naming BAD", err)
	}
}

func TestParse(t *testing.T) {
	r := FromMap(map[string]string{"P_OK": "7", "P_BAD": "x"})
	got := "default"
	parse := func(v string) error {
		if v == "x" {
			return errors.New("want a digit")
		}
		got = v
		return nil
	}
	r.Parse("P_MISSING", parse)
	if got != "default" {
		t.Fatalf("unset variable changed the value to %q", got)
	}
	r.Parse("P_OK", parse)
	if got != "7" || r.Err() != nil {
		t.Fatalf("P_OK: got %q, err %v", got, r.Err())
	}
	r.Parse("P_BAD", parse)
	if err := r.Err(); err == nil || !strings.Contains(err.Error(), `P_BAD="x": want a digit`) {
		t.Fatalf("P_BAD: got %v, want an error naming the variable", err)
	}
}
