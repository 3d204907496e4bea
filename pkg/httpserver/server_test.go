package httpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
)

func newTestServer(t *testing.T, cfg Config) *Server {
	t.Helper()
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	s := New("test", cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	api := s.API("/api/v1")
	api.POST("/echo", s.Handle(func(c *gin.Context) error {
		b, err := io.ReadAll(c.Request.Body)
		if err != nil {
			return err
		}
		c.Data(http.StatusOK, "text/plain", b)
		return nil
	}))
	api.GET("/bad", s.Handle(func(c *gin.Context) error { return BadRequest("k", "k must be between 1 and 100") }))
	api.GET("/boom", s.Handle(func(c *gin.Context) error { return errors.New("secret internal detail") }))
	api.GET("/panic", s.Handle(func(c *gin.Context) error { panic("kaboom") }))
	return s
}

func do(t *testing.T, s *Server, method, path, body string, hdr map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	s.Engine().ServeHTTP(rec, req)
	return rec
}

func problem(t *testing.T, rec *httptest.ResponseRecorder) Problem {
	t.Helper()
	if ct := rec.Header().Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("content type: got %q, want application/problem+json", ct)
	}
	var p Problem
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
		t.Fatalf("decode problem: %v (body %s)", err, rec.Body)
	}
	return p
}

func TestErrorsBecomeProblems(t *testing.T) {
	s := newTestServer(t, Config{})
	tests := []struct {
		path       string
		wantStatus int
		wantField  string
		notInBody  string
	}{
		{"/api/v1/bad", 400, "k", ""},
		{"/api/v1/boom", 500, "", "secret internal detail"},
		{"/api/v1/panic", 500, "", "kaboom"},
		{"/api/v1/nope", 404, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			rec := do(t, s, "GET", tt.path, "", nil)
			if rec.Code != tt.wantStatus {
				t.Fatalf("status: got %d, want %d", rec.Code, tt.wantStatus)
			}
			p := problem(t, rec)
			if p.Field != tt.wantField {
				t.Errorf("field: got %q, want %q", p.Field, tt.wantField)
			}
			if p.RequestID == "" || p.RequestID != rec.Header().Get("X-Request-ID") {
				t.Errorf("request id: body %q, header %q", p.RequestID, rec.Header().Get("X-Request-ID"))
			}
			if tt.notInBody != "" && strings.Contains(rec.Body.String(), tt.notInBody) {
				t.Errorf("internal text %q leaked to the client: %s", tt.notInBody, rec.Body)
			}
		})
	}
}

func TestBodyLimit(t *testing.T) {
	s := newTestServer(t, Config{MaxBodyBytes: 10})
	if rec := do(t, s, "POST", "/api/v1/echo", "short", nil); rec.Code != 200 {
		t.Fatalf("small body: got %d, want 200", rec.Code)
	}
	rec := do(t, s, "POST", "/api/v1/echo", strings.Repeat("x", 100), nil)
	if rec.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("large body: got %d, want 413", rec.Code)
	}
	if p := problem(t, rec); !strings.Contains(p.Detail, "10 bytes") {
		t.Errorf("detail %q does not state the limit", p.Detail)
	}
}

func TestAPIKeys(t *testing.T) {
	key := "0123456789abcdef-key"
	tests := []struct {
		name, method, path, auth string
		publicReads              bool
		want                     int
	}{
		{"read without key", "GET", "/api/v1/bad", "", false, 401},
		{"read with key", "GET", "/api/v1/bad", "Bearer " + key, false, 400},
		{"public read without key", "GET", "/api/v1/bad", "", true, 400},
		{"write without key", "POST", "/api/v1/echo", "", false, 401},
		{"public reads, write without key", "POST", "/api/v1/echo", "", true, 401},
		{"write with wrong key", "POST", "/api/v1/echo", "Bearer nope", false, 401},
		{"write with key as basic", "POST", "/api/v1/echo", "Basic " + key, false, 401},
		{"write with key", "POST", "/api/v1/echo", "Bearer " + key, false, 200},
		// RFC 9110 11.1: the scheme is case-insensitive; 1*SP separates it from the token.
		{"write with key, scheme in lower case", "POST", "/api/v1/echo", "bearer " + key, false, 200},
		{"write with key, scheme in capitals", "POST", "/api/v1/echo", "BEARER " + key, false, 200},
		{"write with key after two spaces", "POST", "/api/v1/echo", "Bearer  " + key, false, 200},
		{"write with the scheme only", "POST", "/api/v1/echo", "Bearer", false, 401},
		{"write with an empty token", "POST", "/api/v1/echo", "Bearer   ", false, 401},
		{"write with the key glued to the scheme", "POST", "/api/v1/echo", "Bearer" + key, false, 401},
		{"public reads, write with key", "POST", "/api/v1/echo", "Bearer " + key, true, 200},
		{"health needs no key", "GET", "/healthz", "", false, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestServer(t, Config{APIKeys: []string{key}, PublicReads: tt.publicReads})
			hdr := map[string]string{}
			if tt.auth != "" {
				hdr["Authorization"] = tt.auth
			}
			rec := do(t, s, tt.method, tt.path, "x", hdr)
			if rec.Code != tt.want {
				t.Fatalf("got %d, want %d", rec.Code, tt.want)
			}
			if rec.Code == 401 && !strings.Contains(problem(t, rec).Detail, "KGS_API_KEYS") {
				t.Errorf("401 detail does not name KGS_API_KEYS: %s", rec.Body)
			}
		})
	}
	// Without keys (a loopback service) everything is open.
	s := newTestServer(t, Config{})
	if rec := do(t, s, "POST", "/api/v1/echo", "x", nil); rec.Code != 200 {
		t.Errorf("no keys configured: write got %d, want 200", rec.Code)
	}
}

func TestReadyz(t *testing.T) {
	s := newTestServer(t, Config{})
	dbErr := errors.New("dial tcp 127.0.0.1:13306: connection refused")
	s.AddReadyCheck("mariadb", func(ctx context.Context) error { return dbErr })
	s.SetReady(true)
	rec := do(t, s, "GET", "/readyz", "", nil)
	if rec.Code != 503 {
		t.Fatalf("with failing dependency: got %d, want 503", rec.Code)
	}
	if !strings.Contains(rec.Body.String(), "connection refused") {
		t.Errorf("readyz body does not give the reason: %s", rec.Body)
	}
	dbErr = nil
	s.AddReadyCheck("mariadb", func(ctx context.Context) error { return nil })
	if rec := do(t, s, "GET", "/readyz", "", nil); rec.Code != 200 {
		t.Fatalf("all ok: got %d, want 200 (%s)", rec.Code, rec.Body)
	}
	s.AddInfoCheck("kg", func(ctx context.Context) error { return errors.New("kg unreachable") })
	rec = do(t, s, "GET", "/readyz", "", nil)
	if rec.Code != 200 {
		t.Fatalf("failing info-only check: got %d, want 200 (%s)", rec.Code, rec.Body)
	}
	if !strings.Contains(rec.Body.String(), "degraded: kg unreachable") {
		t.Errorf("readyz does not report the info-only check: %s", rec.Body)
	}
	s.SetReady(false)
	if rec := do(t, s, "GET", "/readyz", "", nil); rec.Code != 503 {
		t.Fatalf("not started: got %d, want 503", rec.Code)
	}
	if rec := do(t, s, "GET", "/healthz", "", nil); rec.Code != 200 {
		t.Fatalf("healthz: got %d, want 200", rec.Code)
	}
}

func TestMetricsCountRequests(t *testing.T) {
	s := newTestServer(t, Config{})
	do(t, s, "GET", "/api/v1/bad", "", nil)
	rec := do(t, s, "GET", "/metrics", "", nil)
	want := `kgsearch_test_http_requests_total{method="GET",route="/api/v1/bad",status="400"} 1`
	if !strings.Contains(rec.Body.String(), want) {
		t.Errorf("metrics missing %q", want)
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name  string
		cfg   Config
		field string
	}{
		{"ok", Config{Addr: "127.0.0.1:8080"}, ""},
		{"empty addr", Config{}, "addr"},
		{"no port", Config{Addr: "localhost"}, "addr"},
		{"bad port", Config{Addr: ":99999"}, "addr"},
		{"short key", Config{Addr: ":1", APIKeys: []string{"short"}}, "api_keys[0]"},
		{"open on every interface", Config{Addr: ":8080"}, "refusing to start"},
		{"open on 0.0.0.0", Config{Addr: "0.0.0.0:8080"}, "refusing to start"},
		{"keys on 0.0.0.0", Config{Addr: "0.0.0.0:8080", APIKeys: []string{"0123456789abcdef"}}, ""},
		{"opt-out on 0.0.0.0", Config{Addr: "0.0.0.0:8080", AllowNoAuth: true}, ""},
		{"zero burst", Config{Addr: "127.0.0.1:1", Limits: []RouteLimit{{Name: "x", PerAddr: Rate{PerSecond: 1}}}}, "limits"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.field == "" {
				if err != nil {
					t.Fatalf("got %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tt.field) {
				t.Fatalf("got %v, want an error naming %s", err, tt.field)
			}
		})
	}
}

func TestGracefulShutdown(t *testing.T) {
	s := newTestServer(t, Config{ShutdownGrace: 5 * time.Second})
	release := make(chan struct{})
	s.Engine().GET("/slow", func(c *gin.Context) { <-release; c.String(200, "done") })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	res := make(chan string, 1)
	go func() {
		resp, err := http.Get("http://" + ln.Addr().String() + "/slow")
		if err != nil {
			res <- "error: " + err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		res <- string(b)
	}()
	time.Sleep(100 * time.Millisecond) // let the request arrive before shutdown starts
	cancel()
	time.Sleep(50 * time.Millisecond)
	close(release)
	if got := <-res; got != "done" {
		t.Errorf("in-flight request: got %q, want done", got)
	}
	if err := <-done; err != nil {
		t.Errorf("serve: %v", err)
	}
}

// TestReadyzDetailsNeedAKey: with API keys (a service reachable from the
// network), /readyz still answers everyone its status and each check's state,
// but the error of a failed check, which names internal addresses and users,
// only to a request with a key.
func TestReadyzDetailsNeedAKey(t *testing.T) {
	const key = "0123456789abcdef-ready"
	s := newTestServer(t, Config{APIKeys: []string{key}})
	s.AddReadyCheck("mariadb", func(context.Context) error {
		return errors.New("Error 1045 (28000): Access denied for user 'kgsearch'@'172.18.0.4'")
	})
	s.AddInfoCheck("kg", func(context.Context) error {
		return errors.New(`Get "http://kg:8088/readyz": dial tcp 172.18.0.3:8088: connection refused`)
	})
	s.AddReadyCheck("index", func(context.Context) error { return nil })
	s.SetReady(true)
	for _, tc := range []struct {
		name string
		hdr  map[string]string
		want map[string]string
	}{
		{"no key", nil, map[string]string{"startup": "ok", "mariadb": "unavailable", "kg": "degraded", "index": "ok"}},
		{"a wrong key", map[string]string{"Authorization": "Bearer wrong-wrong-wrong-wrong"},
			map[string]string{"startup": "ok", "mariadb": "unavailable", "kg": "degraded", "index": "ok"}},
		{"the key", map[string]string{"Authorization": "Bearer " + key}, map[string]string{"startup": "ok",
			"mariadb": "Error 1045 (28000): Access denied for user 'kgsearch'@'172.18.0.4'",
			"kg":      `degraded: Get "http://kg:8088/readyz": dial tcp 172.18.0.3:8088: connection refused`, "index": "ok"}},
	} {
		rec := do(t, s, "GET", "/readyz", "", tc.hdr)
		var got struct {
			Status string            `json:"status"`
			Checks map[string]string `json:"checks"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
			t.Fatalf("%s: %v in %s", tc.name, err, rec.Body)
		}
		if rec.Code != 503 || got.Status != "not ready" || !maps.Equal(got.Checks, tc.want) {
			t.Errorf("%s: got %d %s %v, want 503 not ready %v", tc.name, rec.Code, got.Status, got.Checks, tc.want)
		}
	}
}

// TestNoSniff: every answer, success or problem document, tells browsers not to
// guess its type (answers echo what clients sent).
func TestNoSniff(t *testing.T) {
	s := newTestServer(t, Config{})
	for _, path := range []string{"/healthz", "/api/v1/nowhere?q=<script>"} {
		if got := do(t, s, "GET", path, "", nil).Header().Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("GET %s: X-Content-Type-Options %q, want nosniff", path, got)
		}
	}
}

// TestClientGoneIsNotAServerError: a handler that stops because its client went
// away (the request's context cancelled) is recorded as 499 with no error log
// line, not as a 500 "request failed" (a client that gave up on a slow
// database left 500s in the crawler's log and metrics).
func TestClientGoneIsNotAServerError(t *testing.T) {
	var logs bytes.Buffer
	s := New("test", Config{Addr: "127.0.0.1:0"}, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo})))
	started := make(chan struct{})
	s.API("/api/v1").GET("/slow", s.Handle(func(c *gin.Context) error {
		close(started)
		<-c.Request.Context().Done()
		return fmt.Errorf("list documents: %w", c.Request.Context().Err())
	}))
	ctx, cancel := context.WithCancel(context.Background())
	req := httptest.NewRequest("GET", "/api/v1/slow", nil).WithContext(ctx)
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Engine().ServeHTTP(rec, req)
	}()
	<-started
	cancel()
	<-done
	if rec.Code != StatusClientClosed {
		t.Errorf("status: got %d, want %d", rec.Code, StatusClientClosed)
	}
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("a client that went away was logged as an error:\n%s", logs.String())
	}
	m := do(t, s, "GET", "/metrics", "", nil).Body.String()
	if !strings.Contains(m, `route="/api/v1/slow",status="499"`) || strings.Contains(m, `route="/api/v1/slow",status="500"`) {
		t.Errorf("metrics: want the request counted as 499, not 500:\n%s", m)
	}
}

// TestDNSRebindingRefused: a service without keys answers a loopback peer only
// when the Host names this machine; a browser page that rebound its own name
// to 127.0.0.1 is refused with 421 naming Host. With keys, in process or from
// another machine, the Host is not checked.
func TestDNSRebindingRefused(t *testing.T) {
	req := func(s *Server, host, peer string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("POST", "/api/v1/echo", strings.NewReader("x"))
		r.Host, r.RemoteAddr = host, peer
		rec := httptest.NewRecorder()
		s.Engine().ServeHTTP(rec, r)
		return rec
	}
	open := newTestServer(t, Config{})
	for _, tc := range []struct {
		host, peer string
		want       int
	}{
		{"127.0.0.1:8080", "127.0.0.1:5000", 200},
		{"localhost:8080", "127.0.0.1:5000", 200},
		{"LOCALHOST.:8080", "127.0.0.1:5000", 200},
		{"app.localhost:8080", "127.0.0.1:5000", 200},
		{"[::1]:8080", "[::1]:5000", 200},
		{"127.0.0.2", "127.0.0.1:5000", 200},
		{"", "127.0.0.1:5000", 200},
		{"evil.example:8080", "127.0.0.1:5000", http.StatusMisdirectedRequest},
		{"evil.example", "[::1]:5000", http.StatusMisdirectedRequest},
		{"localhost.evil.example:8080", "[::ffff:127.0.0.1]:5000", http.StatusMisdirectedRequest},
		{"evil.example:8080", "192.0.2.7:5000", 200}, // another machine: not a rebinding browser here
		{"evil.example:8080", "", 200},               // in process
	} {
		rec := req(open, tc.host, tc.peer)
		if rec.Code != tc.want {
			t.Errorf("Host %q from %q: got %d, want %d (%s)", tc.host, tc.peer, rec.Code, tc.want, rec.Body)
			continue
		}
		if rec.Code == http.StatusMisdirectedRequest {
			if p := problem(t, rec); p.Field != "Host" || !strings.Contains(p.Detail, "KGS_API_KEYS") {
				t.Errorf("Host %q: problem %+v, want field Host and the way out", tc.host, p)
			}
		}
	}
	keyed := newTestServer(t, Config{APIKeys: []string{"0123456789abcdef-host"}})
	if rec := req(keyed, "evil.example:8080", "127.0.0.1:5000"); rec.Code != http.StatusUnauthorized {
		t.Errorf("a service with keys: got %d, want 401 (the key decides, not the Host)", rec.Code)
	}
}

// TestReadyzRunsChecksOncePerSecond: /readyz is open, and each run of its
// checks calls the dependencies (a MariaDB ping, kg's own /readyz): concurrent
// and repeated requests within a second share one run, and a change of the
// checks or of readiness is answered at once.
func TestReadyzRunsChecksOncePerSecond(t *testing.T) {
	s := newTestServer(t, Config{})
	var runs atomic.Int64
	s.AddReadyCheck("mariadb", func(context.Context) error {
		runs.Add(1)
		time.Sleep(20 * time.Millisecond)
		return nil
	})
	s.SetReady(true)
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if rec := do(t, s, "GET", "/readyz", "", nil); rec.Code != 200 {
				t.Errorf("readyz: got %d", rec.Code)
			}
		}()
	}
	wg.Wait()
	if n := runs.Load(); n > 2 {
		t.Errorf("50 concurrent /readyz ran the checks %d times, want 1 (2 if a second passed)", n)
	}
	s.SetReady(false)
	if rec := do(t, s, "GET", "/readyz", "", nil); rec.Code != 503 {
		t.Errorf("after SetReady(false): got %d, want 503 at once", rec.Code)
	}
}
