package httpserver

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// serve sends a request through the server's Handler (as Run serves it).
func serve(s *Server, method, path string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, nil)
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	return rec
}

func TestHeadAnswersLikeGetWithoutBody(t *testing.T) {
	s := newTestServer(t, Config{})
	for _, path := range []string{"/healthz", "/metrics", "/api/v1/bad"} {
		get := serve(s, http.MethodGet, path)
		head := serve(s, http.MethodHead, path)
		if head.Code != get.Code {
			t.Errorf("HEAD %s: status %d, GET gave %d", path, head.Code, get.Code)
		}
		if got, want := head.Header().Get("Content-Type"), get.Header().Get("Content-Type"); got != want {
			t.Errorf("HEAD %s: content type %q, GET gave %q", path, got, want)
		}
		if head.Body.Len() != 0 {
			t.Errorf("HEAD %s: body of %d bytes, want none", path, head.Body.Len())
		}
	}
	// A path with only POST: HEAD is refused like GET, naming HEAD.
	rec := serve(s, http.MethodHead, "/api/v1/echo")
	if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") == "" {
		t.Fatalf("HEAD on a POST route: %d Allow=%q, want 405 with Allow", rec.Code, rec.Header().Get("Allow"))
	}
	// The metrics count the HEAD as HEAD.
	if n := testutil.ToFloat64(s.reqs.WithLabelValues("/healthz", http.MethodHead, "200")); n != 1 {
		t.Fatalf("HEAD /healthz counted %v times under HEAD, want 1", n)
	}
}

func TestOptionsListsAllowedMethods(t *testing.T) {
	s := newTestServer(t, Config{})
	rec := serve(s, http.MethodOptions, "/api/v1/bad")
	if rec.Code != http.StatusNoContent {
		t.Fatalf("OPTIONS: status %d, want 204 (body %s)", rec.Code, rec.Body)
	}
	allow := rec.Header().Get("Allow")
	for _, m := range []string{"GET", "HEAD", "OPTIONS"} {
		if !strings.Contains(allow, m) {
			t.Errorf("OPTIONS: Allow %q lacks %s", allow, m)
		}
	}
	rec = serve(s, http.MethodDelete, "/api/v1/bad")
	if rec.Code != http.StatusMethodNotAllowed {
		t.Fatalf("DELETE: status %d, want 405", rec.Code)
	}
	p := problem(t, rec)
	if !strings.Contains(p.Detail, "DELETE is not supported") || !strings.Contains(p.Detail, "GET") {
		t.Fatalf("405 detail %q should name the method sent and the ones to use", p.Detail)
	}
}

func TestMadeUpMethodsShareOneMetricLabel(t *testing.T) {
	s := newTestServer(t, Config{})
	for _, m := range []string{"FOO1", "FOO2", "FOO3"} {
		if rec := serve(s, m, "/api/v1/bad"); rec.Code != http.StatusMethodNotAllowed {
			t.Fatalf("%s: status %d, want 405", m, rec.Code)
		}
	}
	if n := testutil.ToFloat64(s.reqs.WithLabelValues("unmatched", "OTHER", "405")); n != 3 {
		t.Fatalf("made-up methods counted %v times under OTHER, want 3", n)
	}
	if n := testutil.CollectAndCount(s.reqs); n != 1 {
		t.Fatalf("%d request series after three made-up methods, want 1", n)
	}
}
