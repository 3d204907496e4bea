// Package scripts_test tests the shell functions scripts/run.sh uses
// (scripts/runlib.sh), run by bash against a fake crawler.
package scripts_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// runlib runs script in bash after sourcing runlib.sh and returns its standard
// output, its standard error and whether it succeeded.
func runlib(t *testing.T, script string, args ...string) (stdout, stderr string, ok bool) {
	t.Helper()
	for _, tool := range []string{"bash", "curl", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not on PATH", tool)
		}
	}
	cmd := exec.Command("bash", append([]string{"-c", "set -euo pipefail; source ./runlib.sh; " + script, "runlib"}, args...)...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	return o.String(), e.String(), err == nil
}

// TestAllowHost: a CRAWLER_ALLOW_HOSTS the user set for another site keeps the
// manual's host that `make run` crawls (it used to replace it, and the crawl of
// the manual was refused as an internal address).
func TestAllowHost(t *testing.T) {
	for _, c := range []struct{ list, want string }{
		{"", "127.0.0.1:8099"},
		{"127.0.0.1:9000", "127.0.0.1:9000,127.0.0.1:8099"},
		{"127.0.0.1:9000,127.0.0.1:8099", "127.0.0.1:9000,127.0.0.1:8099"},
		{"127.0.0.1:9000, 127.0.0.1:8099", "127.0.0.1:9000, 127.0.0.1:8099"},
		{"127.0.0.1:80990", "127.0.0.1:80990,127.0.0.1:8099"},
	} {
		out, errs, ok := runlib(t, `allow_host "$1" 127.0.0.1:8099`, c.list)
		if !ok || out != c.want+"\n" {
			t.Errorf("allow_host %q: %q (%s), want %q", c.list, out, errs, c.want)
		}
	}
}

// TestStartCrawl: the job's id on 202; on 409 (an identical crawl still
// running, e.g. after an interrupted make run) the running job's id from the
// Location header, to be followed; on a refusal the crawler's detail, not only
// curl's "error: 400", and a failure.
func TestStartCrawl(t *testing.T) {
	var mu sync.Mutex // the handler runs on the server's goroutine; curl's exit does not order it for the race detector
	var gotAuth, gotType, gotBody string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b bytes.Buffer
		_, _ = b.ReadFrom(r.Body)
		mu.Lock()
		gotAuth, gotType, gotBody = r.Header.Get("Authorization"), r.Header.Get("Content-Type"), b.String()
		body := gotBody
		mu.Unlock()
		if r.Method != http.MethodPost || r.URL.Path != "/api/v1/crawls" {
			http.NotFound(w, r)
			return
		}
		switch {
		case strings.Contains(body, "busy"):
			w.Header().Set("Location", "/api/v1/crawls/3f2c0b6c-0000-4000-8000-000000000001")
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusConflict)
			_, _ = w.Write([]byte(`{"title":"conflict","status":409,"detail":"an identical crawl is running: job 3f2c0b6c-0000-4000-8000-000000000001"}`))
		case strings.Contains(body, "10.0.0.1"):
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"title":"invalid request","status":400,"detail":"10.0.0.1 is an internal address: private (10.0.0.0/8); internal addresses are refused unless the operator allows them in CRAWLER_ALLOW_HOSTS","field":"url"}`))
		default:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusAccepted)
			_, _ = w.Write([]byte(`{"id":"0b6c3f2c-0000-4000-8000-000000000002","status":"queued"}`))
		}
	}))
	defer srv.Close()

	out, errs, ok := runlib(t, `start_crawl "$1" '{"url":"http://127.0.0.1:8099/"}' -H "Authorization: Bearer k"`, srv.URL)
	if !ok || out != "0b6c3f2c-0000-4000-8000-000000000002\n" {
		t.Errorf("202: %q %q, want the new job's id", out, errs)
	}
	mu.Lock()
	if gotAuth != "Bearer k" || gotType != "application/json" || gotBody != `{"url":"http://127.0.0.1:8099/"}` {
		t.Errorf("request: Authorization %q, Content-Type %q, body %q", gotAuth, gotType, gotBody)
	}
	mu.Unlock()
	out, errs, ok = runlib(t, `start_crawl "$1" '{"url":"http://busy/"}'`, srv.URL)
	if !ok || out != "3f2c0b6c-0000-4000-8000-000000000001\n" || !strings.Contains(errs, "already queued or running: following job 3f2c0b6c") {
		t.Errorf("409: %q %q, want the running job's id and a line saying it is followed", out, errs)
	}
	out, errs, ok = runlib(t, `start_crawl "$1" '{"url":"http://10.0.0.1/"}'`, srv.URL)
	if ok || out != "" || !strings.Contains(errs, "the crawler refused the crawl (HTTP 400): 10.0.0.1 is an internal address") {
		t.Errorf("400: ok %v, %q %q, want a failure naming the crawler's detail", ok, out, errs)
	}
	srv.Close()
	out, errs, ok = runlib(t, `start_crawl "$1" '{"url":"http://127.0.0.1:8099/"}'`, srv.URL)
	if ok || out != "" || !strings.Contains(errs, "cannot be reached") {
		t.Errorf("no crawler: ok %v, %q %q, want a failure saying so", ok, out, errs)
	}
}

// TestRunningLines: the "== running" block's notes start in one column for
// addresses of different lengths (ports of 4 and 5 digits); the kg line's
// note used to stand 4 columns right of the others.
func TestRunningLines(t *testing.T) {
	out, errs, ok := runlib(t, `running_line web http://127.0.0.1:38080/ "(browser)"
running_line search http://127.0.0.1:8080 "(GET /api/v1/search)"
running_line kg http://127.0.0.1:38088 "(GET /api/v1/stats)"
running_line site http://127.0.0.1:8099/index.html`)
	if !ok {
		t.Fatal(errs)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 4 || lines[3] != "  site     http://127.0.0.1:8099/index.html" {
		t.Fatalf("got\n%s\nwant four lines, the last without a note or trailing space", out)
	}
	col := strings.Index(lines[0], "(")
	for _, l := range lines[:3] {
		if !strings.HasPrefix(l, "  ") || strings.Index(l, "(") != col || strings.Index(l, "http") != 11 {
			t.Errorf("got\n%s\nwant the addresses in column 11 and the notes in one column", out)
			break
		}
	}
}
