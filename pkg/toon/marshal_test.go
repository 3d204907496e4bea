package toon_test

import (
	"encoding/json"
	"errors"
	"math"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kgsearch/kgsearch/pkg/toon"
	"github.com/kgsearch/kgsearch/pkg/toon/sample"
)

type tagged struct {
	ID      int     `toon:"id" json:"identifier"`
	Name    string  `json:"name"`
	Note    string  `json:"note,omitempty"`
	Skip    string  `json:"-"`
	Ratio   float64 `toon:"ratio,omitempty"`
	Plain   bool
	private int
}

type jsonHook struct{ v int }

func (j jsonHook) MarshalJSON() ([]byte, error) {
	return []byte(`{"hook":` + strings.Repeat("1", j.v) + `,"list":[1,"a"]}`), nil
}

type textHook struct{ s string }

func (t textHook) MarshalText() ([]byte, error) { return []byte("<" + t.s + ">"), nil }

type failHook struct{}

func (failHook) MarshalJSON() ([]byte, error) { return nil, errors.New("boom") }

type Inner struct {
	A int `json:"a"`
	B int `json:"b"`
}

type outer struct {
	Inner
	B int `json:"b"` // shadows Inner.B
	C int `json:"c"`
}

type node struct {
	Name     string  `json:"name"`
	Children []*node `json:"children,omitempty"`
}

func TestMarshal(t *testing.T) {
	when := time.Date(2026, 3, 4, 5, 6, 7, 800, time.FixedZone("", 3600))
	n := 7
	tests := []struct {
		name string
		in   any
		opts []toon.Option
		want string
	}{
		{"nil", nil, nil, "null"},
		{"string", "hello", nil, "hello"},
		{"numeric string quoted", "42", nil, `"42"`},
		{"int", -12, nil, "-12"},
		{"uint64 max", uint64(math.MaxUint64), nil, "18446744073709551615"},
		{"float canonical", 1e6, nil, "1000000"},
		{"float small", 1e-7, nil, "1e-7"},
		{"float large", 1.5e21, nil, "1.5e+21"},
		{"negative zero", math.Copysign(0, -1), nil, "0"},
		{"NaN is null", math.NaN(), nil, "null"},
		{"float32 shortest", float32(0.1), nil, "0.1"},
		{"bool", true, nil, "true"},
		{"tags", tagged{ID: 1, Name: "Ada", Skip: "x", Plain: true}, nil, "id: 1\nname: Ada\nPlain: true"},
		{"omitempty kept when set", tagged{ID: 1, Note: "n", Ratio: 0.5}, nil, "id: 1\nname: \"\"\nnote: n\nratio: 0.5\nPlain: false"},
		{"map sorted", map[string]int{"b": 2, "a": 1, "c": 3}, nil, "a: 1\nb: 2\nc: 3"},
		{"int map keys", map[int]string{10: "x", 2: "y"}, nil, "\"10\": x\n\"2\": y"},
		{"pointer", &n, nil, "7"},
		{"nil pointer field", struct {
			P *int `json:"p"`
		}{}, nil, "p: null"},
		{"nil slice is null", struct {
			S []int `json:"s"`
		}{}, nil, "s: null"},
		{"empty slice", struct {
			S []int `json:"s"`
		}{S: []int{}}, nil, "s: []"},
		{"inline array", []string{"a", "b c", "d,e"}, nil, `[3]: a,b c,"d,e"`},
		{"tabular", []Inner{{1, 2}, {3, 4}}, nil, "[2]{a,b}:\n  1,2\n  3,4"},
		{"tabular pipe", map[string]any{"t": []Inner{{1, 2}}}, []toon.Option{toon.WithDelimiter('|')}, "t[1|]{a|b}:\n  1|2"},
		{"indent 4", map[string]any{"a": map[string]any{"b": 1}}, []toon.Option{toon.WithIndent(4)}, "a:\n    b: 1"},
		{"time", struct {
			T time.Time `json:"t"`
		}{when}, nil, `t: "2026-03-04T05:06:07.0000008+01:00"`},
		{"json.Number", []json.Number{"1.50", "-0", "12345678901234567890123"}, nil, "[3]: 1.5,0,1.2345678901234567890123e+22"},
		{"bytes base64", []byte("hi"), nil, "aGk="},
		{"json.Marshaler", map[string]any{"x": jsonHook{2}}, nil, "x:\n  hook: 11\n  list[2]: 1,a"},
		{"text marshaler", []textHook{{"a"}, {"b,c"}}, nil, `[2]: <a>,"<b,c>"`},
		{"text marshaler value", netip.MustParseAddr("10.0.0.1"), nil, "10.0.0.1"},
		{"embedded promotion", outer{Inner: Inner{A: 1, B: 2}, B: 3, C: 4}, nil, "a: 1\nb: 3\nc: 4"},
		{"recursive type", &node{Name: "root", Children: []*node{{Name: "leaf"}}}, nil, "name: root\nchildren[1]{name}:\n  leaf"},
		{"list of mixed", []any{1, "x", map[string]any{"k": []int{1, 2}}, []any{}}, nil, "[4]:\n  - 1\n  - x\n  - k[2]: 1,2\n  - [0]:"},
		{"folding", map[string]any{"a": map[string]any{"b": map[string]any{"c": 1}}}, []toon.Option{toon.WithKeyFolding("safe")}, "a.b.c: 1"},
		{"folding depth", map[string]any{"a": map[string]any{"b": map[string]any{"c": 1}}}, []toon.Option{toon.WithKeyFolding("safe"), toon.WithFlattenDepth(2)}, "a.b:\n  c: 1"},
		{"quoted keys", map[string]int{"full name": 1, "-x": 2}, nil, "\"-x\": 2\n\"full name\": 1"},
		{"control chars", "a\x01b\tc", nil, `"a\u0001b\tc"`},
		{"invalid utf8 replaced", "a\xffb", nil, "\"a\uFFFDb\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := toon.Marshal(tt.in, tt.opts...)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if string(got) != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestMarshalErrors(t *testing.T) {
	type cyclic struct {
		Next *cyclic `json:"next"`
	}
	loop := &cyclic{}
	loop.Next = loop
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"channel", map[string]any{"c": make(chan int)}, "unsupported type chan int"},
		{"func", []any{func() {}}, "unsupported type func()"},
		{"marshaler error", map[string]any{"x": failHook{}}, "boom"},
		{"bad json.Number", json.Number("12abc"), "invalid number literal"},
		{"cycle", loop, "cyclic"},
		{"bad option", 1, "delimiter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []toon.Option
			if tt.name == "bad option" {
				opts = append(opts, toon.WithDelimiter(';'))
			}
			_, err := toon.Marshal(tt.in, opts...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// differentialValues are values whose encoding/json mapping equals the toon
// one, so Marshal must agree with FromJSON(json.Marshal(v)) — the direct
// encoder against the tree encoder.
func differentialValues() map[string]any {
	return map[string]any{
		"search":  sample.Search(20),
		"table":   sample.Table(30),
		"config":  sample.Config(),
		"nested":  map[string]any{"a": []any{[]any{1, 2}, []any{}, []any{map[string]any{"x": 1}}}, "b": []map[string]any{{"k": 1}, {"k": 2}}},
		"ptrs":    []*Inner{{1, 2}, nil},
		"structs": []outer{{C: 1}, {C: 2}},
		"anys":    []any{Inner{1, 2}, Inner{3, 4}},
		"empties": map[string]any{"o": map[string]any{}, "a": []any{}, "s": "", "l": []any{map[string]any{}}},
		"strings": []string{"", " x", "true", "-", "05", "1e5", "a:b", "[x]", "tab\t", "ünï", "\u00a0x"},
		"floats":  []float64{0, 1.5, -2.25, 1e-7, 1e21, 123456789.125},
		"matrix":  [][]int{{1, 2}, {3}},
		"rows":    []map[string]any{{"a": 1, "b": "x"}, {"b": "y", "a": 2}},
	}
}

func TestMarshalMatchesFromJSON(t *testing.T) {
	for name, v := range differentialValues() {
		t.Run(name, func(t *testing.T) {
			got, err := toon.Marshal(v)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			js, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			want, err := toon.FromJSON(js)
			if err != nil {
				t.Fatalf("FromJSON: %v", err)
			}
			if string(got) != string(want) {
				t.Errorf("Marshal and FromJSON differ:\n%s", cmp.Diff(string(want), string(got)))
			}
		})
	}
}

func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		in   any
		out  func() any
	}{
		{"search", sample.Search(50), func() any { return new(sample.SearchResponse) }},
		{"table", sample.Table(100), func() any { return new([]sample.Row) }},
		{"config", sample.Config(), func() any { return new(map[string]any) }},
		{"tagged", tagged{ID: 3, Name: "x: y", Note: "- n", Ratio: 1e-9, Plain: true}, func() any { return new(tagged) }},
		{"embedded", outer{Inner: Inner{A: 1}, B: 3, C: 4}, func() any { return new(outer) }},
		{"recursive", &node{Name: "r", Children: []*node{{Name: "a"}, {Name: "b", Children: []*node{{Name: "c"}}}}}, func() any { return new(*node) }},
	}
	for _, tt := range tests {
		for _, delim := range []rune{',', '\t', '|'} {
			t.Run(tt.name+"/"+string(delim), func(t *testing.T) {
				data, err := toon.Marshal(tt.in, toon.WithDelimiter(delim))
				if err != nil {
					t.Fatalf("Marshal: %v", err)
				}
				out := tt.out()
				if err := toon.Unmarshal(data, out); err != nil {
					t.Fatalf("Unmarshal: %v\n%s", err, data)
				}
				got := reflect.ValueOf(out).Elem().Interface()
				if d := cmp.Diff(tt.in, got, cmp.AllowUnexported(tagged{})); d != "" {
					t.Errorf("round trip mismatch (-want +got):\n%s", d)
				}
			})
		}
	}
}
