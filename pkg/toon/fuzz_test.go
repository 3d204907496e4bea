package toon

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"testing"
)

// fuzzSeeds returns fixture inputs of one category, or nil when the
// fixtures are absent (TestConformance reports that case).
func fuzzSeeds(category string) [][]byte {
	dir, err := locateFixtures()
	if err != nil {
		return nil
	}
	files, _ := filepath.Glob(filepath.Join(dir, category, "*.json"))
	var out [][]byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var ff fixtureFile
		if json.Unmarshal(data, &ff) != nil {
			continue
		}
		for _, c := range ff.Tests {
			if category == "decode" {
				var s string
				if json.Unmarshal(c.Input, &s) == nil {
					out = append(out, []byte(s))
				}
			} else {
				out = append(out, []byte(c.Input))
			}
		}
	}
	return out
}

// FuzzDecode checks that no input panics the decoder and that whatever
// decodes re-encodes to TOON that decodes to the same value.
func FuzzDecode(f *testing.F) {
	for _, s := range fuzzSeeds("decode") {
		f.Add(s, true)
	}
	f.Add([]byte("a[2]{x,y}:\n  1,\"b\"\n  2,c\nd:\n  - e: 1\n    f[1]: g"), false)
	f.Fuzz(func(t *testing.T, data []byte, strict bool) {
		opts := []Option{WithStrict(strict)}
		js, err := ToJSON(data, opts...)
		var any1 any
		uerr := Unmarshal(data, &any1, opts...)
		if (err == nil) != (uerr == nil) && !isRangeErr(uerr) {
			t.Fatalf("ToJSON error %v but Unmarshal error %v", err, uerr)
		}
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Line < 1 {
				t.Fatalf("got error %v (%T), want a *SyntaxError with a line", err, err)
			}
			return
		}
		for _, delim := range []rune{',', '\t', '|'} {
			enc, err := FromJSON(js, WithDelimiter(delim))
			if err != nil {
				t.Fatalf("FromJSON(%s): %v", js, err)
			}
			js2, err := ToJSON(enc)
			if err != nil {
				t.Fatalf("re-decode %q (from %s): %v", enc, js, err)
			}
			if !bytes.Equal(js, js2) {
				t.Fatalf("round trip changed the value:\n first %s\nsecond %s\n  toon %q", js, js2, enc)
			}
		}
	})
}

func isRangeErr(err error) bool {
	var te *UnmarshalTypeError
	return errors.As(err, &te)
}

// FuzzJSONRoundTrip checks ToJSON(FromJSON(x)) == x for valid JSON x, as
// ordered JSON values (key order included, numbers by value).
func FuzzJSONRoundTrip(f *testing.F) {
	for _, s := range fuzzSeeds("encode") {
		f.Add(s)
	}
	f.Add([]byte(`{"a":[{"x":1,"y":"b"},{"y":"c","x":2}],"n":-0.000001e3,"s":"- \"q\"","e":{},"l":[[],[1],{}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			if _, err := FromJSON(data); err == nil {
				t.Fatalf("FromJSON accepted invalid JSON %q", data)
			}
			return
		}
		for _, opts := range [][]Option{nil, {WithDelimiter('\t')}, {WithDelimiter('|'), WithIndent(3)}} {
			enc, err := FromJSON(data, opts...)
			if err != nil {
				var je *JSONSyntaxError
				if errors.As(err, &je) && bytes.Count(data, []byte("["))+bytes.Count(data, []byte("{")) > maxNesting {
					return
				}
				t.Fatalf("FromJSON(%q): %v", data, err)
			}
			back, err := ToJSON(enc, WithIndent(indentOf(opts)))
			if err != nil {
				t.Fatalf("ToJSON(%q) from %q: %v", enc, data, err)
			}
			want, err := orderedJSON(data)
			if err != nil {
				t.Fatal(err)
			}
			got, err := orderedJSON(back)
			if err != nil {
				t.Fatalf("ToJSON produced invalid JSON %q: %v", back, err)
			}
			if !equalOrdered(want, got) {
				t.Fatalf("round trip mismatch:\n   in %s\n toon %q\n  out %s", data, enc, back)
			}
		}
	})
}

func indentOf(opts []Option) int {
	c, _ := newConfig(opts)
	return c.indent
}

// ordered is an order-preserving JSON value built with encoding/json's
// tokenizer, independent of the package's own parser. Duplicate keys keep
// the first position and the last value.
type ordered struct {
	kind string // null bool num str arr obj
	s    string
	num  json.Number
	keys []string
	kids []*ordered
}

func orderedJSON(data []byte) (*ordered, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := readOrdered(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data")
	}
	return v, nil
}

func readOrdered(dec *json.Decoder) (*ordered, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch x := tok.(type) {
	case nil:
		return &ordered{kind: "null"}, nil
	case bool:
		return &ordered{kind: "bool", s: fmt.Sprint(x)}, nil
	case json.Number:
		return &ordered{kind: "num", num: x}, nil
	case string:
		return &ordered{kind: "str", s: x}, nil
	case json.Delim:
		o := &ordered{kind: "arr"}
		if x == '{' {
			o.kind = "obj"
		}
		for dec.More() {
			key := ""
			if o.kind == "obj" {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key = kt.(string)
			}
			v, err := readOrdered(dec)
			if err != nil {
				return nil, err
			}
			if o.kind == "obj" {
				if i := indexOf(o.keys, key); i >= 0 {
					o.kids[i] = v
					continue
				}
				o.keys = append(o.keys, key)
			}
			o.kids = append(o.kids, v)
		}
		_, err := dec.Token() // closing delimiter
		return o, err
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}

func indexOf(keys []string, k string) int {
	for i, x := range keys {
		if x == k {
			return i
		}
	}
	return -1
}

func equalOrdered(a, b *ordered) bool {
	if a.kind != b.kind || a.s != b.s || len(a.kids) != len(b.kids) {
		return false
	}
	if a.kind == "num" {
		x, _, errA := big.ParseFloat(string(a.num), 10, 2000, big.ToNearestEven)
		y, _, errB := big.ParseFloat(string(b.num), 10, 2000, big.ToNearestEven)
		if errA != nil || errB != nil {
			return a.num == b.num
		}
		return x.Cmp(y) == 0
	}
	if a.kind == "arr" && tabularOrdered(a) {
		// §9.3: rows of a tabular array take the field order of the first
		// row, so later rows compare as key sets.
		for i := range a.kids {
			if i == 0 {
				if !equalOrdered(a.kids[0], b.kids[0]) {
					return false
				}
				continue
			}
			x, y := a.kids[i], b.kids[i]
			if y.kind != "obj" || len(x.keys) != len(y.keys) {
				return false
			}
			for k, key := range x.keys {
				j := indexOf(y.keys, key)
				if j < 0 || !equalOrdered(x.kids[k], y.kids[j]) {
					return false
				}
			}
		}
		return true
	}
	for i := range a.kids {
		if a.kind == "obj" && a.keys[i] != b.keys[i] {
			return false
		}
		if !equalOrdered(a.kids[i], b.kids[i]) {
			return false
		}
	}
	return true
}

// tabularOrdered reports whether an array qualifies for the tabular form:
// non-empty objects with one key set and primitive values only.
func tabularOrdered(a *ordered) bool {
	if len(a.kids) == 0 {
		return false
	}
	first := a.kids[0]
	if first.kind != "obj" || len(first.keys) == 0 {
		return false
	}
	for _, o := range a.kids {
		if o.kind != "obj" || len(o.keys) != len(first.keys) {
			return false
		}
		for i, k := range o.keys {
			if indexOf(first.keys, k) < 0 || o.kids[i].kind == "obj" || o.kids[i].kind == "arr" {
				return false
			}
		}
	}
	return true
}

// FuzzMarshalMatchesFromJSON checks that the reflection encoder and the
// tree encoder agree: Marshal(v) == FromJSON(json.Marshal(v)) for any value
// decoded from JSON (maps sort their keys in both paths).
func FuzzMarshalMatchesFromJSON(f *testing.F) {
	for _, s := range fuzzSeeds("encode") {
		f.Add(s, uint8(0))
	}
	f.Fuzz(func(t *testing.T, data []byte, mode uint8) {
		var v any
		if json.Unmarshal(data, &v) != nil {
			return
		}
		opts := []Option{WithDelimiter([]rune{',', '\t', '|'}[mode%3]), WithIndent(1 + int(mode/3%4))}
		if mode&0x80 != 0 {
			opts = append(opts, WithKeyFolding(ModeSafe))
		}
		js, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		want, err := FromJSON(js, opts...)
		if err != nil {
			t.Fatalf("FromJSON(%s): %v", js, err)
		}
		got, err := Marshal(v, opts...)
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("Marshal and FromJSON differ for %s:\nMarshal:\n%s\nFromJSON:\n%s", js, got, want)
		}
	})
}
