package fetch

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/kgsearch/kgsearch/services/crawler/internal/netguard"
)

// Skip reasons reported by *SkipError.
const (
	ReasonContentType = "content_type"
	ReasonTooLarge    = "too_large"
	ReasonRobots      = "robots"
)

// SkipError says a page was deliberately not downloaded or not used.
type SkipError struct {
	Reason    string // one of the Reason constants
	Detail    string
	MediaType string // content_type: the media type refused
}

func (e *SkipError) Error() string { return "skipped (" + e.Reason + "): " + e.Detail }

// Config configures a Fetcher. Zero fields take the defaults given.
type Config struct {
	UserAgent string // required
	// Guard is the SSRF guard every request dials through; the engine checks
	// URLs with the same guard before it queues them. Required unless
	// Transport is set. Its ResponseHeaderTimeout bounds a response's headers.
	Guard         *netguard.Guard
	Timeout       time.Duration // one request; default 30s
	MaxBodyBytes  int64         // default 10 MiB
	HostParallel  int           // requests in flight per host; default 2
	Delay         time.Duration // minimum gap between request starts per host
	MaxCrawlDelay time.Duration // cap on robots.txt Crawl-delay; default 30s
	Retries       int           // retries after 429, 5xx, timeouts; negative: none; default 0
	RetryBackoff  time.Duration // first retry delay, doubled each time; default 500ms
	RobotsTTL     time.Duration // robots.txt cache lifetime; default 1h
	// Transport replaces the netguard transport (tests of this package only).
	Transport http.RoundTripper
}

// Request is one page to fetch.
type Request struct {
	URL string
	// ETag and LastModified, when set, make the request conditional (recrawl).
	ETag         string
	LastModified string
	// Accept decides from the media type whether the body is wanted; nil
	// accepts HTML and plain text (AcceptPage).
	Accept func(mediaType string) bool
	// IgnoreRobots skips the robots.txt check (respect_robots=false).
	IgnoreRobots bool
}

// Response is the outcome of a fetch that got an HTTP answer.
type Response struct {
	URL         string // the URL fetched
	Status      int
	Header      http.Header
	ContentType string // as sent, with the charset rewritten to utf-8 when colly converted the body
	Body        []byte
	Location    string // absolute redirect target for 3xx answers, else ""
	Attempts    int
	Duration    time.Duration // all attempts, including backoff and politeness waits
}

// NotModified reports a 304 answer to a conditional request.
func (r *Response) NotModified() bool { return r.Status == http.StatusNotModified }

// Redirect reports a 3xx answer with a Location.
func (r *Response) Redirect() bool { return r.Status >= 300 && r.Status < 400 && r.Location != "" }

// Fetcher fetches pages. It is safe for concurrent use.
type Fetcher struct {
	cfg    Config
	base   *colly.Collector
	client *http.Client // robots.txt
	hosts  *hostLimiter
	robots *robotsCache
	sleep  func(ctx context.Context, d time.Duration) error
}

// New builds a Fetcher.
func New(cfg Config) (*Fetcher, error) {
	if strings.TrimSpace(cfg.UserAgent) == "" {
		return nil, errors.New("fetch: UserAgent is empty")
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = 10 << 20
	}
	if cfg.HostParallel == 0 {
		cfg.HostParallel = 2
	}
	if cfg.MaxCrawlDelay == 0 {
		cfg.MaxCrawlDelay = 30 * time.Second
	}
	if cfg.RetryBackoff == 0 {
		cfg.RetryBackoff = 500 * time.Millisecond
	}
	if cfg.RobotsTTL == 0 {
		cfg.RobotsTTL = time.Hour
	}
	transport := cfg.Transport
	if transport == nil {
		if cfg.Guard == nil {
			return nil, errors.New("fetch: Config.Guard is required: every request dials through the SSRF guard")
		}
		transport = cfg.Guard.Transport()
	}
	transport = gunzipTransport{next: transport}
	c := colly.NewCollector(
		colly.UserAgent(cfg.UserAgent),
		colly.IgnoreRobotsTxt(),
		colly.AllowURLRevisit(),
		colly.ParseHTTPErrorResponse(),
		colly.MaxBodySize(int(cfg.MaxBodyBytes)+1),
	)
	c.WithTransport(transport)
	c.SetRequestTimeout(cfg.Timeout)
	c.DisableCookies()
	c.SetRedirectHandler(func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse })
	f := &Fetcher{
		cfg:    cfg,
		base:   c,
		client: &http.Client{Transport: transport, Timeout: cfg.Timeout, CheckRedirect: limitRedirects},
		hosts:  newHostLimiter(cfg.HostParallel, cfg.Delay, cfg.RobotsTTL),
		sleep:  sleepCtx,
	}
	f.robots = newRobotsCache(f, cfg.RobotsTTL)
	return f, nil
}

func limitRedirects(_ *http.Request, via []*http.Request) error {
	if len(via) >= 5 {
		return http.ErrUseLastResponse
	}
	return nil
}

// AcceptPage accepts the media types the crawler indexes: HTML and plain text.
func AcceptPage(mediaType string) bool {
	switch mediaType {
	case "text/html", "application/xhtml+xml", "text/plain", "text/markdown", "text/x-markdown":
		return true
	}
	return false
}

// MediaType returns the lower-case media type of a Content-Type value.
func MediaType(contentType string) string {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt = strings.TrimSpace(strings.Split(contentType, ";")[0])
	}
	return strings.ToLower(mt)
}

// AgentToken is the robots.txt product token of a user agent: its first word
// without a version ("kgsearch-crawler/1.0 (...)" → "kgsearch-crawler").
func AgentToken(userAgent string) string {
	tok := strings.Fields(userAgent)
	if len(tok) == 0 {
		return "*"
	}
	name, _, _ := strings.Cut(tok[0], "/")
	return name
}

// Allowed checks u against the host's robots.txt (fetched and cached on first
// use). It returns a *SkipError with ReasonRobots when disallowed.
func (f *Fetcher) Allowed(ctx context.Context, u *url.URL) error {
	r, err := f.robots.get(ctx, u)
	if err != nil {
		return err
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	if u.RawQuery != "" {
		path += "?" + u.RawQuery
	}
	if r.refused != "" {
		return &SkipError{Reason: ReasonRobots, Detail: r.refused}
	}
	if r.group != nil && !r.group.Test(path) {
		return &SkipError{Reason: ReasonRobots, Detail: "robots.txt disallows " + u.String()}
	}
	return nil
}

// RobotsSitemaps returns the Sitemap lines of the host's robots.txt.
func (f *Fetcher) RobotsSitemaps(ctx context.Context, u *url.URL) ([]string, error) {
	r, err := f.robots.get(ctx, u)
	if err != nil {
		return nil, err
	}
	return r.sitemaps, nil
}

// Fetch downloads req.URL with politeness, robots.txt and retries. A non-nil
// Response can carry any status; errors are network failures (after retries),
// *SkipError, netguard refusals (errors.Is(err, netguard.ErrBlocked)) or ctx.Err().
func (f *Fetcher) Fetch(ctx context.Context, req Request) (*Response, error) {
	start := time.Now()
	u, err := url.Parse(req.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("fetch %q: not an absolute http(s) URL", req.URL)
	}
	if !req.IgnoreRobots {
		if err := f.Allowed(ctx, u); err != nil {
			return nil, err
		}
	}
	accept := req.Accept
	if accept == nil {
		accept = AcceptPage
	}
	var resp *Response
	attempt := 0
	for {
		attempt++
		var retryAfter time.Duration
		resp, retryAfter, err = f.once(ctx, u, req, accept)
		if !f.retryable(resp, err) || attempt > f.cfg.Retries || ctx.Err() != nil {
			break
		}
		d := f.cfg.RetryBackoff << (attempt - 1)
		d += time.Duration(rand.Int64N(int64(d)/4 + 1)) //nolint:gosec // G404: backoff jitter, not a secret
		if retryAfter > 0 {
			d = max(d, min(retryAfter, 30*time.Second))
		}
		if err := f.sleep(ctx, d); err != nil {
			return nil, err
		}
	}
	if resp != nil {
		resp.Attempts = attempt
		resp.Duration = time.Since(start)
	}
	if err != nil {
		return resp, fmt.Errorf("fetch %s (%d attempts): %w", u.Redacted(), attempt, err)
	}
	return resp, nil
}

func (f *Fetcher) retryable(resp *Response, err error) bool {
	if err != nil {
		var se *SkipError
		if errors.As(err, &se) || errors.Is(err, netguard.ErrBlocked) || errors.Is(err, context.Canceled) {
			return false
		}
		return IsTimeout(err)
	}
	return resp.Status == http.StatusTooManyRequests || resp.Status >= 500
}

// IsTimeout reports whether err is a request timeout.
func IsTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// once is one attempt: host politeness slot, then colly.
func (f *Fetcher) once(ctx context.Context, u *url.URL, req Request, accept func(string) bool) (*Response, time.Duration, error) {
	release, err := f.hosts.acquire(ctx, u.Host)
	if err != nil {
		return nil, 0, err
	}
	defer release()

	c := f.base.Clone()
	c.Context = ctx
	var (
		got     *Response
		skip    *SkipError
		callErr error
	)
	c.OnResponseHeaders(func(r *colly.Response) {
		if r.StatusCode != http.StatusOK {
			return
		}
		ct := r.Headers.Get("Content-Type")
		if mt := MediaType(ct); ct != "" && !accept(mt) {
			skip = &SkipError{Reason: ReasonContentType, Detail: fmt.Sprintf("content type %q is not indexed", mt), MediaType: mt}
			r.Request.Abort()
			return
		}
		if n, err := strconv.ParseInt(r.Headers.Get("Content-Length"), 10, 64); err == nil && n > f.cfg.MaxBodyBytes {
			skip = &SkipError{Reason: ReasonTooLarge, Detail: fmt.Sprintf("body of %d bytes exceeds the limit of %d", n, f.cfg.MaxBodyBytes)}
			r.Request.Abort()
		}
	})
	c.OnResponse(func(r *colly.Response) {
		got = &Response{URL: u.String(), Status: r.StatusCode, Header: *r.Headers, Body: r.Body}
	})
	c.OnError(func(r *colly.Response, err error) {
		if r != nil && r.StatusCode > 0 && got == nil {
			got = &Response{URL: u.String(), Status: r.StatusCode, Body: r.Body}
			if r.Headers != nil {
				got.Header = *r.Headers
			}
		}
		callErr = err
	})
	hdr := http.Header{}
	hdr.Set("User-Agent", f.cfg.UserAgent)
	hdr.Set("Accept", "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5")
	if req.ETag != "" {
		hdr.Set("If-None-Match", req.ETag)
	}
	if req.LastModified != "" {
		hdr.Set("If-Modified-Since", req.LastModified)
	}
	err = c.Request(http.MethodGet, u.String(), nil, nil, hdr)
	if skip != nil {
		return nil, 0, skip
	}
	if err == nil && callErr != nil && got == nil {
		err = callErr
	}
	if got == nil {
		if err == nil {
			err = errors.New("no response")
		}
		if ctx.Err() != nil {
			return nil, 0, ctx.Err()
		}
		return nil, 0, err
	}
	if int64(len(got.Body)) > f.cfg.MaxBodyBytes {
		return nil, 0, &SkipError{Reason: ReasonTooLarge, Detail: fmt.Sprintf("body exceeds the limit of %d bytes", f.cfg.MaxBodyBytes)}
	}
	got.ContentType = utf8ContentType(got.Header.Get("Content-Type"))
	if got.Status >= 300 && got.Status < 400 {
		if loc := got.Header.Get("Location"); loc != "" {
			if ref, err := u.Parse(loc); err == nil {
				got.Location = ref.String()
			}
		}
	}
	var retryAfter time.Duration
	if got.Status == http.StatusTooManyRequests || got.Status == http.StatusServiceUnavailable {
		retryAfter = parseRetryAfter(got.Header.Get("Retry-After"))
	}
	return got, retryAfter, nil
}

// utf8ContentType rewrites a declared non-UTF-8 charset to utf-8: colly has
// already converted such bodies, and decoding them again would garble them.
func utf8ContentType(ct string) string {
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || params["charset"] == "" {
		return ct
	}
	cs := strings.ToLower(params["charset"])
	if cs == "utf-8" || cs == "utf8" {
		return ct
	}
	params["charset"] = "utf-8"
	return mime.FormatMediaType(mt, params)
}

func parseRetryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
