package httpserver

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestStrictQuery(t *testing.T) {
	spec := QuerySpec{Names: []string{"q", "k", "tags"}, Repeat: []string{"tags"}, Instead: map[string]string{"limit": "k"}}
	tests := []struct {
		query, field, says string // field "" = accepted
	}{
		{"q=x&k=5&tags=a&tags=b", "", ""},
		{"", "", ""},
		{"q=x&limit=5", "limit", `did you mean "k"`},
		{"q=x&LIMIT=5", "LIMIT", `did you mean "k"`},
		{"Q=x", "Q", `lower case: "q"`},
		{"q=x&zz=1", "zz", "the parameters are q, k, tags"},
		{"q=a&q=b", "q", "given 2 times"},
		{"q=%%%", "query", "literal '%' must be sent as %25"},
		{"q=a;b", "query", "%3B"},
	}
	for _, tt := range tests {
		req := httptest.NewRequest(http.MethodGet, "/x?"+tt.query, nil)
		_, err := StrictQuery(req, spec)
		if tt.field == "" {
			if err != nil {
				t.Errorf("%q: %v, want accepted", tt.query, err)
			}
			continue
		}
		var e *Error
		if !errors.As(err, &e) || e.Status != http.StatusBadRequest || e.Field != tt.field || !strings.Contains(e.Detail, tt.says) {
			t.Errorf("%q: got %v, want 400 on %s saying %q", tt.query, err, tt.field, tt.says)
		}
	}
}

func TestAcceptable(t *testing.T) {
	for accept, ok := range map[string]bool{
		"": true, "*/*": true, "application/*": true, "application/json": true, "text/toon;q=0.5": true,
		"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8": true, "garbage;;;": true,
		"application/xml": false, "text/html": false, "text/*": true, "image/*": false, "application/json;q=0, text/csv": false,
	} {
		req := httptest.NewRequest(http.MethodGet, "/x", nil)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		err := Acceptable(req, "application/json", "text/toon")
		var e *Error
		switch {
		case ok && err != nil:
			t.Errorf("Accept %q: %v, want acceptable", accept, err)
		case !ok && (!errors.As(err, &e) || e.Status != http.StatusNotAcceptable || !strings.Contains(e.Detail, "application/json")):
			t.Errorf("Accept %q: %v, want 406 naming what is served", accept, err)
		}
	}
}
