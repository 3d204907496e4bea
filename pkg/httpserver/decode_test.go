package httpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/kgsearch/kgsearch/pkg/fielderr"
)

type decodeRef struct {
	ID string `json:"id"`
}

type decodeBody struct {
	decodeRef
	Name   string   `json:"name"`
	Limit  int      `json:"limit,omitempty"`
	Tags   []string `json:"tags"`
	Hidden string   `json:"-"`
	Inner  struct {
		Ratio float64 `json:"ratio"`
	} `json:"inner"`
	Items []*struct {
		N int `json:"n"`
	} `json:"items,omitempty"`
	Meta map[string]any  `json:"meta,omitempty"`
	Raw  json.RawMessage `json:"raw,omitempty"`
}

func decodeServer(t *testing.T, limit int64) *Server {
	t.Helper()
	s := New("test", Config{Addr: "127.0.0.1:0", MaxBodyBytes: limit}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	s.API("/api/v1").POST("/decode", s.Handle(func(c *gin.Context) error {
		var b decodeBody
		if err := DecodeJSON(c.Request.Body, &b); err != nil {
			return err
		}
		c.JSON(http.StatusOK, gin.H{"name": b.Name, "id": b.ID})
		return nil
	}))
	return s
}

func TestDecodeJSON(t *testing.T) {
	s := decodeServer(t, 200)
	tests := []struct {
		name, body  string
		status      int
		field       string
		detailHolds string
	}{
		{"good", `{"id":"a","name":"x","tags":["t"],"inner":{"ratio":0.5}}`, 200, "", ""},
		{"good with trailing space", "{\"name\":\"x\"}\n  ", 200, "", ""},
		{"byte order mark", "\xef\xbb\xbf{\"name\":\"x\"}", 200, "", ""},
		{"only a byte order mark", "\xef\xbb\xbf", 400, "body", "empty"},
		{"empty", ``, 400, "body", "empty"},
		{"blank", "  \n", 400, "body", "empty"},
		{"not json", `{name:`, 400, "body", "not valid JSON"},
		{"truncated", `{"name":"x"`, 400, "body", "complete"},
		{"unknown field", `{"name":"x","nmae":"y"}`, 400, "nmae", "id, name, limit, tags, inner"},
		{"unknown nested field", `{"inner":{"ratio":1,"x":2}}`, 400, "inner.x", `unknown field "x" in inner; remove it or correct its spelling (the fields there are ratio)`},
		{"unknown field in a list", `{"items":[{"n":1},{"n":2,"m":3}]}`, 400, "items[1].m", `unknown field "m" in items[1]`},
		{"unknown name known elsewhere", `{"inner":{"name":"x"}}`, 400, "inner.name", "the fields there are ratio"},
		{"case-insensitive match is known", `{"NAME":"x","inner":{"RATIO":1}}`, 200, "", ""},
		{"json:\"-\" field is unknown", `{"Hidden":"x"}`, 400, "Hidden", "unknown field"},
		{"wrong type", `{"limit":"ten"}`, 400, "limit", "must be an integer"},
		{"wrong nested type", `{"inner":{"ratio":"high"}}`, 400, "inner.ratio", "must be a number"},
		{"wrong array type", `{"tags":"a,b"}`, 400, "tags", "must be an array"},
		{"not an object", `[1,2]`, 400, "body", "must be an object"},
		{"two values", `{"name":"x"}{"name":"y"}`, 400, "body", "more than one"},
		{"trailing brace", `{"name":"x"}}`, 400, "body", "more than one"},
		{"duplicate key", `{"name":"a","name":"b"}`, 400, "name", "name is given twice in one object; send it once"},
		{"duplicate key, same value", `{"name":"a","name":"a"}`, 400, "name", "given twice"},
		{"duplicate nested key", `{"inner":{"ratio":1,"ratio":2}}`, 400, "inner.ratio", "inner.ratio is given twice"},
		{"duplicate key in a list", `{"items":[{"n":1},{"n":2,"n":3}]}`, 400, "items[1].n", "items[1].n is given twice"},
		{"duplicate list", `{"tags":["a"],"limit":1,"tags":["b"]}`, 400, "tags", "given twice"},
		{"duplicate promoted field", `{"id":"a","name":"x","id":"b"}`, 400, "id", "given twice"},
		{"duplicate field in other case", `{"name":"a","NAME":"b"}`, 400, "name", `as "name" and "NAME", which name the same field`},
		{"duplicate key escaped", `{"name":"a","na\u006de":"b"}`, 400, "name", "given twice"},
		{"duplicate after escaped quote", `{"name":"a\"b","tags":["x"],"name":"c"}`, 400, "name", "given twice"},
		{"duplicate in a map", `{"meta":{"k":{"x":1,"y":[{"z":1,"z":2}]}}}`, 400, "meta.k.y[0].z", "given twice"},
		{"duplicate in raw JSON", `{"raw":{"bm25":1,"bm25":2}}`, 400, "raw.bm25", "raw.bm25 is given twice"},
		{"map keys differ in case", `{"meta":{"a":1,"A":2}}`, 200, "", ""},
		{"same key in sibling objects", `{"items":[{"n":1},{"n":2}],"inner":{"ratio":1}}`, 200, "", ""},
		{"same key at two depths", `{"name":"x","meta":{"name":"y","v":{"name":"z"}}}`, 200, "", ""},
		{"duplicate inside a string", `{"name":"{\"a\":1,\"a\":2}"}`, 200, "", ""},
		{"unknown field before duplicate", `{"nmae":1,"nmae":2}`, 400, "nmae", "unknown field"},
		{"wrong type before duplicate", `{"limit":"x","limit":1}`, 400, "limit", "must be an integer"},
		{"too large", `{"name":"` + strings.Repeat("x", 300) + `"}`, 413, "", "200 bytes"},
		{"too large after the value", `{"name":"x"}` + strings.Repeat(" ", 300) + "1", 413, "", "200 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := do(t, s, "POST", "/api/v1/decode", tt.body, nil)
			if rec.Code != tt.status {
				t.Fatalf("status: got %d, want %d (%s)", rec.Code, tt.status, rec.Body)
			}
			if tt.status == 200 {
				return
			}
			p := problem(t, rec)
			if p.Field != tt.field {
				t.Errorf("field: got %q, want %q (detail %q)", p.Field, tt.field, p.Detail)
			}
			if !strings.Contains(p.Detail, tt.detailHolds) {
				t.Errorf("detail: got %q, want it to contain %q", p.Detail, tt.detailHolds)
			}
		})
	}
}

// A deeply nested body is a 400, never a crash: encoding/json refuses more than
// 10000 levels, and the duplicate-key scan below that depth is iterative.
func TestDecodeJSONDeepNesting(t *testing.T) {
	s := decodeServer(t, 1<<20)
	const deep, ok = 100_000, 9_000
	dupAtBottom := `{"meta":` + strings.Repeat(`{"a":`, ok) + `{"b":1,"b":2}` + strings.Repeat(`}`, ok) + `}`
	tests := []struct {
		name, body, field, detailHolds string
	}{
		{"arrays too deep", `{"meta":` + strings.Repeat("[", deep) + strings.Repeat("]", deep) + `}`, "body", "more than 10000 levels deep"},
		{"objects too deep", strings.Repeat(`{"a":`, deep) + "1" + strings.Repeat("}", deep), "body", "more than 10000 levels deep"},
		{"unclosed and too deep", strings.Repeat("[", deep), "body", "more than 10000 levels deep"},
		{"deep wrong type", `{"name":` + strings.Repeat("[", ok) + strings.Repeat("]", ok) + `}`, "name", "must be a string"},
		{"deep unknown field", `{"inner":` + strings.Repeat(`{"x":`, ok) + "1" + strings.Repeat("}", ok) + `}`, "inner.x", "unknown field"},
		{"deep duplicate", dupAtBottom, "", "is given twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := do(t, s, "POST", "/api/v1/decode", tt.body, nil)
			if rec.Code != http.StatusBadRequest {
				t.Fatalf("status: got %d, want 400 (%.300s)", rec.Code, rec.Body)
			}
			p := problem(t, rec)
			if tt.field != "" && p.Field != tt.field {
				t.Errorf("field: got %.300q, want %q", p.Field, tt.field)
			}
			if !strings.Contains(p.Detail, tt.detailHolds) {
				t.Errorf("detail: got %.300q, want it to contain %q", p.Detail, tt.detailHolds)
			}
		})
	}
	// The duplicate's path keeps its end (the key at fault), clipped to a readable length.
	p := problem(t, do(t, s, "POST", "/api/v1/decode", dupAtBottom, nil))
	if !strings.HasPrefix(p.Field, "…") || !strings.HasSuffix(p.Field, ".a.b") || len(p.Field) > maxDupPath+len("…") {
		t.Errorf("deep duplicate field: got %d bytes %.80q…, want a clipped path ending in .a.b", len(p.Field), p.Field)
	}
}

// TestDuplicateKeyTopLevel covers values that are not structs: a map or any at
// the top, compared exactly, and scalars.
func TestDuplicateKeyTopLevel(t *testing.T) {
	tests := []struct {
		body string
		v    any
		want string // field of the 400; "" for none
	}{
		{`{"a":1,"a":2}`, &map[string]int{}, "a"},
		{`{"a":1,"A":2}`, &map[string]int{}, ""},
		{`[{"a":1},{"b":1,"b":2}]`, new(any), "[1].b"},
		{`[[1,2],[{"x":[{},{"y":1,"y":1}]}]]`, new(any), "[1][0].x[1].y"},
		{`"a"`, new(string), ""},
		{`12`, new(int), ""},
		{`{"":1,"":2}`, new(any), `""`},
		{`{"a":{"":1,"":2}}`, new(any), `a.""`},
	}
	for _, tt := range tests {
		err := DecodeJSON(strings.NewReader(tt.body), tt.v)
		var e *Error
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: got %v, want accepted", tt.body, err)
		case tt.want != "" && (!errors.As(err, &e) || e.Status != 400 || e.Field != tt.want):
			t.Errorf("%s: got %v, want 400 naming %s", tt.body, err, tt.want)
		}
	}
}

func TestDecodeJSONNilBody(t *testing.T) {
	var v decodeBody
	err := DecodeJSON(nil, &v)
	e := asError(err)
	if e.Status != http.StatusBadRequest || e.Field != "body" {
		t.Errorf("got %d field %q, want 400 field body", e.Status, e.Field)
	}
}

func TestMapperVocabulary(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		status int
		field  string
		retry  bool
	}{
		{"field error", fmt.Errorf("create job: %w", fielderr.New("max_pages", "must be at most 500")), 400, "max_pages", false},
		{"deadline", fmt.Errorf("query neo4j: %w", context.DeadlineExceeded), 503, "", true},
		{"explicit error wins", BadRequest("q", "empty"), 400, "q", false},
		{"unknown", fmt.Errorf("boom"), 500, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := asError(tt.err)
			if e.Status != tt.status || e.Field != tt.field || (e.Retry > 0) != tt.retry {
				t.Errorf("got status %d field %q retry %d, want %d %q retry %v", e.Status, e.Field, e.Retry, tt.status, tt.field, tt.retry)
			}
		})
	}
}

func TestJSONContentType(t *testing.T) {
	for ct, want := range map[string]int{
		"": 0, "application/json": 0, "application/json; charset=utf-8": 0, "Application/JSON": 0,
		"text/plain": http.StatusUnsupportedMediaType, "application/x-www-form-urlencoded": http.StatusUnsupportedMediaType,
		"application/xml": http.StatusUnsupportedMediaType, "json": http.StatusUnsupportedMediaType,
	} {
		r, _ := http.NewRequest(http.MethodPost, "/", strings.NewReader("{}"))
		if ct != "" {
			r.Header.Set("Content-Type", ct)
		}
		err := JSONContentType(r)
		var he *Error
		switch {
		case want == 0 && err != nil:
			t.Errorf("Content-Type %q: got %v, want accepted", ct, err)
		case want != 0 && (!errors.As(err, &he) || he.Status != want || he.Field != "Content-Type" || !strings.Contains(he.Detail, "application/json")):
			t.Errorf("Content-Type %q: got %v, want %d naming Content-Type", ct, err, want)
		}
	}
}

// benchBody is a body of about size bytes: a struct with a list of small objects
// and a map, the shapes the services decode.
func benchBody(size int) []byte {
	var b strings.Builder
	b.WriteString(`{"name":"x","tags":["a","b"],"items":[`)
	for i := 0; b.Len() < size/2; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"n":%d}`, i)
	}
	b.WriteString(`],"meta":{`)
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%d":{"v":"value %d","w":[1,2,3]}`, i, i)
	}
	b.WriteString(`}}`)
	return []byte(b.String())
}

// BenchmarkDecodeJSON shows the cost per byte stays flat as bodies grow (linear),
// and what the duplicate-key scan adds to encoding/json's decoding.
func BenchmarkDecodeJSON(b *testing.B) {
	for _, size := range []int{16 << 10, 256 << 10, 1 << 20} {
		body := benchBody(size)
		b.Run(fmt.Sprintf("DecodeJSON/%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				var v decodeBody
				if err := DecodeJSON(strings.NewReader(string(body)), &v); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("duplicateScan/%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if err := duplicateKeyError(body, &decodeBody{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	deep := []byte(strings.Repeat(`{"a":`, 9000) + "1" + strings.Repeat("}", 9000))
	b.Run("duplicateScan/deep9000", func(b *testing.B) {
		b.SetBytes(int64(len(deep)))
		for b.Loop() {
			if err := duplicateKeyError(deep, new(any)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
