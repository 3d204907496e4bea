package app

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/kgsearch/kgsearch/pkg/kgapi/kgapitest"
	"github.com/kgsearch/kgsearch/services/crawler/internal/testsite"
)

// TestAPIWhileMariaDBIsDown: while MariaDB cannot be reached, every API route that
// needs it answers 503 problem+json with Retry-After (the request may succeed
// later), not a 500; once MariaDB is back the same requests succeed. The real
// service runs on a real MariaDB behind a loopback proxy that is taken down;
// before the fix the routes answered 500 with the driver's "connection refused".
func TestAPIWhileMariaDBIsDown(t *testing.T) {
	site := testsite.New(testsite.Options{})
	t.Cleanup(site.Close)
	kg := kgapitest.New(t)
	mc, err := mysql.ParseDSN(freshDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	proxy := newFaultProxy(t, mc.Addr)
	mc.Addr = proxy.addr
	base := runService(t, map[string]string{
		"KGS_MARIADB_DSN": mc.FormatDSN(), "KGS_KG_URL": kg.URL, "CRAWLER_ALLOW_HOSTS": site.Addr(),
	})
	id := startCrawl(t, base, fmt.Sprintf(`{"url":%q,"max_depth":0,"use_sitemap":false}`, site.SeedURL()))
	seed := fmt.Sprintf(`{"url":%q,"max_depth":0}`, site.SeedURL())
	requests := []struct{ method, path, body string }{
		{http.MethodGet, "/api/v1/crawls", ""},
		{http.MethodGet, "/api/v1/crawls/" + id, ""},
		{http.MethodGet, "/api/v1/crawls/" + id + "/events", ""},
		{http.MethodPost, "/api/v1/crawls", seed},
		{http.MethodGet, "/api/v1/documents", ""},
		{http.MethodGet, "/api/v1/chunks/1", ""},
		{http.MethodGet, "/api/v1/blocklist", ""},
		{http.MethodPost, "/api/v1/blocklist", `{"domain":"ads.example.com"}`},
	}
	do := func(method, path, body string) (*http.Response, string) {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp, string(data)
	}

	proxy.Down()
	for _, r := range requests {
		resp, body := do(r.method, r.path, r.body)
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" ||
			resp.Header.Get("Content-Type") != "application/problem+json" || !strings.Contains(body, "MariaDB") {
			t.Errorf("%s %s with MariaDB down: got %d (Retry-After %q, %s) %s; want 503 problem+json with Retry-After naming MariaDB",
				r.method, r.path, resp.StatusCode, resp.Header.Get("Retry-After"), resp.Header.Get("Content-Type"), body)
		}
		if strings.Contains(body, proxy.addr) {
			t.Errorf("%s %s: the answer shows the database's address: %s", r.method, r.path, body)
		}
	}

	proxy.Up(t)
	waitFor(t, 30*time.Second, func() bool { return httpOK(base + "/readyz") })
	for _, r := range requests {
		if r.path == "/api/v1/crawls/"+id+"/events" || r.path == "/api/v1/chunks/1" {
			continue // a stream that lasts until the job ends; a chunk that does not exist
		}
		if resp, body := do(r.method, r.path, r.body); resp.StatusCode >= 300 {
			t.Errorf("%s %s with MariaDB back: got %d %s", r.method, r.path, resp.StatusCode, body)
		}
	}
}
