package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestAPIKey: against a search service that wants a key (KGS_API_KEYS),
// kgload sends KGS_API_KEY (or -api-key) as a bearer token on every request
// and never prints it; without a key, or with a refused one, it stops before
// the run with what to do.
func TestAPIKey(t *testing.T) {
	const key = "k3y-0123456789-secret"
	var asked, refused atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		if r.Header.Get("Authorization") != "Bearer "+key {
			refused.Add(1)
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"title":"Unauthorized","status":401}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"query":{"entities":[]},"total_time_ms":1,"phase_ms":{},"degraded":[]}`)
	}))
	defer srv.Close()
	queries := filepath.Join(t.TempDir(), "q.txt")
	if err := os.WriteFile(queries, []byte("json module\nhttp client\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := func(extra ...string) []string {
		return append([]string{"-search", srv.URL, "-clients", "1", "-duration", "0", "-requests", "3",
			"-queries", queries, "-pid-file", "", "-cpu", ""}, extra...)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	runWith := func(t *testing.T, a []string) (string, error) {
		t.Helper()
		cfg, err := parseFlags(a)
		if err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		_, err = run(context.Background(), log, cfg, &out)
		return out.String(), err
	}

	for name, setup := range map[string]func(t *testing.T) []string{
		"KGS_API_KEY": func(t *testing.T) []string { t.Setenv("KGS_API_KEY", key); return args() },
		"-api-key":    func(t *testing.T) []string { t.Setenv("KGS_API_KEY", ""); return args("-api-key", key) },
	} {
		t.Run(name, func(t *testing.T) {
			asked.Store(0)
			refused.Store(0)
			out, err := runWith(t, setup(t))
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			if asked.Load() != 4 || refused.Load() != 0 {
				t.Errorf("requests: %d, refused %d; want 4 (probe + 3), none refused", asked.Load(), refused.Load())
			}
			if strings.Contains(out, key) {
				t.Errorf("the key is printed:\n%s", out)
			}
		})
	}

	t.Run("no key", func(t *testing.T) {
		t.Setenv("KGS_API_KEY", "")
		asked.Store(0)
		_, err := runWith(t, args())
		if err == nil || !strings.Contains(err.Error(), "answered 401") || !strings.Contains(err.Error(), "KGS_API_KEY or -api-key") {
			t.Errorf("run without a key: %v, want the 401 and where to give the key", err)
		}
		if asked.Load() != 1 {
			t.Errorf("requests: %d, want 1 (the probe; no run of 401s)", asked.Load())
		}
	})
	t.Run("refused key", func(t *testing.T) {
		t.Setenv("KGS_API_KEY", "wrong-"+key)
		_, err := runWith(t, args())
		if err == nil || !strings.Contains(err.Error(), "was refused") || strings.Contains(err.Error(), key) {
			t.Errorf("run with a refused key: %v, want a 401 that does not print the key", err)
		}
	})
}
