package api

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kgsearch/kgsearch/pkg/httpserver"
)

func TestParseDate(t *testing.T) {
	tests := []struct {
		in   string
		want time.Time
		ok   bool
	}{
		{"", time.Time{}, true},
		{"2025-01-31", time.Date(2025, 1, 31, 0, 0, 0, 0, time.UTC), true},
		{"2025-01-31T10:00:00+02:00", time.Date(2025, 1, 31, 8, 0, 0, 0, time.UTC), true},
		{"31/01/2025", time.Time{}, false},
		{"2025-02-30", time.Time{}, false},
	}
	for _, tt := range tests {
		got, err := parseDate(tt.in)
		if (err == nil) != tt.ok || !got.Equal(tt.want) {
			t.Errorf("parseDate(%q): got %v, %v; want %v, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestTagsAndWeightsForms(t *testing.T) {
	f, err := fromBody(strings.NewReader(`{"q":"x","tags":"a, b,,c","weights":{"bm25":2,"vector":2}}`))
	if err != nil {
		t.Fatal(err)
	}
	req, err := f.request()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(req.Tags, "|") != "a|b|c" || req.Weights.String() != "vector:0.5,bm25:0.5" {
		t.Errorf("got tags %v weights %s", req.Tags, req.Weights)
	}
	q := fromQuery(url.Values{"q": {"x"}, "tags": {"a,b"}, "tag": {"c"}})
	if strings.Join(q.tags, "|") != "a|b|c" {
		t.Errorf("query tags: got %v", q.tags)
	}
}

// FuzzSearchParams feeds arbitrary query strings to the parameter parser: it must
// either accept them or answer a 400 naming a field, never panic.
func FuzzSearchParams(f *testing.F) {
	for _, s := range []string{"q=x", "q=x&k=5&offset=2&tags=a,b&weights=vector:1", "q=&k=-1", "q=x&mmr=0.5&fusion=rrf",
		"q=x&published_after=2025-01-01&published_before=2024-01-01", "q=%00&domain=a.com'--", "q=x&weights=vector:NaN"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		_, err = fromQuery(v).request()
		if err == nil {
			return
		}
		var he *httpserver.Error
		if !errors.As(err, &he) || he.Status != http.StatusBadRequest || he.Field == "" || he.Detail == "" {
			t.Errorf("%q: got %v, want a 400 naming a field", raw, err)
		}
	})
}

// TestDomainWithAPort: documents are stored under their host name without a
// port, so a domain filter with one would match nothing; it is a 400 that
// names the host to give instead.
func TestDomainWithAPort(t *testing.T) {
	for d, want := range map[string]string{"127.0.0.1:8099": "give 127.0.0.1", "[::1]:8099": "give ::1", "[::1]": "give ::1",
		"Docs.Example.com:443": "give Docs.Example.com"} {
		_, err := fromQuery(url.Values{"q": {"x"}, "domain": {d}}).request()
		var he *httpserver.Error
		if !errors.As(err, &he) || he.Status != http.StatusBadRequest || he.Field != "domain" || !strings.HasSuffix(he.Detail, want) {
			t.Errorf("domain %q: got %v, want a 400 on domain ending %q", d, err, want)
		}
	}
	for _, d := range []string{"", "127.0.0.1", "docs.example.com", "::1", "a:b"} {
		req, err := fromQuery(url.Values{"q": {"x"}, "domain": {d}}).request()
		if err != nil || req.Domain != d {
			t.Errorf("domain %q: got %v, %q", d, err, req.Domain)
		}
	}
}

// history=keep and generated=keep reach the pipeline request from a URL and from a
// body, in any case, each setting only its own flag; demote and no value leave
// version history, source listings and generated indexes ranked lower.
func TestKeepParams(t *testing.T) {
	for _, c := range []struct {
		query, body  string
		history, gen bool
	}{
		{query: "q=x&history=keep", history: true},
		{query: "q=x&history=KEEP", history: true},
		{query: "q=x&history=demote"},
		{query: "q=x&generated=keep", gen: true},
		{query: "q=x&generated=Keep", gen: true},
		{query: "q=x&generated=demote"},
		{query: "q=x&history=keep&generated=keep", history: true, gen: true},
		{query: "q=x"},
		{body: `{"q":"x","history":"keep"}`, history: true},
		{body: `{"q":"x","history":"demote"}`},
		{body: `{"q":"x","generated":"keep"}`, gen: true},
		{body: `{"q":"x","generated":"demote"}`},
		{body: `{"q":"x"}`},
	} {
		var f fields
		if c.body != "" {
			var err error
			if f, err = fromBody(strings.NewReader(c.body)); err != nil {
				t.Fatal(err)
			}
		} else {
			v, _ := url.ParseQuery(c.query)
			f = fromQuery(v)
		}
		req, err := f.request()
		if err != nil || req.KeepHistory != c.history || req.KeepGenerated != c.gen {
			t.Errorf("%s%s: KeepHistory %v, KeepGenerated %v, err %v; want %v, %v", c.query, c.body,
				req.KeepHistory, req.KeepGenerated, err, c.history, c.gen)
		}
	}
}
