package app

import (
	"log/slog"
	"testing"

	"github.com/kgsearch/kgsearch/pkg/httpserver"
	"github.com/kgsearch/kgsearch/pkg/httpserver/httpservertest"
	"github.com/kgsearch/kgsearch/services/kg/internal/api"
	"github.com/kgsearch/kgsearch/services/kg/internal/config"
)

// authKey is a key configured in the route-table tests.
const authKey = "route-table-key-0123456789"

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// With keys, every kg API route needs one: ingest and delete, and the reads search
// makes (search sends KGS_KG_API_KEY on every call).
func TestEveryAPIRouteNeedsAKey(t *testing.T) {
	cfg := config.Default("")
	cfg.APIKeys = []string{authKey}
	srv := httpserver.New("kg", cfg.HTTP(), discard())
	api.New(srv, api.Deps{}).Register()
	st := httpservertest.AnonymousStatus(t, srv, "/api/")
	for _, must := range []string{"POST /api/v1/ingest", "DELETE /api/v1/documents/:id"} {
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
