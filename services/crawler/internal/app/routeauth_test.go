package app

import (
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kgsearch/kgsearch/pkg/httpserver"
	"github.com/kgsearch/kgsearch/pkg/httpserver/httpservertest"
	"github.com/kgsearch/kgsearch/services/crawler/internal/api"
	"github.com/kgsearch/kgsearch/services/crawler/internal/config"
)

// authKey is a key configured in the route-table tests.
const authKey = "route-table-key-0123456789"

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// With keys, every crawler API route needs one, reads included (the search service
// and kgs send KGS_CRAWLER_API_KEY on every call).
func TestEveryAPIRouteNeedsAKey(t *testing.T) {
	cfg := config.Default()
	cfg.APIKeys = []string{authKey}
	srv := httpserver.New("crawler", cfg.HTTP(), discard())
	api.New(srv, api.Deps{}).Register()
	st := httpservertest.AnonymousStatus(t, srv, "/api/")
	for _, must := range []string{"POST /api/v1/crawls", "DELETE /api/v1/documents/:id", "GET /api/v1/crawls"} {
		if _, ok := st[must]; !ok {
			t.Errorf("route %s not registered", must)
		}
	}
	for route, code := range st {
		if code != 401 {
			t.Errorf("%s without a key: %d, want 401", route, code)
		}
	}
}

// The rate-limited routes of the configuration are routes the API registers, and a
// key over its crawl-creation budget gets 429 with Retry-After.
func TestRateLimitedRoutesExist(t *testing.T) {
	cfg := config.Default()
	cfg.APIKeys = []string{authKey}
	cfg.RatePerKey = httpserver.Rate{PerSecond: 1.0 / 60, Burst: 2}
	srv := httpserver.New("crawler", cfg.HTTP(), discard())
	api.New(srv, api.Deps{}).Register()
	registered := map[string]bool{}
	for _, r := range srv.Engine().Routes() {
		registered[r.Method+" "+r.Path] = true
	}
	for _, l := range cfg.HTTP().Limits {
		for _, r := range l.Routes {
			if !registered[r] {
				t.Errorf("limited route %q is not registered", r)
			}
		}
	}
	var codes []int
	for range 3 {
		req := httptest.NewRequest("POST", "/api/v1/crawls", strings.NewReader("{}"))
		req.RemoteAddr = "192.0.2.1:1000"
		req.Header.Set("Authorization", "Bearer "+authKey)
		rec := httptest.NewRecorder()
		srv.Engine().ServeHTTP(rec, req)
		codes = append(codes, rec.Code)
		if rec.Code == 429 && rec.Header().Get("Retry-After") == "" {
			t.Error("429 without Retry-After")
		}
	}
	if codes[0] == 429 || codes[1] == 429 || codes[2] != 429 {
		t.Errorf("statuses %v: want the third over a burst of 2 to be 429", codes)
	}
}
