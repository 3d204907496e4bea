package app

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/kgsearch/kgsearch/pkg/httpserver"
	"github.com/kgsearch/kgsearch/pkg/httpserver/httpservertest"
	"github.com/kgsearch/kgsearch/services/search/internal/api"
	"github.com/kgsearch/kgsearch/services/search/internal/config"
	"github.com/kgsearch/kgsearch/services/search/internal/web"
)

// authKey is a key configured in the route-table tests.
const authKey = "route-table-key-0123456789"

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// With keys, every search API route and /mcp need one; with KGS_PUBLIC_SEARCH the
// GET searches, suggestions and status are open, and nothing else is.
func TestEveryAPIRouteNeedsAKey(t *testing.T) {
	open := map[string]bool{"GET /api/v1/search": true, "GET /api/v1/suggest": true, "GET /api/v1/status": true}
	for _, public := range []bool{false, true} {
		cfg := config.Default()
		cfg.APIKeys = []string{authKey}
		cfg.PublicSearch = public
		srv := httpserver.New("search", cfg.HTTP(), discard())
		api.New(srv, api.Deps{}).Register()
		MountMCP(srv, nil, nil, cfg.APIKeys, discard())
		st := httpservertest.AnonymousStatus(t, srv, "/")
		for _, must := range []string{"GET /api/v1/search", "POST /api/v1/search", "POST /api/v1/admin/reindex", "POST /mcp"} {
			if _, ok := st[must]; !ok {
				t.Errorf("route %s not registered", must)
			}
		}
		for route, code := range st {
			if !strings.HasPrefix(route, "GET /api/") && !strings.HasPrefix(route, "POST /api/") &&
				!strings.HasPrefix(route, "DELETE /api/") && !strings.HasSuffix(route, " /mcp") {
				continue // /healthz, /readyz, /metrics
			}
			if want401 := !(public && open[route]); want401 != (code == 401) {
				t.Errorf("public=%v: %s without a key: %d, want 401=%v", public, route, code, want401)
			}
		}
	}
}

// The rate-limited routes of the configuration are routes the service registers
// (API, MCP, web pages).
func TestRateLimitedRoutesExist(t *testing.T) {
	cfg := config.Default()
	cfg.APIKeys = []string{authKey}
	srv := httpserver.New("search", cfg.HTTP(), discard())
	api.New(srv, api.Deps{}).Register()
	MountMCP(srv, nil, nil, cfg.APIKeys, discard())
	pages, err := web.New(web.Deps{APIKeys: cfg.APIKeys, Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	pages.Register(srv.Engine())
	registered := map[string]bool{}
	for _, r := range srv.Engine().Routes() {
		registered[r.Method+" "+r.Path] = true
	}
	n := 0
	for _, l := range cfg.HTTP().Limits {
		for _, r := range l.Routes {
			n++
			if !registered[r] {
				t.Errorf("limited route %q is not registered", r)
			}
		}
	}
	if n < 5 {
		t.Errorf("only %d limited routes", n)
	}
}

// Sign-in attempts from one address are limited: the default burst passes (each
// a wrong key), the next one is a 429 with Retry-After. (192.0.2.0/24 is the
// documentation network; the request never leaves the process.)
func TestLoginAttemptsAreLimited(t *testing.T) {
	cfg := config.Default()
	cfg.APIKeys = []string{authKey}
	srv := httpserver.New("search", cfg.HTTP(), discard())
	pages, err := web.New(web.Deps{APIKeys: cfg.APIKeys, Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	pages.Register(srv.Engine())
	attempt := func() *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(url.Values{"key": {"wrong-key"}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.RemoteAddr = "192.0.2.7:40000"
		rec := httptest.NewRecorder()
		srv.Engine().ServeHTTP(rec, req)
		return rec
	}
	for i := range config.DefaultLoginRatePerAddr.Burst {
		if rec := attempt(); rec.Code == http.StatusTooManyRequests {
			t.Fatalf("attempt %d within the burst: 429", i+1)
		}
	}
	rec := attempt()
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" {
		t.Errorf("attempt over the limit: %d, Retry-After %q; want 429 with Retry-After", rec.Code, rec.Header().Get("Retry-After"))
	}
}
