package app

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/kgsearch/kgsearch/internal/testenv"
	"github.com/kgsearch/kgsearch/pkg/kgapi/kgapitest"
	"github.com/kgsearch/kgsearch/services/crawler/internal/testsite"
)

// TestAPIWhileMariaDBIsDown: while MariaDB cannot be reached, every API route that
// needs it answers 503 problem+json with Retry-After (the request may succeed
// later), not a 500; once MariaDB is back the same requests succeed. The real
// service runs on a real MariaDB behind a loopback proxy that is taken down;
// before the fix the routes answered 500 with the driver's "connection refused".
func TestAPIWhileMariaDBIsDown(t *testing.T) {
	base, proxy, requests := dbRoutes(t, "")
	proxy.Down()
	for _, r := range requests {
		resp, body := doRequest(t, base, r)
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" ||
			resp.Header.Get("Content-Type") != "application/problem+json" || !strings.Contains(body, "MariaDB") {
			t.Errorf("%s %s with MariaDB down: got %d (Retry-After %q, %s) %s; want 503 problem+json with Retry-After naming MariaDB",
				r.method, r.path, resp.StatusCode, resp.Header.Get("Retry-After"), resp.Header.Get("Content-Type"), body)
		}
		if strings.Contains(body, proxy.Addr()) {
			t.Errorf("%s %s: the answer shows the database's address: %s", r.method, r.path, body)
		}
	}

	proxy.Up(t)
	waitFor(t, 30*time.Second, func() bool { return httpOK(base + "/readyz") })
	checkRoutesWork(t, base, requests)
}

// TestAPIWhileMariaDBHangs: while MariaDB accepts connections but answers
// nothing (a server stopped with SIGSTOP, or one too busy to answer), every API
// route that needs it answers 503 problem+json with Retry-After naming MariaDB
// within CRAWLER_STORE_TIMEOUT, instead of holding the request until the client
// gives up; once MariaDB answers again the same requests succeed. Before the
// fix each of these requests hung for as long as the database did (120 s and
// more against a stopped mariadbd).
func TestAPIWhileMariaDBHangs(t *testing.T) {
	const timeout = 2 * time.Second
	base, proxy, requests := dbRoutes(t, timeout.String())
	proxy.Freeze()
	defer proxy.Thaw()
	var wg sync.WaitGroup
	for _, r := range requests {
		wg.Go(func() {
			start := time.Now()
			resp, body := doRequest(t, base, r)
			took := time.Since(start)
			if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" ||
				resp.Header.Get("Content-Type") != "application/problem+json" || !strings.Contains(body, "MariaDB") {
				t.Errorf("%s %s with MariaDB hanging: got %d (Retry-After %q, %s) %s after %s; want 503 problem+json with Retry-After naming MariaDB",
					r.method, r.path, resp.StatusCode, resp.Header.Get("Retry-After"), resp.Header.Get("Content-Type"), body, took)
			}
			// The client waits up to a minute; the answer must come with the
			// store timeout (a request may wait for a pool connection first).
			if took > 4*timeout {
				t.Errorf("%s %s with MariaDB hanging: answered after %s; want about %s", r.method, r.path, took, timeout)
			}
		})
	}
	wg.Wait()

	proxy.Thaw()
	waitFor(t, 30*time.Second, func() bool { return httpOK(base + "/readyz") })
	checkRoutesWork(t, base, requests)
}

type apiRequest struct{ method, path, body string }

// dbRoutes runs the crawler service on a real MariaDB behind a fault proxy,
// with a crawl of the test site started, and returns its address, the proxy
// and one request of every API route that reads or writes MariaDB. storeTimeout,
// when not empty, is the service's CRAWLER_STORE_TIMEOUT.
func dbRoutes(t *testing.T, storeTimeout string) (string, *testenv.FaultProxy, []apiRequest) {
	t.Helper()
	site := testsite.New(testsite.Options{})
	t.Cleanup(site.Close)
	kg := kgapitest.New(t)
	mc, err := mysql.ParseDSN(freshDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	proxy := testenv.NewFaultProxy(t, mc.Addr)
	mc.Addr = proxy.Addr()
	env := map[string]string{
		"KGS_MARIADB_DSN": mc.FormatDSN(), "KGS_KG_URL": kg.URL, "CRAWLER_ALLOW_HOSTS": site.Addr(),
	}
	if storeTimeout != "" {
		env["CRAWLER_STORE_TIMEOUT"] = storeTimeout
	}
	base := runService(t, env)
	id := startCrawl(t, base, fmt.Sprintf(`{"url":%q,"max_depth":0,"use_sitemap":false}`, site.SeedURL()))
	seed := fmt.Sprintf(`{"url":%q,"max_depth":0}`, site.SeedURL())
	return base, proxy, []apiRequest{
		{http.MethodGet, "/api/v1/crawls", ""},
		{http.MethodGet, "/api/v1/crawls/" + id, ""},
		{http.MethodGet, "/api/v1/crawls/" + id + "/events", ""},
		{http.MethodPost, "/api/v1/crawls", seed},
		{http.MethodGet, "/api/v1/documents", ""},
		{http.MethodGet, "/api/v1/chunks/1", ""},
		{http.MethodGet, "/api/v1/blocklist", ""},
		{http.MethodPost, "/api/v1/blocklist", `{"domain":"ads.example.com"}`},
	}
}

func doRequest(t *testing.T, base string, r apiRequest) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(r.method, base+r.path, strings.NewReader(r.body))
	if r.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	client := &http.Client{Timeout: time.Minute}
	resp, err := client.Do(req)
	if err != nil {
		t.Errorf("%s %s: %v", r.method, r.path, err)
		return &http.Response{Header: http.Header{}}, ""
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp, string(data)
}

// checkRoutesWork fails the test when a request answers other than 2xx.
func checkRoutesWork(t *testing.T, base string, requests []apiRequest) {
	t.Helper()
	for _, r := range requests {
		if strings.HasSuffix(r.path, "/events") || r.path == "/api/v1/chunks/1" {
			continue // a stream that lasts until the job ends; a chunk that does not exist
		}
		if resp, body := doRequest(t, base, r); resp.StatusCode >= 300 {
			t.Errorf("%s %s with MariaDB back: got %d %s", r.method, r.path, resp.StatusCode, body)
		}
	}
}
