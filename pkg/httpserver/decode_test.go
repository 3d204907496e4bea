package httpserver

import (
	"context"
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
