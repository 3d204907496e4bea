// Package config holds the search service's configuration: defaults, reading from
// the environment, and validation that names the variable at fault.
package config

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/netip"
	"net/url"
	"time"

	"github.com/kgsearch/kgsearch/pkg/embed"
	"github.com/kgsearch/kgsearch/pkg/envconf"
	"github.com/kgsearch/kgsearch/pkg/httpserver"
	"github.com/kgsearch/kgsearch/pkg/kgapi"
	"github.com/kgsearch/kgsearch/services/search/internal/admission"
	"github.com/kgsearch/kgsearch/services/search/internal/pipeline"
)

// Config is everything the search service needs to start.
type Config struct {
	Addr       string   // SEARCH_ADDR
	MariaDBDSN string   // KGS_MARIADB_DSN
	KGURL      string   // KGS_KG_URL
	KGAPIKey   string   // KGS_KG_API_KEY (sent to kg)
	APIKeys    []string // KGS_API_KEYS: when set, every API request and /mcp need a key
	IndexDir   string   // SEARCH_INDEX_DIR
	LogLevel   slog.Level

	// The crawler the MCP tools at /mcp call (crawl, crawl_status, get_document).
	CrawlerURL    string // KGS_CRAWLER_URL
	CrawlerAPIKey string // KGS_CRAWLER_API_KEY

	Deadline      time.Duration // SEARCH_DEADLINE: retrieval + expansion of one search
	VectorTimeout time.Duration // SEARCH_VECTOR_TIMEOUT: embed + HNSW search
	GraphTimeout  time.Duration // SEARCH_GRAPH_TIMEOUT: one kg match
	BM25Timeout   time.Duration // SEARCH_BM25_TIMEOUT
	ExpandTimeout time.Duration // SEARCH_EXPAND_TIMEOUT: kg expand
	Candidates    int           // SEARCH_CANDIDATES: pool size per retriever
	QueryCache    int           // SEARCH_QUERY_CACHE: recent query vectors kept (0: none)
	ChunkCache    int           // SEARCH_CHUNK_CACHE: chunk rows kept for hydration (0: none)

	// Admission control (package admission): searches beyond MaxInFlight wait up to
	// QueueWait in a queue of at most Queue, and are otherwise refused with 503.
	MaxInFlight int           // SEARCH_MAX_INFLIGHT (default 4 x GOMAXPROCS)
	Queue       int           // SEARCH_QUEUE (default SEARCH_MAX_INFLIGHT)
	QueueWait   time.Duration // SEARCH_QUEUE_WAIT

	ExpandMinConfidence float64 // SEARCH_EXPAND_MIN_CONFIDENCE
	// RelatedMinConfidence (SEARCH_RELATED_MIN_CONFIDENCE): the related-entity
	// confidence a shown entity needs (0: every entity the rules keep).
	RelatedMinConfidence float64
	// SuggestMinConfidence (SEARCH_SUGGEST_MIN_CONFIDENCE): the confidence a related
	// entity needs to be a suggested query as well (0: every related entity shown).
	SuggestMinConfidence float64
	ExpandLimit          int // SEARCH_EXPAND_LIMIT: related entities used
	PreviewChars         int // SEARCH_PREVIEW_CHARS

	SyncInterval     time.Duration // SEARCH_SYNC_INTERVAL: change-feed tail interval
	GazetteerRefresh time.Duration // SEARCH_GAZETTEER_REFRESH: kg entities refresh (0 disables)
	GazetteerLimit   int           // SEARCH_GAZETTEER_LIMIT
	EfSearch         int           // SEARCH_EF_SEARCH: HNSW ef_search (0: the store's default)
	Embed            embed.Config  // KGS_EMBED_*

	// Exposure and limits (see SECURITY.md).
	AllowNoAuth        bool            // KGS_ALLOW_NO_AUTH: serve a non-loopback address without keys
	PublicSearch       bool            // KGS_PUBLIC_SEARCH: GET searches (API, web) need no key
	TrustedProxies     []netip.Prefix  // KGS_TRUSTED_PROXIES: peers whose X-Forwarded-For is read
	RatePerAddr        httpserver.Rate // SEARCH_RATE_PER_ADDR: searches per client address
	RatePerKey         httpserver.Rate // SEARCH_RATE_PER_KEY: searches per API key
	CrawlRatePerAddr   httpserver.Rate // SEARCH_CRAWL_RATE_PER_ADDR: crawls started from the web UI per address
	LoginRatePerAddr   httpserver.Rate // SEARCH_LOGIN_RATE_PER_ADDR: web sign-in attempts per address
	SuggestRatePerAddr httpserver.Rate // SEARCH_SUGGEST_RATE_PER_ADDR: completions (GET /api/v1/suggest) per address
}

// Rate limit defaults: a person searching is far below 5 a second; a burst of 20
// covers a page of suggestions and retries. A key (a program) gets 20 a second.
var (
	DefaultRatePerAddr      = httpserver.Rate{PerSecond: 5, Burst: 20}
	DefaultRatePerKey       = httpserver.Rate{PerSecond: 20, Burst: 40}
	DefaultCrawlRatePerAddr = httpserver.Rate{PerSecond: 6.0 / 60, Burst: 3}
	// A person signs in once and mistypes a key a few times; 10 a minute leaves
	// guessing a key by brute force hopeless while never slowing a person down.
	DefaultLoginRatePerAddr = httpserver.Rate{PerSecond: 10.0 / 60, Burst: 5}
	// Completions follow typing (a request per keystroke, debounced by the page).
	DefaultSuggestRatePerAddr = httpserver.Rate{PerSecond: 20, Burst: 60}
)

// DefaultChunkCache is the number of chunk rows kept for hydration: a documentation
// site of some 15k chunks fits (about 3.5 KB a row with its 384-float embedding, so
// ~55 MB when full).
const DefaultChunkCache = 16384

// Default returns the configuration used when no variable is set. The search tuning
// (deadline, timeouts, candidates, expansion) is the pipeline's own defaults.
func Default() Config {
	po := pipeline.DefaultOptions()
	ad := admission.Defaults()
	return Config{
		Addr:                 "127.0.0.1:8080",
		MariaDBDSN:           "kgsearch:kgsearch@tcp(127.0.0.1:13306)/kgsearch?parseTime=true",
		KGURL:                "http://127.0.0.1:8088",
		CrawlerURL:           "http://127.0.0.1:8081",
		IndexDir:             ".state/search/bleve",
		LogLevel:             slog.LevelInfo,
		Deadline:             po.Deadline,
		VectorTimeout:        po.VectorTimeout,
		GraphTimeout:         po.GraphTimeout,
		BM25Timeout:          po.BM25Timeout,
		ExpandTimeout:        po.ExpandTimeout,
		Candidates:           po.Candidates,
		QueryCache:           po.QueryCache,
		ChunkCache:           DefaultChunkCache,
		MaxInFlight:          ad.MaxInFlight,
		Queue:                ad.MaxQueue,
		QueueWait:            ad.MaxWait,
		ExpandMinConfidence:  po.ExpandMinConfidence,
		RelatedMinConfidence: po.RelatedMinConfidence,
		SuggestMinConfidence: po.SuggestMinConfidence,
		ExpandLimit:          po.ExpandLimit,
		PreviewChars:         240,
		SyncInterval:         time.Second,
		GazetteerRefresh:     5 * time.Minute,
		GazetteerLimit:       kgapi.MaxEntityList,
		RatePerAddr:          DefaultRatePerAddr,
		RatePerKey:           DefaultRatePerKey,
		CrawlRatePerAddr:     DefaultCrawlRatePerAddr,
		LoginRatePerAddr:     DefaultLoginRatePerAddr,
		SuggestRatePerAddr:   DefaultSuggestRatePerAddr,
	}
}

// FromEnv reads the configuration from the environment over the defaults. It reports
// every malformed variable; call Validate for ranges and combinations.
func FromEnv(r *envconf.Reader) (Config, error) {
	c := Default()
	c.Addr = r.String("SEARCH_ADDR", c.Addr)
	c.MariaDBDSN = r.String("KGS_MARIADB_DSN", c.MariaDBDSN)
	c.KGURL = r.String("KGS_KG_URL", c.KGURL)
	c.KGAPIKey = r.Secret("KGS_KG_API_KEY")
	c.CrawlerURL = r.String("KGS_CRAWLER_URL", c.CrawlerURL)
	c.CrawlerAPIKey = r.Secret("KGS_CRAWLER_API_KEY")
	c.APIKeys = r.List("KGS_API_KEYS", nil)
	c.IndexDir = r.String("SEARCH_INDEX_DIR", c.IndexDir)
	c.LogLevel = r.LogLevel("KGS_LOG_LEVEL", c.LogLevel)
	c.Deadline = r.Duration("SEARCH_DEADLINE", c.Deadline)
	c.VectorTimeout = r.Duration("SEARCH_VECTOR_TIMEOUT", c.VectorTimeout)
	c.GraphTimeout = r.Duration("SEARCH_GRAPH_TIMEOUT", c.GraphTimeout)
	c.BM25Timeout = r.Duration("SEARCH_BM25_TIMEOUT", c.BM25Timeout)
	c.ExpandTimeout = r.Duration("SEARCH_EXPAND_TIMEOUT", c.ExpandTimeout)
	c.Candidates = r.Int("SEARCH_CANDIDATES", c.Candidates)
	c.QueryCache = r.Int("SEARCH_QUERY_CACHE", c.QueryCache)
	c.ChunkCache = r.Int("SEARCH_CHUNK_CACHE", c.ChunkCache)
	c.MaxInFlight = r.Int("SEARCH_MAX_INFLIGHT", c.MaxInFlight)
	c.Queue = r.Int("SEARCH_QUEUE", c.MaxInFlight)
	c.QueueWait = r.Duration("SEARCH_QUEUE_WAIT", c.QueueWait)
	c.ExpandMinConfidence = r.Float("SEARCH_EXPAND_MIN_CONFIDENCE", c.ExpandMinConfidence)
	c.RelatedMinConfidence = r.Float("SEARCH_RELATED_MIN_CONFIDENCE", c.RelatedMinConfidence)
	c.SuggestMinConfidence = r.Float("SEARCH_SUGGEST_MIN_CONFIDENCE", c.SuggestMinConfidence)
	c.ExpandLimit = r.Int("SEARCH_EXPAND_LIMIT", c.ExpandLimit)
	c.PreviewChars = r.Int("SEARCH_PREVIEW_CHARS", c.PreviewChars)
	c.SyncInterval = r.Duration("SEARCH_SYNC_INTERVAL", c.SyncInterval)
	c.GazetteerRefresh = r.Duration("SEARCH_GAZETTEER_REFRESH", c.GazetteerRefresh)
	c.GazetteerLimit = r.Int("SEARCH_GAZETTEER_LIMIT", c.GazetteerLimit)
	c.EfSearch = r.Int("SEARCH_EF_SEARCH", c.EfSearch)
	c.AllowNoAuth = r.Bool("KGS_ALLOW_NO_AUTH", c.AllowNoAuth)
	c.PublicSearch = r.Bool("KGS_PUBLIC_SEARCH", c.PublicSearch)
	r.Parse("KGS_TRUSTED_PROXIES", func(v string) (err error) { c.TrustedProxies, err = httpserver.ParseProxies(v); return err })
	r.Parse("SEARCH_RATE_PER_ADDR", func(v string) (err error) { c.RatePerAddr, err = httpserver.ParseRate(v); return err })
	r.Parse("SEARCH_RATE_PER_KEY", func(v string) (err error) { c.RatePerKey, err = httpserver.ParseRate(v); return err })
	r.Parse("SEARCH_CRAWL_RATE_PER_ADDR", func(v string) (err error) { c.CrawlRatePerAddr, err = httpserver.ParseRate(v); return err })
	r.Parse("SEARCH_LOGIN_RATE_PER_ADDR", func(v string) (err error) { c.LoginRatePerAddr, err = httpserver.ParseRate(v); return err })
	r.Parse("SEARCH_SUGGEST_RATE_PER_ADDR", func(v string) (err error) { c.SuggestRatePerAddr, err = httpserver.ParseRate(v); return err })
	c.Embed = embed.FromEnv(r)
	return c, r.Err()
}

// PipelineOptions are the pipeline's options from the configuration (Tokens unset).
func (c Config) PipelineOptions() pipeline.Options {
	return pipeline.Options{Candidates: c.Candidates, Deadline: c.Deadline, VectorTimeout: c.VectorTimeout,
		GraphTimeout: c.GraphTimeout, BM25Timeout: c.BM25Timeout, ExpandTimeout: c.ExpandTimeout,
		ExpandMinConfidence: c.ExpandMinConfidence, ExpandLimit: c.ExpandLimit, QueryCache: queryCache(c.QueryCache),
		RelatedMinConfidence: noCutAtZero(c.RelatedMinConfidence), SuggestMinConfidence: noCutAtZero(c.SuggestMinConfidence)}
}

// noCutAtZero maps SEARCH_RELATED_MIN_CONFIDENCE and SEARCH_SUGGEST_MIN_CONFIDENCE
// to the pipeline's options (0 there is the default; 0 here is no cut).
func noCutAtZero(v float64) float64 {
	if v == 0 {
		return -1
	}
	return v
}

// queryCache maps SEARCH_QUERY_CACHE to the pipeline's option (0 there is the default).
func queryCache(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// HTTP is the shared server's configuration: keys, public searches, and the rate
// limits on searches (API, web page, MCP), crawls started from the web UI, web
// sign-in attempts and completions.
func (c Config) HTTP() httpserver.Config {
	return httpserver.Config{Addr: c.Addr, APIKeys: c.APIKeys, PublicReads: c.PublicSearch,
		AllowNoAuth: c.AllowNoAuth, TrustedProxies: c.TrustedProxies,
		Limits: []httpserver.RouteLimit{
			{Name: "searches", Routes: []string{"GET /api/v1/search", "POST /api/v1/search", "GET /", "POST /mcp"},
				PerAddr: c.RatePerAddr, PerKey: c.RatePerKey},
			{Name: "crawl creation", Routes: []string{"POST /crawls"}, PerAddr: c.CrawlRatePerAddr},
			{Name: "sign-in attempts", Routes: []string{"POST /login"}, PerAddr: c.LoginRatePerAddr},
			{Name: "completions", Routes: []string{"GET /api/v1/suggest"}, PerAddr: c.SuggestRatePerAddr, PerKey: c.RatePerKey},
		}}
}

// AdmissionOptions are admission control's options from the configuration.
func (c Config) AdmissionOptions() admission.Options {
	o := admission.Options{MaxInFlight: c.MaxInFlight, MaxQueue: c.Queue, MaxWait: c.QueueWait}
	if c.Queue == 0 {
		o.MaxQueue = -1 // no queue
	}
	return o
}

// Level is the log level (KGS_LOG_LEVEL).
func (c Config) Level() slog.Level { return c.LogLevel }

// Validate rejects unusable values, naming the variable at fault.
func (c Config) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...)))
	}
	errs = append(errs, c.HTTP().CheckVars("SEARCH_ADDR")...)
	if c.MariaDBDSN == "" {
		bad("KGS_MARIADB_DSN", "empty; want user:pw@tcp(127.0.0.1:13306)/kgsearch?parseTime=true")
	}
	if u, err := url.Parse(c.KGURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		bad("KGS_KG_URL", "%q is not an http(s) URL", c.KGURL)
	}
	if u, err := url.Parse(c.CrawlerURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		bad("KGS_CRAWLER_URL", "%q is not an http(s) URL", c.CrawlerURL)
	}
	if c.IndexDir == "" {
		bad("SEARCH_INDEX_DIR", "empty; want a directory for the Bleve index")
	}
	durations := []struct {
		name     string
		v        time.Duration
		min, max time.Duration
	}{
		{"SEARCH_DEADLINE", c.Deadline, 10 * time.Millisecond, time.Minute},
		{"SEARCH_VECTOR_TIMEOUT", c.VectorTimeout, time.Millisecond, time.Minute},
		{"SEARCH_GRAPH_TIMEOUT", c.GraphTimeout, time.Millisecond, time.Minute},
		{"SEARCH_BM25_TIMEOUT", c.BM25Timeout, time.Millisecond, time.Minute},
		{"SEARCH_EXPAND_TIMEOUT", c.ExpandTimeout, time.Millisecond, time.Minute},
		{"SEARCH_SYNC_INTERVAL", c.SyncInterval, 10 * time.Millisecond, time.Hour},
	}
	for _, d := range durations {
		if d.v < d.min || d.v > d.max {
			bad(d.name, "%s is outside %s..%s", d.v, d.min, d.max)
		}
	}
	for _, d := range durations[1:5] {
		if d.v > c.Deadline && c.Deadline > 0 {
			bad(d.name, "%s is longer than SEARCH_DEADLINE (%s), so it could never apply", d.v, c.Deadline)
		}
	}
	if c.GazetteerRefresh != 0 && c.GazetteerRefresh < time.Second {
		bad("SEARCH_GAZETTEER_REFRESH", "%s is below 1s (0 disables the refresh)", c.GazetteerRefresh)
	}
	if c.GazetteerLimit < 1 || c.GazetteerLimit > kgapi.MaxEntityList {
		bad("SEARCH_GAZETTEER_LIMIT", "%d is outside 1..%d (kg lists at most %d entities per request)", c.GazetteerLimit, kgapi.MaxEntityList, kgapi.MaxEntityList)
	}
	if c.Candidates < 10 || c.Candidates > 1000 {
		bad("SEARCH_CANDIDATES", "%d is outside 10..1000", c.Candidates)
	}
	if c.ChunkCache < 0 || c.ChunkCache > 10_000_000 {
		bad("SEARCH_CHUNK_CACHE", "%d is outside 0..10000000 (0: no cache)", c.ChunkCache)
	}
	if c.QueryCache < 0 || c.QueryCache > 1_000_000 {
		bad("SEARCH_QUERY_CACHE", "%d is outside 0..1000000 (0: no cache)", c.QueryCache)
	}
	if c.MaxInFlight < 1 || c.MaxInFlight > 10000 {
		bad("SEARCH_MAX_INFLIGHT", "%d is outside 1..10000", c.MaxInFlight)
	}
	if c.Queue < 0 || c.Queue > 100000 {
		bad("SEARCH_QUEUE", "%d is outside 0..100000 (0: refuse at once when every slot is taken)", c.Queue)
	}
	if c.QueueWait < time.Millisecond || c.QueueWait > 10*time.Second {
		bad("SEARCH_QUEUE_WAIT", "%s is outside 1ms..10s", c.QueueWait)
	}
	if c.ExpandMinConfidence <= 0 || c.ExpandMinConfidence > 1 {
		bad("SEARCH_EXPAND_MIN_CONFIDENCE", "%g is outside (0,1]", c.ExpandMinConfidence)
	}
	if c.RelatedMinConfidence < 0 || c.RelatedMinConfidence >= 1 || math.IsNaN(c.RelatedMinConfidence) {
		bad("SEARCH_RELATED_MIN_CONFIDENCE", "%g is outside [0,1) (0: show every related entity the rules keep)", c.RelatedMinConfidence)
	}
	if c.SuggestMinConfidence < 0 || c.SuggestMinConfidence >= 1 || math.IsNaN(c.SuggestMinConfidence) {
		bad("SEARCH_SUGGEST_MIN_CONFIDENCE", "%g is outside [0,1) (0: every related entity shown may be suggested)", c.SuggestMinConfidence)
	}
	if c.ExpandLimit < 1 || c.ExpandLimit > 100 {
		bad("SEARCH_EXPAND_LIMIT", "%d is outside 1..100", c.ExpandLimit)
	}
	if c.PreviewChars < 40 || c.PreviewChars > 4000 {
		bad("SEARCH_PREVIEW_CHARS", "%d is outside 40..4000", c.PreviewChars)
	}
	if c.EfSearch < 0 || c.EfSearch > 10000 {
		bad("SEARCH_EF_SEARCH", "%d is outside 0..10000 (0: the store's default)", c.EfSearch)
	}
	if err := c.Embed.Validate(); err != nil {
		bad("KGS_EMBED_*", "%v", err)
	}
	return errors.Join(errs...)
}
