package toon_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/kgsearch/kgsearch/pkg/toon"
)

func TestNegotiate(t *testing.T) {
	tests := []struct {
		name   string
		target string
		accept []string
		def    toon.Format
		want   toon.Format
	}{
		{"no accept uses default toon", "/", nil, toon.FormatTOON, toon.FormatTOON},
		{"no accept uses default json", "/", nil, toon.FormatJSON, toon.FormatJSON},
		{"query toon wins over accept", "/?format=toon", []string{"application/json"}, toon.FormatJSON, toon.FormatTOON},
		{"query json wins over accept", "/?format=JSON", []string{"text/toon"}, toon.FormatTOON, toon.FormatJSON},
		{"unknown query falls back to accept", "/?format=xml", []string{"text/toon"}, toon.FormatJSON, toon.FormatTOON},
		{"accept toon", "/", []string{"text/toon"}, toon.FormatJSON, toon.FormatTOON},
		{"accept toon with charset", "/", []string{"text/toon; charset=utf-8"}, toon.FormatJSON, toon.FormatTOON},
		{"accept json", "/", []string{"application/json"}, toon.FormatTOON, toon.FormatJSON},
		{"wildcard uses default", "/", []string{"*/*"}, toon.FormatTOON, toon.FormatTOON},
		{"quality decides", "/", []string{"application/json;q=0.5, text/toon;q=0.9"}, toon.FormatJSON, toon.FormatTOON},
		{"quality decides json", "/", []string{"text/toon;q=0.2, application/json"}, toon.FormatTOON, toon.FormatJSON},
		{"exact beats wildcard", "/", []string{"*/*;q=0.1, application/json"}, toon.FormatTOON, toon.FormatJSON},
		{"type wildcard", "/", []string{"text/*"}, toon.FormatJSON, toon.FormatTOON},
		{"several headers", "/", []string{"text/html", "text/toon"}, toon.FormatJSON, toon.FormatTOON},
		{"browser accept", "/", []string{"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}, toon.FormatTOON, toon.FormatTOON},
		{"malformed accept", "/", []string{";;;"}, toon.FormatTOON, toon.FormatTOON},
		{"toon refused", "/", []string{"text/toon;q=0, */*"}, toon.FormatTOON, toon.FormatJSON},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, tt.target, nil)
			for _, a := range tt.accept {
				r.Header.Add("Accept", a)
			}
			if got := toon.Negotiate(r, tt.def); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestWriteHTTP(t *testing.T) {
	body := map[string]any{"results": []map[string]any{{"id": 1, "title": "a"}, {"id": 2, "title": "b"}}}
	tests := []struct {
		name, accept, wantType, wantBody string
	}{
		{"toon", "text/toon", "text/toon; charset=utf-8", "results[2]{id,title}:\n  1,a\n  2,b"},
		{"json", "application/json", "application/json; charset=utf-8", `{"results":[{"id":1,"title":"a"},{"id":2,"title":"b"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/api/v1/search", nil)
			r.Header.Set("Accept", tt.accept)
			w := httptest.NewRecorder()
			if err := toon.WriteHTTP(w, r, http.StatusCreated, body, toon.FormatTOON); err != nil {
				t.Fatal(err)
			}
			if w.Code != http.StatusCreated {
				t.Errorf("got status %d, want %d", w.Code, http.StatusCreated)
			}
			if got := w.Header().Get("Content-Type"); got != tt.wantType {
				t.Errorf("got Content-Type %q, want %q", got, tt.wantType)
			}
			if got := w.Header().Get("Vary"); got != "Accept" {
				t.Errorf("got Vary %q, want Accept", got)
			}
			if got := w.Body.String(); got != tt.wantBody {
				t.Errorf("got body %q, want %q", got, tt.wantBody)
			}
		})
	}
	t.Run("encode error writes nothing", func(t *testing.T) {
		r := httptest.NewRequest(http.MethodGet, "/?format=toon", nil)
		w := httptest.NewRecorder()
		if err := toon.WriteHTTP(w, r, http.StatusOK, map[string]any{"c": make(chan int)}, toon.FormatTOON); err == nil {
			t.Fatal("got nil error, want unsupported type")
		}
		if w.Body.Len() != 0 || w.Header().Get("Content-Type") != "" {
			t.Errorf("got body %q and headers %v, want nothing written", w.Body.String(), w.Header())
		}
	})
}
