// Package config holds the kg service's configuration: defaults, reading from
// the environment, and validation that names the variable at fault.
package config

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/kgsearch/kgsearch/pkg/envconf"
	"github.com/kgsearch/kgsearch/pkg/extract"
	"github.com/kgsearch/kgsearch/pkg/httpserver"
)

// Config is everything the kg service needs to start.
type Config struct {
	Addr          string        // KG_ADDR
	Neo4jURI      string        // KGS_NEO4J_URI
	Neo4jUser     string        // KGS_NEO4J_USER
	Neo4jPassword string        // KGS_NEO4J_PASSWORD (or KGS_NEO4J_PASSWORD_FILE); never logged
	Neo4jDatabase string        // KGS_NEO4J_DATABASE (empty: the server's default)
	Neo4jRetry    time.Duration // KG_NEO4J_RETRY: how long the driver retries a transaction
	GraphTimeout  time.Duration // KG_GRAPH_TIMEOUT: graph work of one request
	APIKeys       []string      // KGS_API_KEYS: when set, every API request needs a key
	AllowNoAuth   bool          // KGS_ALLOW_NO_AUTH: serve a non-loopback address without keys
	LogLevel      slog.Level

	MaxBodyBytes  int64 // KG_MAX_BODY_BYTES: request body limit
	MaxChunkBytes int   // KG_MAX_CHUNK_BYTES: text of one chunk
	MaxChunks     int   // KG_MAX_CHUNKS: chunks of one document
	MaxLinks      int   // KG_MAX_LINKS: outgoing links of one document
	MaxRelations  int   // KG_MAX_RELATIONS: relations one document writes (the strongest are kept)
	MaxQueryBytes int   // KG_MAX_QUERY_BYTES: text of a /parse request

	CooccurMinSupport int     // KG_COOCCUR_MIN_SUPPORT: chunks two entities must share
	CooccurMinNPMI    float64 // KG_COOCCUR_MIN_NPMI: weakest co-occurrence kept
	MinConfidence     float64 // KG_MIN_CONFIDENCE: weakest mention kept at ingest

	LearnerFile     string        // KG_LEARNER_FILE: learner statistics ("" or "off": not persisted)
	LearnerSave     time.Duration // KG_LEARNER_SAVE_INTERVAL
	GazetteerEvery  time.Duration // KG_GAZETTEER_REFRESH: reload learned entities from the graph
	GazetteerSize   int           // KG_GAZETTEER_SIZE: most frequent graph entities loaded
	GazetteerMinDoc int           // KG_GAZETTEER_MIN_DOCS: documents an entity needs to be loaded

	Projection          bool          // KG_PROJECTION: serve match and expand from the in-memory graph projection
	ProjectionPoll      time.Duration // KG_PROJECTION_POLL: how often the projection reads the graph's change feed
	ProjectionMinReload time.Duration // KG_PROJECTION_MIN_RELOAD: shortest time between two snapshot loads after feed gaps
	ProjectionReadyWait time.Duration // KG_PROJECTION_READY_WAIT: how long start-up waits for the first load before ready
	FeedRetain          time.Duration // KG_FEED_RETAIN: how long graph changes stay in the feed before pruning
}

// Default returns the configuration used when no variable is set. stateDir is
// the state folder (KGS_STATE) the learner file lives in.
func Default(stateDir string) Config {
	if stateDir == "" {
		stateDir = ".state"
	}
	return Config{
		Addr:              "127.0.0.1:8088",
		Neo4jURI:          "bolt://127.0.0.1:17687",
		Neo4jUser:         "neo4j",
		LogLevel:          slog.LevelInfo,
		Neo4jRetry:        3 * time.Second,
		GraphTimeout:      8 * time.Second,
		MaxBodyBytes:      8 << 20,
		MaxChunkBytes:     256 << 10,
		MaxChunks:         5000,
		MaxLinks:          5000,
		MaxRelations:      extract.DefaultMaxDocumentPairs,
		MaxQueryBytes:     4096,
		CooccurMinSupport: 2,
		CooccurMinNPMI:    0.1,
		MinConfidence:     0.5,
		LearnerFile:       filepath.Join(stateDir, "kg", "learner.json"),
		LearnerSave:       time.Minute,
		GazetteerEvery:    5 * time.Minute,
		GazetteerSize:     1000,
		GazetteerMinDoc:   2,

		Projection:          true,
		ProjectionPoll:      200 * time.Millisecond,
		ProjectionMinReload: 30 * time.Second,
		ProjectionReadyWait: 20 * time.Second,
		FeedRetain:          24 * time.Hour,
	}
}

// FromEnv reads the configuration from the environment over the defaults. It
// reports every malformed variable; call Validate for ranges and combinations.
func FromEnv(r *envconf.Reader) (Config, error) {
	c := Default(r.String("KGS_STATE", ""))
	c.Addr = r.String("KG_ADDR", c.Addr)
	c.Neo4jURI = r.String("KGS_NEO4J_URI", c.Neo4jURI)
	c.Neo4jUser = r.String("KGS_NEO4J_USER", c.Neo4jUser)
	c.Neo4jPassword = r.Secret("KGS_NEO4J_PASSWORD")
	c.Neo4jDatabase = r.String("KGS_NEO4J_DATABASE", c.Neo4jDatabase)
	c.Neo4jRetry = r.Duration("KG_NEO4J_RETRY", c.Neo4jRetry)
	c.GraphTimeout = r.Duration("KG_GRAPH_TIMEOUT", c.GraphTimeout)
	c.APIKeys = r.List("KGS_API_KEYS", nil)
	c.AllowNoAuth = r.Bool("KGS_ALLOW_NO_AUTH", c.AllowNoAuth)
	c.LogLevel = r.LogLevel("KGS_LOG_LEVEL", c.LogLevel)
	c.MaxBodyBytes = r.Int64("KG_MAX_BODY_BYTES", c.MaxBodyBytes)
	c.MaxChunkBytes = r.Int("KG_MAX_CHUNK_BYTES", c.MaxChunkBytes)
	c.MaxChunks = r.Int("KG_MAX_CHUNKS", c.MaxChunks)
	c.MaxLinks = r.Int("KG_MAX_LINKS", c.MaxLinks)
	c.MaxRelations = r.Int("KG_MAX_RELATIONS", c.MaxRelations)
	c.MaxQueryBytes = r.Int("KG_MAX_QUERY_BYTES", c.MaxQueryBytes)
	c.CooccurMinSupport = r.Int("KG_COOCCUR_MIN_SUPPORT", c.CooccurMinSupport)
	c.CooccurMinNPMI = r.Float("KG_COOCCUR_MIN_NPMI", c.CooccurMinNPMI)
	c.MinConfidence = r.Float("KG_MIN_CONFIDENCE", c.MinConfidence)
	c.LearnerFile = r.String("KG_LEARNER_FILE", c.LearnerFile)
	if strings.EqualFold(c.LearnerFile, "off") {
		c.LearnerFile = ""
	}
	c.LearnerSave = r.Duration("KG_LEARNER_SAVE_INTERVAL", c.LearnerSave)
	c.GazetteerEvery = r.Duration("KG_GAZETTEER_REFRESH", c.GazetteerEvery)
	c.GazetteerSize = r.Int("KG_GAZETTEER_SIZE", c.GazetteerSize)
	c.GazetteerMinDoc = r.Int("KG_GAZETTEER_MIN_DOCS", c.GazetteerMinDoc)
	c.Projection = r.Bool("KG_PROJECTION", c.Projection)
	c.ProjectionPoll = r.Duration("KG_PROJECTION_POLL", c.ProjectionPoll)
	c.ProjectionMinReload = r.Duration("KG_PROJECTION_MIN_RELOAD", c.ProjectionMinReload)
	c.ProjectionReadyWait = r.Duration("KG_PROJECTION_READY_WAIT", c.ProjectionReadyWait)
	c.FeedRetain = r.Duration("KG_FEED_RETAIN", c.FeedRetain)
	var errs []error
	if err := r.Err(); err != nil {
		errs = append(errs, err)
	}
	return c, errors.Join(errs...)
}

// HTTP is the shared server's configuration: with keys, every API request (ingest,
// delete, and the reads search makes) needs one.
func (c Config) HTTP() httpserver.Config {
	return httpserver.Config{Addr: c.Addr, APIKeys: c.APIKeys, AllowNoAuth: c.AllowNoAuth, MaxBodyBytes: c.MaxBodyBytes}
}

// Level is the log level (KGS_LOG_LEVEL).
func (c Config) Level() slog.Level { return c.LogLevel }

// Validate rejects unusable values, naming the variable at fault. It reports
// every problem at once.
func (c Config) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...)))
	}
	errs = append(errs, c.HTTP().CheckVars("KG_ADDR")...)
	if u, err := url.Parse(c.Neo4jURI); err != nil || u.Host == "" {
		bad("KGS_NEO4J_URI", "%q is not a URI such as bolt://127.0.0.1:17687", c.Neo4jURI)
	} else {
		switch u.Scheme {
		case "bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc":
		default:
			bad("KGS_NEO4J_URI", "scheme %q is not bolt, neo4j (or +s, +ssc)", u.Scheme)
		}
	}
	if c.Neo4jUser != "" && c.Neo4jPassword == "" {
		bad("KGS_NEO4J_PASSWORD", "empty while KGS_NEO4J_USER is %q; set it (or KGS_NEO4J_PASSWORD_FILE)", c.Neo4jUser)
	}
	if c.Neo4jRetry < 0 || c.Neo4jRetry > 5*time.Minute {
		bad("KG_NEO4J_RETRY", "%s is outside 0..5m", c.Neo4jRetry)
	}
	if c.GraphTimeout < 100*time.Millisecond || c.GraphTimeout > 10*time.Minute {
		bad("KG_GRAPH_TIMEOUT", "%s is outside 100ms..10m", c.GraphTimeout)
	}
	if c.MaxBodyBytes < 1024 || c.MaxBodyBytes > 1<<30 {
		bad("KG_MAX_BODY_BYTES", "%d is outside 1024..1073741824", c.MaxBodyBytes)
	}
	if c.MaxChunkBytes < 64 || int64(c.MaxChunkBytes) > c.MaxBodyBytes {
		bad("KG_MAX_CHUNK_BYTES", "%d must be in 64..KG_MAX_BODY_BYTES (%d)", c.MaxChunkBytes, c.MaxBodyBytes)
	}
	if c.MaxChunks < 1 || c.MaxChunks > 100_000 {
		bad("KG_MAX_CHUNKS", "%d is outside 1..100000", c.MaxChunks)
	}
	if c.MaxLinks < 0 || c.MaxLinks > 100_000 {
		bad("KG_MAX_LINKS", "%d is outside 0..100000", c.MaxLinks)
	}
	if c.MaxRelations < 1 || c.MaxRelations > 1_000_000 {
		bad("KG_MAX_RELATIONS", "%d is outside 1..1000000", c.MaxRelations)
	}
	if c.MaxQueryBytes < 16 || c.MaxQueryBytes > 1<<20 {
		bad("KG_MAX_QUERY_BYTES", "%d is outside 16..1048576", c.MaxQueryBytes)
	}
	if c.CooccurMinSupport < 1 || c.CooccurMinSupport > 1000 {
		bad("KG_COOCCUR_MIN_SUPPORT", "%d is outside 1..1000", c.CooccurMinSupport)
	}
	if !inRange(c.CooccurMinNPMI, -1, 1) {
		bad("KG_COOCCUR_MIN_NPMI", "%v is outside -1..1", c.CooccurMinNPMI)
	}
	if !inRange(c.MinConfidence, 0, 1) {
		bad("KG_MIN_CONFIDENCE", "%v is outside 0..1", c.MinConfidence)
	}
	if c.LearnerFile != "" && c.LearnerSave < time.Second {
		bad("KG_LEARNER_SAVE_INTERVAL", "%s is below 1s", c.LearnerSave)
	}
	if c.GazetteerEvery != 0 && c.GazetteerEvery < time.Second {
		bad("KG_GAZETTEER_REFRESH", "%s is below 1s (0 disables the refresh)", c.GazetteerEvery)
	}
	if c.GazetteerSize < 0 || c.GazetteerSize > 1000 {
		bad("KG_GAZETTEER_SIZE", "%d is outside 0..1000", c.GazetteerSize)
	}
	if c.GazetteerMinDoc < 1 {
		bad("KG_GAZETTEER_MIN_DOCS", "%d is below 1", c.GazetteerMinDoc)
	}
	if c.ProjectionPoll < 10*time.Millisecond || c.ProjectionPoll > time.Minute {
		bad("KG_PROJECTION_POLL", "%s is outside 10ms..1m", c.ProjectionPoll)
	}
	if c.ProjectionMinReload < 0 || c.ProjectionMinReload > time.Hour {
		bad("KG_PROJECTION_MIN_RELOAD", "%s is outside 0..1h", c.ProjectionMinReload)
	}
	if c.ProjectionReadyWait < 0 || c.ProjectionReadyWait > 10*time.Minute {
		bad("KG_PROJECTION_READY_WAIT", "%s is outside 0..10m", c.ProjectionReadyWait)
	}
	if c.FeedRetain < time.Minute {
		bad("KG_FEED_RETAIN", "%s is below 1m", c.FeedRetain)
	}
	return errors.Join(errs...)
}

func inRange(v, lo, hi float64) bool { return !math.IsNaN(v) && v >= lo && v <= hi }

// LogAttrs describes the configuration for the start-up log, without secrets.
func (c Config) LogAttrs() []any {
	return []any{
		"addr", c.Addr, "neo4j_uri", c.Neo4jURI, "neo4j_user", c.Neo4jUser,
		"neo4j_password_set", c.Neo4jPassword != "", "api_keys", len(c.APIKeys),
		"max_body_bytes", c.MaxBodyBytes, "max_chunk_bytes", c.MaxChunkBytes, "max_chunks", c.MaxChunks,
		"learner_file", c.LearnerFile, "gazetteer_refresh", c.GazetteerEvery.String(),
		"projection", c.Projection, "projection_poll", c.ProjectionPoll.String(), "feed_retain", c.FeedRetain.String(),
	}
}
