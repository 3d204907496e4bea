package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestRunFile(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "resp.json")
	doc := `{"results":[{"id":1,"title":"alpha beta","score":0.5},{"id":2,"title":"gamma delta","score":0.25},{"id":3,"title":"epsilon","score":0.125}]}`
	if err := os.WriteFile(f, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run([]string{"-builtin=false", f}, &out); err != nil {
		t.Fatalf("run: %v", err)
	}
	// One row per encoding, with TOON smaller than compact JSON for a
	// uniform result list.
	row := regexp.MustCompile(`\| resp\.json \| (cl100k_base|o200k_base) \| (\d+) \| (\d+) \| (\d+) \| (-[\d.]+%) \| (-[\d.]+%) \| (\d+) \| ([-+][\d.]+%) \|`)
	got := row.FindAllStringSubmatch(out.String(), -1)
	if len(got) != 2 {
		t.Fatalf("got %d token rows, want 2 (one per encoding):\n%s", len(got), out.String())
	}
	if !strings.Contains(out.String(), "| resp.json | ") {
		t.Errorf("byte table missing:\n%s", out.String())
	}
}

func TestRunStdin(t *testing.T) {
	var out bytes.Buffer
	in := strings.NewReader(`[{"a":1,"b":"x"},{"a":2,"b":"y"}]`)
	if err := runWith([]string{"-builtin=false", "-"}, in, &out); err != nil {
		t.Fatalf("run: %v", err)
	}
	if got := strings.Count(out.String(), "| stdin | "); got != 3 {
		t.Errorf("got %d stdin rows, want 3 (two encodings and the byte table):\n%s", got, out.String())
	}
}

func TestRunErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"invalid json", []string{"-builtin=false", bad}, "not valid JSON"},
		{"missing file", []string{"-builtin=false", filepath.Join(dir, "nope.json")}, "read payload"},
		{"nothing", []string{"-builtin=false"}, "nothing to measure"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := run(tt.args, &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want error containing %q", err, tt.want)
			}
		})
	}
}
