package toon_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kgsearch/kgsearch/pkg/toon"
)

func TestSyntaxErrors(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		opts     []toon.Option
		wantLine int
		wantMsg  string
	}{
		{"row width", "items[2]{a,b,c}:\n  1,2,3\n  4,5", nil, 3, "tabular row has 2 values, header declares 3"},
		{"row count", "items[3]{a}:\n  1\n  2", nil, 1, "tabular array has 2 rows, header declares 3"},
		{"inline count", "x:\n  tags[2]: a", nil, 2, "inline array has 1 values, header declares 2"},
		{"list count", "a[1]:\n  - 1\n  - 2", nil, 1, "list array has 2 items, header declares 1"},
		{"indentation", "a:\n   b: 1", nil, 2, "not a multiple of the indent size 2"},
		{"tab indentation", "a:\n\tb: 1", nil, 2, "tab character used for indentation"},
		{"blank line in array", "a[2]:\n  - 1\n\n  - 2", nil, 3, "blank line inside list array"},
		{"duplicate key", "a: 1\nb: 2\na: 3", nil, 3, `duplicate key "a"`},
		{"bad escape", `a: "x\q"`, nil, 1, `invalid escape \q`},
		{"unterminated", `a: "x`, nil, 1, "unterminated string"},
		{"missing colon", "a:\n  b", nil, 2, `missing colon after key "b"`},
		{"bad length", "a[x]: 1", nil, 1, "invalid array length"},
		{"leading zero length", "a[01]: 1", nil, 1, "leading zeros"},
		{"delimiter mismatch", "a[1|]{x,y}:\n  1|2", nil, 1, "field list uses delimiter"},
		{"unexpected indentation", "a: 1\n  b: 2", nil, 2, "unexpected indentation"},
		{"list item outside array", "a: 1\n- b", nil, 2, "outside of an array"},
		{"two root primitives", "hello\nworld", nil, 1, "neither a key-value pair nor an array header"},
		{"expansion conflict", "a.b: 1\na: 2", []toon.Option{toon.WithExpandPaths("safe")}, 2, "expansion conflict at path 'a' (object vs primitive)"},
		{"text after quote", `a: "x" y`, nil, 1, "after closing quote"},
		{"surrogate", `a: "\uD83D"`, nil, 1, "surrogate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v any
			err := toon.Unmarshal([]byte(tt.in), &v, tt.opts...)
			var se *toon.SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("got error %v (%T), want *toon.SyntaxError", err, err)
			}
			if se.Line != tt.wantLine || !strings.Contains(se.Msg, tt.wantMsg) {
				t.Errorf("got line %d %q, want line %d containing %q", se.Line, se.Msg, tt.wantLine, tt.wantMsg)
			}
			if !strings.HasPrefix(err.Error(), "toon: line ") {
				t.Errorf("got message %q, want it to start with \"toon: line \"", err)
			}
		})
	}
}

func TestNestingLimit(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 1001; i++ {
		b.WriteString(strings.Repeat(" ", 2*i))
		b.WriteString("k:\n")
	}
	_, err := toon.ToJSON([]byte(b.String()))
	var se *toon.SyntaxError
	if !errors.As(err, &se) || !strings.Contains(se.Msg, "nesting deeper than 1000 levels") {
		t.Errorf("got %v, want a nesting SyntaxError", err)
	}
	// 1000 levels are fine.
	lines := strings.Split(b.String(), "\n")
	if _, err := toon.ToJSON([]byte(strings.Join(lines[:999], "\n"))); err != nil {
		t.Errorf("got %v for 999 levels, want success", err)
	}
}

func TestSyntaxErrorColumn(t *testing.T) {
	err := toon.Unmarshal([]byte("a:\n  b: \"x\\q\""), new(any))
	var se *toon.SyntaxError
	if !errors.As(err, &se) {
		t.Fatalf("got %v, want *SyntaxError", err)
	}
	// Line 2 is `  b: "x\q"`: the backslash is the 8th character.
	if se.Line != 2 || se.Col != 8 {
		t.Errorf("got line %d col %d, want line 2 col 8 (%v)", se.Line, se.Col, err)
	}
}

func TestLenient(t *testing.T) {
	in := "a[3]: x,y\nb:\n   c: 1\nd: 1\nd: 2"
	var got map[string]any
	if err := toon.Unmarshal([]byte(in), &got, toon.WithStrict(false)); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"a": []any{"x", "y"}, "b": map[string]any{"c": 1.0}, "d": 2.0}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("lenient decode mismatch (-want +got):\n%s", d)
	}
}

type hit struct {
	ID    int       `json:"id"`
	Score float64   `json:"score"`
	Title string    `json:"title"`
	When  time.Time `json:"when"`
	Tags  []string  `json:"tags"`
	Extra *struct {
		N json.Number `json:"n"`
	} `json:"extra"`
}

func TestUnmarshal(t *testing.T) {
	in := `query: "go: generics"
hits[2]{id,score,title,when}:
  1,0.5,First,"2026-01-02T03:04:05Z"
  2,1e-3,"Second, part",null
more[1]:
  - id: 3
    TITLE: upper
    tags[2]: a,b
    extra:
      n: 12345678901234567890
    unknown: ignored`
	var got struct {
		Query string `json:"query"`
		Hits  []hit  `json:"hits"`
		More  []hit  `json:"more"`
	}
	if err := toon.Unmarshal([]byte(in), &got); err != nil {
		t.Fatal(err)
	}
	if got.Query != "go: generics" || len(got.Hits) != 2 || len(got.More) != 1 {
		t.Fatalf("got %+v", got)
	}
	if h := got.Hits[1]; h.Score != 0.001 || h.Title != "Second, part" || !h.When.IsZero() {
		t.Errorf("got hit %+v, want score 0.001, title %q, zero time", h, "Second, part")
	}
	if w := got.Hits[0].When; !w.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Errorf("got time %v, want 2026-01-02T03:04:05Z", w)
	}
	m := got.More[0]
	if m.Title != "upper" || cmp.Diff([]string{"a", "b"}, m.Tags) != "" || m.Extra == nil || m.Extra.N != "12345678901234567890" {
		t.Errorf("got %+v, want case-insensitive title, tags and exact json.Number", m)
	}
}

func TestUnmarshalTypeErrors(t *testing.T) {
	var dst struct {
		Hits []hit `json:"hits"`
	}
	tests := []struct {
		name, in, want string
	}{
		{"string into int", "hits[1]{id}:\n  x", "toon: line 2: cannot unmarshal string into field hits[0].id of type int"},
		{"fraction into int", "hits[1]:\n  - id: 1.5", "cannot unmarshal number 1.5 into field hits[0].id of type int"},
		{"object into slice", "hits:\n  a: 1", "cannot unmarshal object into field hits of type []toon_test.hit"},
		{"bad time", "hits[1]{when}:\n  yesterday", "into field hits[0].when of type time.Time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := toon.Unmarshal([]byte(tt.in), &dst)
			var te *toon.UnmarshalTypeError
			if !errors.As(err, &te) {
				t.Fatalf("got %v, want *toon.UnmarshalTypeError", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %q, want it to contain %q", err, tt.want)
			}
		})
	}
	var i8 int8
	if err := toon.Unmarshal([]byte("300"), &i8); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("got %v, want an out of range error", err)
	}
	if err := toon.Unmarshal([]byte("1"), nil); err == nil {
		t.Error("got nil error for Unmarshal(nil), want one")
	}
	var notPtr int
	if err := toon.Unmarshal([]byte("1"), notPtr); err == nil || !strings.Contains(err.Error(), "non-pointer") {
		t.Errorf("got %v, want a non-pointer error", err)
	}
}

func TestEncoderDecoder(t *testing.T) {
	var buf bytes.Buffer
	enc := toon.NewEncoder(&buf, toon.WithDelimiter('|'))
	in := map[string]any{"a": []any{"x", "y"}, "b": 1.0}
	if err := enc.Encode(in); err != nil {
		t.Fatal(err)
	}
	if want := "a[2|]: x|y\nb: 1\n"; buf.String() != want {
		t.Errorf("got %q, want %q", buf.String(), want)
	}
	dec := toon.NewDecoder(&buf)
	var out map[string]any
	if err := dec.Decode(&out); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(in, out); d != "" {
		t.Errorf("decoded mismatch (-want +got):\n%s", d)
	}
	if err := dec.Decode(&out); !errors.Is(err, io.EOF) {
		t.Errorf("got %v on second Decode, want io.EOF", err)
	}
	if err := toon.NewEncoder(io.Discard, toon.WithIndent(0)).Encode(1); err == nil {
		t.Error("got nil error for indent 0, want one")
	}
}

func TestOptionErrors(t *testing.T) {
	tests := []struct {
		name string
		opt  toon.Option
		want string
	}{
		{"indent", toon.WithIndent(0), "indent"},
		{"delimiter", toon.WithDelimiter(';'), "delimiter"},
		{"folding", toon.WithKeyFolding("aggressive"), "key folding"},
		{"flatten", toon.WithFlattenDepth(-1), "flatten depth"},
		{"expand", toon.WithExpandPaths("all"), "expand paths"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := toon.ToJSON([]byte("a: 1"), tt.opt)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want error containing %q", err, tt.want)
			}
		})
	}
}

func TestRawMessageRoundTrip(t *testing.T) {
	type doc struct {
		Raw json.RawMessage `json:"raw"`
	}
	in := doc{Raw: json.RawMessage(`{"b":[1,2],"a":{"x":"y"}}`)}
	data, err := toon.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := "raw:\n  b[2]: 1,2\n  a:\n    x: y"; string(data) != want {
		t.Errorf("got:\n%s\nwant:\n%s", data, want)
	}
	var out doc
	if err := toon.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	if string(out.Raw) != string(in.Raw) {
		t.Errorf("got %s, want %s", out.Raw, in.Raw)
	}
}
