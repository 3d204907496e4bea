package httpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// FuzzDecodeJSONDuplicateKeys checks the duplicate-key scan against a plain
// reference (json.Decoder tokens, recursive): DecodeJSON never panics, accepts
// a value without duplicate keys, and refuses one with them naming the path
// of the first duplicate in document order.
func FuzzDecodeJSONDuplicateKeys(f *testing.F) {
	for _, seed := range []string{
		`{"a":1,"a":2}`, `{"a":{"b":[1,{"c":1,"c":2}]}}`, `[{"x":1},{"x":1,"y":2,"x":3}]`,
		`{"a\u0062":1,"ab":2}`, `{"":1,"":2}`, `{"a":"\"b\":1,\"b\":2","b":[]}`, `{"a":1,"A":2}`,
		`"plain"`, `12.5e3`, `[[[[{"k":[true,false,null]}]]]]`, "\xef\xbb\xbf{\"a\":1}", `{"a":1}{"a":1}`,
		`{"k":"\xff","k":"\xfe"}`, `{"\xff":1,"\xfe":2}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v any
		err := DecodeJSON(bytes.NewReader(data), &v)
		var e *Error
		dup := errors.As(err, &e) && strings.Contains(e.Detail, "given twice")
		if err != nil && !dup {
			return // refused for another reason: not the scan's business
		}
		want, found := refDuplicate(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")))
		switch {
		case !dup && found:
			t.Fatalf("%q: accepted, but %s is given twice", data, want)
		case dup && !found:
			t.Fatalf("%q: refused as a duplicate (%s), the reference finds none", data, e.Detail)
		case dup && len(want) <= maxDupPath && e.Field != want:
			t.Fatalf("%q: refused naming %q, want %q", data, e.Field, want)
		case dup && len(want) > maxDupPath && !strings.HasSuffix(want, strings.TrimPrefix(e.Field, "…")):
			t.Fatalf("%q: refused naming %q, want the end of %q", data, e.Field, want)
		}
	})
}

// refDuplicate finds the first key given twice in one object of the JSON
// value data, comparing keys exactly (as for a value decoded into any).
func refDuplicate(data []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	return refWalk(dec, "")
}

func refWalk(dec *json.Decoder, path string) (string, bool) {
	tok, err := dec.Token()
	if err != nil {
		return "", false
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return "", false
	}
	if d == '[' {
		for i := 0; dec.More(); i++ {
			if p, found := refWalk(dec, fmt.Sprintf("%s[%d]", path, i)); found {
				return p, true
			}
		}
		_, _ = dec.Token()
		return "", false
	}
	seen := map[string]bool{}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return "", false
		}
		k, _ := kt.(string)
		name := k
		if name == "" {
			name = `""`
		}
		child := name
		if path != "" {
			child = path + "." + name
		}
		if seen[k] {
			return child, true
		}
		seen[k] = true
		if p, found := refWalk(dec, child); found {
			return p, true
		}
	}
	_, _ = dec.Token()
	return "", false
}

func TestDuplicateKey(t *testing.T) {
	for _, c := range []struct {
		in, want string // want: the path named, "" for none
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"q":"a","q":"b"}}}`, "params.arguments.q"},
		{`[{"id":1,"method":"ping"},{"id":2,"method":"ping","id":3}]`, "[1].id"},
		{`{"a":{"b":1},"c":{"b":1}}`, ""},
		{`{"Method":"x","method":"y"}`, ""}, // compared exactly: not the same key
		{`{"m\u0065thod":"x","method":"y"}`, "method"},
		{` [ ] `, ""},
		{`"a string"`, ""},
	} {
		err := DuplicateKey([]byte(c.in))
		var e *Error
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: got %v, want no error", c.in, err)
		case c.want != "" && (!errors.As(err, &e) || e.Status != 400 || e.Field != c.want ||
			!strings.Contains(e.Detail, c.want+" is given twice")):
			t.Errorf("%s: got %v, want a 400 naming %s", c.in, err, c.want)
		}
	}
}

// FuzzDuplicateKey checks DuplicateKey against the reference on valid JSON.
func FuzzDuplicateKey(f *testing.F) {
	for _, seed := range []string{
		`{"a":1,"a":2}`, `[{"x":1},{"x":1,"y":2,"x":3}]`, `{"a\u0062":1,"ab":2}`, `{"a":1,"A":2}`,
		`{"a":"\"b\":1,\"b\":2","b":[]}`, `[[{"k":[{"k":1},{"k":2,"k":3}]}]]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		err := DuplicateKey(data)
		want, found := refDuplicate(data)
		var e *Error
		switch {
		case err != nil && !errors.As(err, &e):
			t.Fatalf("%q: got %v, want an *Error", data, err)
		case err == nil && found:
			t.Fatalf("%q: no error, but %s is given twice", data, want)
		case err != nil && !found:
			t.Fatalf("%q: refused (%s), the reference finds no duplicate", data, e.Detail)
		case err != nil && len(want) <= maxDupPath && e.Field != want:
			t.Fatalf("%q: refused naming %q, want %q", data, e.Field, want)
		}
	})
}
