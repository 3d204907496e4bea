// Package config holds the crawler service's configuration: defaults, reading
// from the environment, and validation that names the field at fault.
package config

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/kgsearch/kgsearch/pkg/embed"
	"github.com/kgsearch/kgsearch/pkg/envconf"
	"github.com/kgsearch/kgsearch/pkg/httpserver"
	"github.com/kgsearch/kgsearch/services/crawler/internal/netguard"
)

// Config is everything the crawler needs to start.
type Config struct {
	Addr       string   // CRAWLER_ADDR
	MariaDBDSN string   // KGS_MARIADB_DSN
	KGURL      string   // KGS_KG_URL
	KGAPIKey   string   // KGS_KG_API_KEY (sent to kg)
	APIKeys    []string // KGS_API_KEYS: when set, every API request needs a key
	LogLevel   slog.Level

	UserAgent     string        // CRAWLER_USER_AGENT
	AllowHosts    []string      // CRAWLER_ALLOW_HOSTS: SSRF exceptions
	MaxPagesCap   int           // CRAWLER_MAX_PAGES_CAP: hard cap on a job's max_pages
	MaxDepthCap   int           // CRAWLER_MAX_DEPTH_CAP
	Concurrency   int           // CRAWLER_CONCURRENCY: page workers per job
	HostParallel  int           // CRAWLER_HOST_CONCURRENCY: parallel requests per host
	Delay         time.Duration // CRAWLER_DELAY: minimum gap between request starts per host
	MaxCrawlDelay time.Duration // CRAWLER_MAX_CRAWL_DELAY: cap on robots.txt Crawl-delay
	MaxBodyBytes  int64         // CRAWLER_MAX_BODY_BYTES
	Timeout       time.Duration // CRAWLER_TIMEOUT: one HTTP request
	Retries       int           // CRAWLER_RETRIES: after 429, 5xx, timeouts
	RetryBackoff  time.Duration // CRAWLER_RETRY_BACKOFF: first retry delay, doubled
	JobSlots      int           // CRAWLER_JOBS: jobs run at once by this process
	Lease         time.Duration // CRAWLER_LEASE: job and URL claim lease
	StripWWW      bool          // CRAWLER_STRIP_WWW: www.host and host are one host

	ChunkTokens  int // CRAWLER_CHUNK_TOKENS
	ChunkOverlap int // CRAWLER_CHUNK_OVERLAP

	Embed embed.Config // KGS_EMBED_*

	OutboxWorkers int           // CRAWLER_OUTBOX_WORKERS (0 disables delivery)
	OutboxPoll    time.Duration // CRAWLER_OUTBOX_POLL

	StoreTimeout time.Duration // CRAWLER_STORE_TIMEOUT: database work of one API request

	// Exposure and limits (see SECURITY.md).
	AllowNoAuth    bool            // KGS_ALLOW_NO_AUTH: serve a non-loopback address without keys
	TrustedProxies []netip.Prefix  // KGS_TRUSTED_PROXIES: peers whose X-Forwarded-For is read
	RatePerAddr    httpserver.Rate // CRAWLER_RATE_PER_ADDR: crawls (and single pages) created per client address
	RatePerKey     httpserver.Rate // CRAWLER_RATE_PER_KEY: the same per API key
}

// Rate limit defaults for crawl creation: a crawl is minutes of work, so a person
// starts a few a minute; a key (the search service's web UI and MCP, kgs) 60.
var (
	DefaultRatePerAddr = httpserver.Rate{PerSecond: 6.0 / 60, Burst: 3}
	DefaultRatePerKey  = httpserver.Rate{PerSecond: 1, Burst: 10}
)

// Default returns the configuration used when no variable is set.
func Default() Config {
	return Config{
		Addr:          "127.0.0.1:8081",
		MariaDBDSN:    "kgsearch:kgsearch@tcp(127.0.0.1:13306)/kgsearch?parseTime=true",
		KGURL:         "http://127.0.0.1:8088",
		LogLevel:      slog.LevelInfo,
		UserAgent:     "kgsearch-crawler/1.0 (+https://github.com/kgsearch/kgsearch)",
		MaxPagesCap:   10000,
		MaxDepthCap:   20,
		Concurrency:   4,
		HostParallel:  2,
		Delay:         0,
		MaxCrawlDelay: 30 * time.Second,
		MaxBodyBytes:  10 << 20,
		Timeout:       30 * time.Second,
		Retries:       3,
		RetryBackoff:  500 * time.Millisecond,
		JobSlots:      2,
		Lease:         30 * time.Second,
		ChunkTokens:   256,
		ChunkOverlap:  32,
		OutboxWorkers: 2,
		OutboxPoll:    time.Second,
		StoreTimeout:  10 * time.Second,
		RatePerAddr:   DefaultRatePerAddr,
		RatePerKey:    DefaultRatePerKey,
	}
}

// FromEnv reads the configuration from the environment over the defaults. It
// reports every malformed variable; call Validate for the combinations.
func FromEnv(r *envconf.Reader) (Config, error) {
	c := Default()
	c.Addr = r.String("CRAWLER_ADDR", c.Addr)
	c.MariaDBDSN = r.String("KGS_MARIADB_DSN", c.MariaDBDSN)
	c.KGURL = r.String("KGS_KG_URL", c.KGURL)
	c.KGAPIKey = r.Secret("KGS_KG_API_KEY")
	c.APIKeys = r.List("KGS_API_KEYS", nil)
	c.LogLevel = r.LogLevel("KGS_LOG_LEVEL", c.LogLevel)
	c.UserAgent = r.String("CRAWLER_USER_AGENT", c.UserAgent)
	c.AllowHosts = r.List("CRAWLER_ALLOW_HOSTS", nil)
	c.MaxPagesCap = r.Int("CRAWLER_MAX_PAGES_CAP", c.MaxPagesCap)
	c.MaxDepthCap = r.Int("CRAWLER_MAX_DEPTH_CAP", c.MaxDepthCap)
	c.Concurrency = r.Int("CRAWLER_CONCURRENCY", c.Concurrency)
	c.HostParallel = r.Int("CRAWLER_HOST_CONCURRENCY", c.HostParallel)
	c.Delay = r.Duration("CRAWLER_DELAY", c.Delay)
	c.MaxCrawlDelay = r.Duration("CRAWLER_MAX_CRAWL_DELAY", c.MaxCrawlDelay)
	c.MaxBodyBytes = r.Int64("CRAWLER_MAX_BODY_BYTES", c.MaxBodyBytes)
	c.Timeout = r.Duration("CRAWLER_TIMEOUT", c.Timeout)
	c.Retries = r.Int("CRAWLER_RETRIES", c.Retries)
	c.RetryBackoff = r.Duration("CRAWLER_RETRY_BACKOFF", c.RetryBackoff)
	c.JobSlots = r.Int("CRAWLER_JOBS", c.JobSlots)
	c.Lease = r.Duration("CRAWLER_LEASE", c.Lease)
	c.StripWWW = r.Bool("CRAWLER_STRIP_WWW", c.StripWWW)
	c.ChunkTokens = r.Int("CRAWLER_CHUNK_TOKENS", c.ChunkTokens)
	c.ChunkOverlap = r.Int("CRAWLER_CHUNK_OVERLAP", c.ChunkOverlap)
	c.OutboxWorkers = r.Int("CRAWLER_OUTBOX_WORKERS", c.OutboxWorkers)
	c.OutboxPoll = r.Duration("CRAWLER_OUTBOX_POLL", c.OutboxPoll)
	c.StoreTimeout = r.Duration("CRAWLER_STORE_TIMEOUT", c.StoreTimeout)
	c.AllowNoAuth = r.Bool("KGS_ALLOW_NO_AUTH", c.AllowNoAuth)
	r.Parse("KGS_TRUSTED_PROXIES", func(v string) (err error) { c.TrustedProxies, err = httpserver.ParseProxies(v); return err })
	r.Parse("CRAWLER_RATE_PER_ADDR", func(v string) (err error) { c.RatePerAddr, err = httpserver.ParseRate(v); return err })
	r.Parse("CRAWLER_RATE_PER_KEY", func(v string) (err error) { c.RatePerKey, err = httpserver.ParseRate(v); return err })
	c.Embed = embed.FromEnv(r)
	return c, r.Err()
}

// HTTP is the shared server's configuration: keys on every API request, and the
// rate limits on crawl creation (a crawl and a single page).
func (c Config) HTTP() httpserver.Config {
	return httpserver.Config{Addr: c.Addr, APIKeys: c.APIKeys, AllowNoAuth: c.AllowNoAuth, TrustedProxies: c.TrustedProxies,
		Limits: []httpserver.RouteLimit{{Name: "crawl creation", Routes: []string{"POST /api/v1/crawls", "POST /api/v1/pages"},
			PerAddr: c.RatePerAddr, PerKey: c.RatePerKey}}}
}

// Level is the log level (KGS_LOG_LEVEL).
func (c Config) Level() slog.Level { return c.LogLevel }

// Validate rejects unusable values, naming the variable at fault.
func (c Config) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...)))
	}
	errs = append(errs, c.HTTP().CheckVars("CRAWLER_ADDR")...)
	if c.MariaDBDSN == "" {
		bad("KGS_MARIADB_DSN", "empty; want user:pw@tcp(127.0.0.1:13306)/kgsearch?parseTime=true")
	}
	if u, err := url.Parse(c.KGURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		bad("KGS_KG_URL", "%q is not an http(s) URL", c.KGURL)
	}
	if strings.TrimSpace(c.UserAgent) == "" || strings.ContainsAny(c.UserAgent, "\r\n") {
		bad("CRAWLER_USER_AGENT", "must be one non-empty line")
	}
	if _, err := netguard.New(netguard.Options{Allow: c.AllowHosts}); err != nil {
		bad("CRAWLER_ALLOW_HOSTS", "%v", err)
	}
	if c.MaxPagesCap < 1 || c.MaxPagesCap > 10_000_000 {
		bad("CRAWLER_MAX_PAGES_CAP", "%d is outside 1..10000000", c.MaxPagesCap)
	}
	if c.MaxDepthCap < 0 || c.MaxDepthCap > 1000 {
		bad("CRAWLER_MAX_DEPTH_CAP", "%d is outside 0..1000", c.MaxDepthCap)
	}
	if c.Concurrency < 1 || c.Concurrency > 256 {
		bad("CRAWLER_CONCURRENCY", "%d is outside 1..256", c.Concurrency)
	}
	if c.HostParallel < 1 || c.HostParallel > 64 {
		bad("CRAWLER_HOST_CONCURRENCY", "%d is outside 1..64", c.HostParallel)
	}
	if c.Delay < 0 || c.Delay > time.Minute {
		bad("CRAWLER_DELAY", "%s is outside 0..1m", c.Delay)
	}
	if c.MaxCrawlDelay < 0 {
		bad("CRAWLER_MAX_CRAWL_DELAY", "%s is negative", c.MaxCrawlDelay)
	}
	if c.MaxBodyBytes < 1024 || c.MaxBodyBytes > 1<<30 {
		bad("CRAWLER_MAX_BODY_BYTES", "%d is outside 1024..1073741824", c.MaxBodyBytes)
	}
	if c.Timeout < 100*time.Millisecond {
		bad("CRAWLER_TIMEOUT", "%s is below 100ms", c.Timeout)
	}
	if c.Retries < 0 || c.Retries > 10 {
		bad("CRAWLER_RETRIES", "%d is outside 0..10", c.Retries)
	}
	if c.RetryBackoff < 0 {
		bad("CRAWLER_RETRY_BACKOFF", "%s is negative", c.RetryBackoff)
	}
	if c.JobSlots < 1 || c.JobSlots > 64 {
		bad("CRAWLER_JOBS", "%d is outside 1..64", c.JobSlots)
	}
	if c.Lease < time.Second || c.Lease > time.Hour {
		bad("CRAWLER_LEASE", "%s is outside 1s..1h", c.Lease)
	}
	if c.ChunkTokens < 16 || c.ChunkTokens > 8192 {
		bad("CRAWLER_CHUNK_TOKENS", "%d is outside 16..8192", c.ChunkTokens)
	}
	if c.ChunkOverlap < 0 || c.ChunkOverlap > c.ChunkTokens/2 {
		bad("CRAWLER_CHUNK_OVERLAP", "%d must be in 0..CRAWLER_CHUNK_TOKENS/2 (%d)", c.ChunkOverlap, c.ChunkTokens/2)
	}
	if c.OutboxWorkers < 0 || c.OutboxWorkers > 64 {
		bad("CRAWLER_OUTBOX_WORKERS", "%d is outside 0..64", c.OutboxWorkers)
	}
	if c.OutboxPoll < 10*time.Millisecond {
		bad("CRAWLER_OUTBOX_POLL", "%s is below 10ms", c.OutboxPoll)
	}
	if c.StoreTimeout < 100*time.Millisecond || c.StoreTimeout > 10*time.Minute {
		bad("CRAWLER_STORE_TIMEOUT", "%s is outside 100ms..10m", c.StoreTimeout)
	}
	if err := c.Embed.Validate(); err != nil {
		bad("KGS_EMBED_*", "%v", err)
	}
	return errors.Join(errs...)
}
