package config

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/kgsearch/kgsearch/pkg/envconf"
)

func TestFromEnvDefaults(t *testing.T) {
	c, err := FromEnv(envconf.FromMap(map[string]string{"KGS_NEO4J_PASSWORD": "secret"}))
	if err != nil {
		t.Fatalf("FromEnv: %v", err)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("defaults do not validate: %v", err)
	}
	if c.Addr != "127.0.0.1:8088" || c.MaxBodyBytes != 8<<20 || c.LearnerFile != ".state/kg/learner.json" {
		t.Errorf("defaults: got addr %q body %d learner %q, want 127.0.0.1:8088, 8 MiB, .state/kg/learner.json", c.Addr, c.MaxBodyBytes, c.LearnerFile)
	}
}

func TestFromEnv(t *testing.T) {
	c, err := FromEnv(envconf.FromMap(map[string]string{
		"KG_ADDR": "0.0.0.0:9000", "KGS_NEO4J_URI": "neo4j://db:7687", "KGS_NEO4J_USER": "u", "KGS_NEO4J_PASSWORD": "p",
		"KGS_API_KEYS": "0123456789abcdef, fedcba9876543210", "KG_MAX_BODY_BYTES": "1048576", "KG_MAX_CHUNK_BYTES": "4096",
		"KGS_LOG_LEVEL": "debug", "KGS_STATE": "/var/lib/kgs", "KG_GAZETTEER_REFRESH": "0",
	}))
	if err != nil {
		t.Fatalf("FromEnv: %v", err)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if c.Addr != "0.0.0.0:9000" || c.Neo4jURI != "neo4j://db:7687" || len(c.APIKeys) != 2 || c.MaxChunkBytes != 4096 ||
		c.LogLevel != slog.LevelDebug || c.LearnerFile != "/var/lib/kgs/kg/learner.json" || c.GazetteerEvery != 0 {
		t.Errorf("got %+v", c)
	}
	off, _ := FromEnv(envconf.FromMap(map[string]string{"KG_LEARNER_FILE": "off"}))
	if off.LearnerFile != "" {
		t.Errorf("KG_LEARNER_FILE=off: got %q, want empty", off.LearnerFile)
	}
}

func TestFromEnvMalformed(t *testing.T) {
	_, err := FromEnv(envconf.FromMap(map[string]string{"KG_MAX_CHUNKS": "many", "KGS_LOG_LEVEL": "loud", "KG_LEARNER_SAVE_INTERVAL": "soon"}))
	for _, want := range []string{"KG_MAX_CHUNKS", "KGS_LOG_LEVEL", "KG_LEARNER_SAVE_INTERVAL"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error: got %v, want it to name %s", err, want)
		}
	}
}

func TestValidate(t *testing.T) {
	base := Default("")
	base.Neo4jPassword = "p"
	tests := []struct {
		name  string
		edit  func(*Config)
		field string
	}{
		{"addr", func(c *Config) { c.Addr = "8088" }, "KG_ADDR"},
		{"port", func(c *Config) { c.Addr = "h:99999" }, "KG_ADDR"},
		{"uri scheme", func(c *Config) { c.Neo4jURI = "http://127.0.0.1:7474" }, "KGS_NEO4J_URI"},
		{"uri", func(c *Config) { c.Neo4jURI = "localhost" }, "KGS_NEO4J_URI"},
		{"password", func(c *Config) { c.Neo4jPassword = "" }, "KGS_NEO4J_PASSWORD"},
		{"api key", func(c *Config) { c.APIKeys = []string{"short"} }, "KGS_API_KEYS"},
		{"body", func(c *Config) { c.MaxBodyBytes = 10 }, "KG_MAX_BODY_BYTES"},
		{"chunk above body", func(c *Config) { c.MaxChunkBytes = int(c.MaxBodyBytes) + 1 }, "KG_MAX_CHUNK_BYTES"},
		{"chunks", func(c *Config) { c.MaxChunks = 0 }, "KG_MAX_CHUNKS"},
		{"links", func(c *Config) { c.MaxLinks = -1 }, "KG_MAX_LINKS"},
		{"query", func(c *Config) { c.MaxQueryBytes = 1 }, "KG_MAX_QUERY_BYTES"},
		{"support", func(c *Config) { c.CooccurMinSupport = 0 }, "KG_COOCCUR_MIN_SUPPORT"},
		{"npmi", func(c *Config) { c.CooccurMinNPMI = 2 }, "KG_COOCCUR_MIN_NPMI"},
		{"confidence", func(c *Config) { c.MinConfidence = -0.1 }, "KG_MIN_CONFIDENCE"},
		{"save interval", func(c *Config) { c.LearnerSave = time.Millisecond }, "KG_LEARNER_SAVE_INTERVAL"},
		{"refresh", func(c *Config) { c.GazetteerEvery = time.Millisecond }, "KG_GAZETTEER_REFRESH"},
		{"gazetteer size", func(c *Config) { c.GazetteerSize = 5000 }, "KG_GAZETTEER_SIZE"},
		{"gazetteer docs", func(c *Config) { c.GazetteerMinDoc = 0 }, "KG_GAZETTEER_MIN_DOCS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := base
			tt.edit(&c)
			err := c.Validate()
			if err == nil || !strings.HasPrefix(err.Error(), tt.field+":") {
				t.Errorf("got %v, want an error starting with %s:", err, tt.field)
			}
		})
	}
}

func TestLogAttrsHidePassword(t *testing.T) {
	c := Default("")
	c.Neo4jPassword = "hunter2-very-secret"
	for _, a := range c.LogAttrs() {
		if s, ok := a.(string); ok && strings.Contains(s, "hunter2") {
			t.Errorf("log attributes contain the password")
		}
	}
}
