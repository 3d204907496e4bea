package httpserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Config is the HTTP part of every service's configuration.
type Config struct {
	Addr          string        // listen address, e.g. "127.0.0.1:8080"
	ReadTimeout   time.Duration // whole request read
	WriteTimeout  time.Duration // 0 disables (needed for SSE streams)
	IdleTimeout   time.Duration
	ShutdownGrace time.Duration // time in-flight requests get on SIGTERM
	MaxBodyBytes  int64         // request body limit
	// APIKeys, when non-empty, are the keys requests on API groups must present as
	// "Authorization: Bearer <key>" (KGS_API_KEYS).
	APIKeys []string
	// PublicReads lets GET and HEAD requests on API groups through without a key
	// (search's KGS_PUBLIC_SEARCH); writes still need one.
	PublicReads bool
	// AllowNoAuth lets the service listen on a non-loopback address without API keys
	// (KGS_ALLOW_NO_AUTH); without it Validate and Run refuse. See CheckExposure.
	AllowNoAuth bool
	// Limits rate-limit routes per API key and per client address (429 + Retry-After).
	Limits []RouteLimit
	// TrustedProxies are the peers whose X-Forwarded-For names the client address
	// for rate limiting (KGS_TRUSTED_PROXIES); any other peer is the client itself.
	TrustedProxies []netip.Prefix
	ReadyTimeout   time.Duration // per /readyz probe
}

// Defaults fills zero fields with sane defaults.
func (c Config) Defaults() Config {
	if c.ReadTimeout == 0 {
		c.ReadTimeout = 30 * time.Second
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = 120 * time.Second
	}
	if c.ShutdownGrace == 0 {
		c.ShutdownGrace = 15 * time.Second
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = 1 << 20
	}
	if c.ReadyTimeout == 0 {
		c.ReadyTimeout = 2 * time.Second
	}
	return c
}

// Validate rejects unusable settings, naming the field.
func (c Config) Validate() error {
	if c.Addr == "" {
		return errors.New("addr: must not be empty (host:port)")
	}
	if err := checkAddr(c.Addr); err != nil {
		return fmt.Errorf("addr: %w", err)
	}
	if c.MaxBodyBytes < 0 {
		return errors.New("max_body_bytes: must be positive")
	}
	if c.ReadTimeout < 0 || c.WriteTimeout < 0 || c.ShutdownGrace < 0 {
		return errors.New("timeouts: must not be negative")
	}
	for i, k := range c.APIKeys {
		if len(k) < MinAPIKeyLen {
			return fmt.Errorf("api_keys[%d]: keys must be at least %d characters", i, MinAPIKeyLen)
		}
	}
	for _, l := range c.Limits {
		for _, r := range []Rate{l.PerKey, l.PerAddr} {
			if r.Enabled() && r.Burst < 1 {
				return fmt.Errorf("limits: %s: burst must be at least 1", l.Name)
			}
		}
	}
	return CheckExposure(c.Addr, c.APIKeys, c.AllowNoAuth)
}

// ReadyCheck reports whether one dependency is usable.
type ReadyCheck func(ctx context.Context) error

// Server is a service's HTTP front: a gin engine mounted in an http.Server.
type Server struct {
	cfg     Config
	name    string
	log     *slog.Logger
	engine  *gin.Engine
	reg     *prometheus.Registry
	ready   atomic.Bool
	mu      sync.Mutex
	checks  map[string]ReadyCheck
	info    map[string]bool // checks reported by /readyz that do not decide readiness
	order   []string
	reqs    *prometheus.CounterVec
	latency *prometheus.HistogramVec
	limits  *limiters
	// notFoundPage, when set, answers unknown paths first (a web interface's HTML
	// page for browsers); when it writes nothing, the problem document follows.
	notFoundPage atomic.Pointer[gin.HandlerFunc]
	// readyz answers from one run of the checks for readyzFresh (readyzRun);
	// checksGen counts changes of the checks and of readiness, which end it.
	readyzMu  sync.Mutex
	readyzAt  time.Time
	readyzGen uint64
	readyzOK  bool
	readyzSt  map[string]string
	checksGen atomic.Uint64
	// errorPage, when set, may answer an error the server writes (a rate limit, a
	// body over the limit, ...) instead of the problem document.
	errorPage atomic.Pointer[func(*gin.Context, Problem) bool]
}

// New builds a server for the named service. Routes are added on Engine() or API().
func New(name string, cfg Config, logger *slog.Logger) *Server {
	gin.SetMode(gin.ReleaseMode)
	cfg = cfg.Defaults()
	s := &Server{cfg: cfg, name: name, log: logger, engine: gin.New(), reg: prometheus.NewRegistry(), checks: map[string]ReadyCheck{}, info: map[string]bool{},
		limits: newLimiters(cfg.Limits)}
	s.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	s.reqs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "kgsearch", Subsystem: name, Name: "http_requests_total", Help: "HTTP requests by route, method and status.",
	}, []string{"route", "method", "status"})
	s.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "kgsearch", Subsystem: name, Name: "http_request_duration_seconds", Help: "HTTP request latency by route and method.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	}, []string{"route", "method"})
	s.reg.MustRegister(s.reqs, s.latency)
	s.engine.ContextWithFallback = true
	s.engine.HandleMethodNotAllowed = true
	s.engine.Use(s.requestID, s.recover, s.accessLog, s.checkHost, s.limitBody, s.rateLimit)
	s.engine.NoRoute(func(c *gin.Context) {
		if h := s.notFoundPage.Load(); h != nil {
			if (*h)(c); c.Writer.Written() {
				return
			}
		}
		s.writeError(c, &Error{Status: http.StatusNotFound, Title: "not found", Detail: "no such endpoint: " + c.Request.Method + " " + c.Request.URL.Path})
	})
	s.engine.NoMethod(s.noMethod)
	s.engine.GET("/healthz", func(c *gin.Context) { c.JSON(http.StatusOK, gin.H{"status": "ok", "service": name}) })
	s.engine.GET("/readyz", s.readyz)
	s.engine.GET("/metrics", gin.WrapH(promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{Registry: s.reg})))
	return s
}

// SetNotFoundPage makes h answer requests for unknown paths before the 404
// problem document: h writes a response (an HTML page for a browser) or nothing
// (the problem document is then written as usual).
func (s *Server) SetNotFoundPage(h gin.HandlerFunc) { s.notFoundPage.Store(&h) }

// SetErrorPage makes h answer the errors the server writes (rate limits, bodies over
// the limit, unsupported methods, and handlers' errors through WriteError) before the
// problem document: h writes a response and returns true (an HTML page for a
// browser's navigation), or writes nothing and returns false (the problem document
// follows). Retry-After is set before h runs.
func (s *Server) SetErrorPage(h func(c *gin.Context, p Problem) bool) { s.errorPage.Store(&h) }

// Engine is the gin engine, for routes that need no API key.
func (s *Server) Engine() *gin.Engine { return s.engine }

// API returns a route group under prefix whose requests need an API key when keys are
// configured: every method, or only writes (not GET, HEAD, OPTIONS) when PublicReads.
// Routes on Engine() need no key.
func (s *Server) API(prefix string) *gin.RouterGroup { return s.engine.Group(prefix, s.auth) }

// Config is the server's configuration, defaults filled in.
func (s *Server) Config() Config { return s.cfg }

// checkExposure refuses a non-loopback address without keys (CheckExposure) and
// warns loudly when the operator opted out with KGS_ALLOW_NO_AUTH.
func (s *Server) checkExposure() error {
	if err := CheckExposure(s.cfg.Addr, s.cfg.APIKeys, s.cfg.AllowNoAuth); err != nil {
		return err
	}
	if len(s.cfg.APIKeys) == 0 && !IsLoopback(s.cfg.Addr) {
		s.log.Warn("SERVING WITHOUT API KEYS ON A NON-LOOPBACK ADDRESS: anyone who can reach it may use every endpoint (KGS_ALLOW_NO_AUTH is set)",
			"service", s.name, "addr", s.cfg.Addr)
	}
	return nil
}

// Registry is the service's Prometheus registry, for its own metrics.
func (s *Server) Registry() *prometheus.Registry { return s.reg }

// Logger is the server's logger.
func (s *Server) Logger() *slog.Logger { return s.log }

// AddReadyCheck registers a dependency probe run by /readyz.
func (s *Server) AddReadyCheck(name string, check ReadyCheck) {
	defer s.checksGen.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.checks[name]; !ok {
		s.order = append(s.order, name)
	}
	s.checks[name] = check
}

// AddInfoCheck registers a dependency probe that /readyz reports but that does not
// make the service unready: one the service degrades gracefully without (search
// answers without kg), so that its outage does not take every replica out of a load
// balancer.
func (s *Server) AddInfoCheck(name string, check ReadyCheck) {
	s.AddReadyCheck(name, check)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.info[name] = true
}

// SetReady marks whether start-up (migrations, index catch-up) is finished.
func (s *Server) SetReady(v bool) {
	s.ready.Store(v)
	s.checksGen.Add(1)
}

// ReadyStatus runs every check and returns the per-dependency result.
func (s *Server) ReadyStatus(ctx context.Context) (bool, map[string]string) {
	s.mu.Lock()
	names := append([]string(nil), s.order...)
	checks := make([]ReadyCheck, len(names))
	infoOnly := make([]bool, len(names))
	for i, n := range names {
		checks[i] = s.checks[n]
		infoOnly[i] = s.info[n]
	}
	s.mu.Unlock()
	out := make(map[string]string, len(names)+1)
	ok := s.ready.Load()
	if ok {
		out["startup"] = "ok"
	} else {
		out["startup"] = "starting"
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i := range names {
		wg.Add(1)
		go func(name string, check ReadyCheck, infoOnly bool) {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, s.cfg.ReadyTimeout)
			defer cancel()
			err := check(cctx)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil && infoOnly:
				out[name] = "degraded: " + err.Error()
			case err != nil:
				out[name] = err.Error()
				ok = false
			default:
				out[name] = "ok"
			}
		}(names[i], checks[i], infoOnly[i])
	}
	wg.Wait()
	return ok, out
}

// readyzFresh is how long /readyz answers from one run of the checks. /readyz
// is open to anyone, and each run pings MariaDB and asks kg (which pings Neo4j):
// without it, a flood of /readyz became a flood of internal calls.
const readyzFresh = time.Second

// readyzRun returns the checks' result, run at most once per readyzFresh:
// requests that come while a run is in progress wait for it. The run is not
// cancelled with the request that started it (each check has ReadyTimeout).
func (s *Server) readyzRun(ctx context.Context) (bool, map[string]string) {
	s.readyzMu.Lock()
	defer s.readyzMu.Unlock()
	gen := s.checksGen.Load()
	if s.readyzSt == nil || gen != s.readyzGen || time.Since(s.readyzAt) >= readyzFresh {
		s.readyzOK, s.readyzSt = s.ReadyStatus(context.WithoutCancel(ctx))
		s.readyzAt, s.readyzGen = time.Now(), gen
	}
	return s.readyzOK, maps.Clone(s.readyzSt)
}

func (s *Server) readyz(c *gin.Context) {
	ok, st := s.readyzRun(c.Request.Context())
	if len(s.cfg.APIKeys) > 0 {
		if _, valid := s.keyIndex(c.Request); !valid {
			st = withoutDetails(st)
		}
	}
	code := http.StatusOK
	status := "ready"
	if !ok {
		code = http.StatusServiceUnavailable
		status = "not ready"
	}
	c.JSON(code, gin.H{"status": status, "service": s.name, "checks": st})
}

// withoutDetails is what /readyz tells a client without a key when the service has
// keys (it is reachable from the network, and /readyz is open to anyone): each
// check's state, not its error. The errors of failed checks carry internal
// addresses and names ("dial tcp 172.18.0.3:3306", "Access denied for user
// 'kgsearch'@'10.0.0.7'", kg's URL), which are nobody's business outside; a
// request with a key, as kgs status sends, still gets them, and the service's
// log has them.
func withoutDetails(checks map[string]string) map[string]string {
	out := make(map[string]string, len(checks))
	for name, v := range checks {
		switch {
		case v == "ok" || v == "starting":
			out[name] = v
		case strings.HasPrefix(v, "degraded"):
			out[name] = "degraded"
		default:
			out[name] = "unavailable"
		}
	}
	return out
}

// Handle adapts a handler that returns an error.
func (s *Server) Handle(fn func(c *gin.Context) error) gin.HandlerFunc {
	return func(c *gin.Context) {
		if err := fn(c); err != nil {
			s.writeError(c, err)
		}
	}
}

// StatusClientClosed is the status recorded (log line and metrics) for a
// request whose client went away before the answer: nginx's 499. Nobody reads
// it, and it is not the server's failure, so it is neither a 5xx nor an error
// log line.
const StatusClientClosed = 499

func (s *Server) writeError(c *gin.Context, err error) {
	rid := RequestID(c)
	if errors.Is(err, context.Canceled) && c.Request.Context().Err() != nil {
		s.log.Debug("request abandoned by the client", "request_id", rid, "route", c.FullPath(), "err", err)
		c.AbortWithStatus(StatusClientClosed)
		return
	}
	e := asError(err)
	if e.Status >= 500 {
		s.log.Error("request failed", "request_id", rid, "route", c.FullPath(), "status", e.Status, "err", err)
	} else if e.Err != nil {
		s.log.Debug("request rejected", "request_id", rid, "route", c.FullPath(), "status", e.Status, "err", err)
	}
	if e.Retry > 0 {
		c.Header("Retry-After", strconv.Itoa(e.Retry))
	}
	p := Problem{
		Type: "about:blank", Title: e.Title, Status: e.Status, Detail: e.Detail,
		Instance: c.Request.URL.Path, Field: e.Field, RequestID: rid,
	}
	if p.Title == "" {
		p.Title = http.StatusText(e.Status)
	}
	if h := s.errorPage.Load(); h != nil && (*h)(c, p) {
		c.Abort()
		return
	}
	body, _ := json.Marshal(p)
	c.Data(e.Status, "application/problem+json", body)
	c.Abort()
}

// WriteError lets streaming handlers report an error through the same mapping.
func (s *Server) WriteError(c *gin.Context, err error) { s.writeError(c, err) }

const ridKey = "request_id"

// RequestID returns the request's ID (from X-Request-ID or generated).
func RequestID(c *gin.Context) string { return c.GetString(ridKey) }

func (s *Server) requestID(c *gin.Context) {
	rid := c.GetHeader("X-Request-ID")
	if rid == "" || len(rid) > 128 || strings.ContainsAny(rid, "\r\n") {
		var b [8]byte
		_, _ = rand.Read(b[:])
		rid = hex.EncodeToString(b[:])
	}
	c.Set(ridKey, rid)
	c.Header("X-Request-ID", rid)
	// Every answer is of the type it says: JSON, TOON text and problem documents
	// echo what clients sent (a query, a URL), which a browser must never sniff
	// into HTML.
	c.Header("X-Content-Type-Options", "nosniff")
	c.Next()
}

func (s *Server) recover(c *gin.Context) {
	defer func() {
		if r := recover(); r != nil {
			if r == http.ErrAbortHandler { //nolint:errorlint // a recovered panic value, compared as net/http does
				panic(r)
			}
			s.writeError(c, Internal(fmt.Errorf("panic: %v", r)))
		}
	}()
	c.Next()
}

func (s *Server) accessLog(c *gin.Context) {
	start := time.Now()
	c.Next()
	route := c.FullPath()
	if route == "" {
		route = "unmatched"
	}
	d := time.Since(start)
	status := strconv.Itoa(c.Writer.Status())
	method := methodLabel(requestMethod(c.Request))
	s.reqs.WithLabelValues(route, method, status).Inc()
	s.latency.WithLabelValues(route, method).Observe(d.Seconds())
	if route == "/healthz" || route == "/readyz" || route == "/metrics" {
		return
	}
	s.log.Info("request", "request_id", RequestID(c), "method", method, "route", route,
		"status", c.Writer.Status(), "duration_ms", float64(d.Microseconds())/1000, "bytes", c.Writer.Size())
}

// checkHost refuses DNS rebinding on a service that serves without keys: a web
// page the developer visits makes its own host name resolve to 127.0.0.1 and then
// calls the service from the browser, as its own origin, with no key to need
// (start crawls, delete documents, read the corpus). Such requests come from a
// loopback peer with a Host that names no loopback address; a request from
// this machine to the service names it as 127.0.0.1, [::1] or localhost. A
// service with keys needs none of this (the page has no key), and neither do
// in-process calls (no peer) nor peers on other machines (the service then
// listens beyond loopback, which needs keys or KGS_ALLOW_NO_AUTH).
func (s *Server) checkHost(c *gin.Context) {
	r := c.Request
	if len(s.cfg.APIKeys) > 0 || r.RemoteAddr == "" || loopbackHost(r.Host) {
		c.Next()
		return
	}
	peer, _, err := net.SplitHostPort(r.RemoteAddr)
	if ip, perr := netip.ParseAddr(peer); err != nil || perr != nil || !ip.Unmap().IsLoopback() {
		c.Next()
		return
	}
	s.writeError(c, &Error{Status: http.StatusMisdirectedRequest, Title: "misdirected request", Field: "Host",
		Detail: fmt.Sprintf("this service has no API keys and answers only requests addressed to 127.0.0.1, [::1] or localhost, not to %q "+
			"(a web page rebinding its name to this machine must not reach it); use http://127.0.0.1:PORT, or set KGS_API_KEYS", r.Host)})
}

// loopbackHost reports whether a Host header names this machine: localhost, a
// name under .localhost, a loopback address, or nothing (HTTP/1.0).
func loopbackHost(host string) bool {
	if host == "" {
		return true
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

func (s *Server) limitBody(c *gin.Context) {
	if c.Request.Body != nil && s.cfg.MaxBodyBytes > 0 {
		c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, s.cfg.MaxBodyBytes)
	}
	c.Next()
}

func (s *Server) auth(c *gin.Context) {
	if len(s.cfg.APIKeys) == 0 {
		c.Next()
		return
	}
	if s.cfg.PublicReads {
		switch c.Request.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			c.Next()
			return
		}
	}
	if _, ok := s.keyIndex(c.Request); ok {
		c.Next()
		return
	}
	c.Header("WWW-Authenticate", `Bearer realm="kgsearch"`)
	s.writeError(c, &Error{Status: http.StatusUnauthorized, Title: "unauthorized", Detail: "this endpoint needs the header Authorization: Bearer <api key> (a key from the server's KGS_API_KEYS)"})
}

// Run serves until ctx is cancelled, then marks the service not ready and shuts down
// gracefully within ShutdownGrace.
func (s *Server) Run(ctx context.Context) error {
	if err := s.checkExposure(); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", s.cfg.Addr, err)
	}
	return s.Serve(ctx, ln)
}

// Serve is Run on an existing listener (tests use a port-0 listener).
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadTimeout:       s.cfg.ReadTimeout,
		ReadHeaderTimeout: 10 * time.Second,
		WriteTimeout:      s.cfg.WriteTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	s.log.Info("listening", "service", s.name, "addr", ln.Addr().String())
	select {
	case err := <-errc:
		return fmt.Errorf("serve %s: %w", s.name, err)
	case <-ctx.Done():
	}
	s.SetReady(false)
	s.log.Info("shutting down", "service", s.name, "grace", s.cfg.ShutdownGrace.String())
	sctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown %s: %w", s.name, err)
	}
	return nil
}
