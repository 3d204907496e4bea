package config

import (
	"strings"
	"testing"
	"time"

	"github.com/kgsearch/kgsearch/pkg/envconf"
)

// base is a valid environment (the embedder needs its files named).
func base() map[string]string {
	return map[string]string{"KGS_EMBED_MODEL_DIR": "/models/minilm", "KGS_ORT_LIB": "/lib/libonnxruntime.so"}
}

func load(t *testing.T, env map[string]string) (Config, error) {
	t.Helper()
	c, err := FromEnv(envconf.FromMap(env))
	if err != nil {
		return c, err
	}
	return c, c.Validate()
}

func TestDefaultsAreValid(t *testing.T) {
	c, err := load(t, base())
	if err != nil {
		t.Fatalf("defaults: %v", err)
	}
	if c.Addr != "127.0.0.1:8081" || c.KGURL != "http://127.0.0.1:8088" || c.MaxPagesCap != 10000 || c.ChunkTokens != 256 || c.ChunkOverlap != 32 {
		t.Errorf("defaults: got %+v", c)
	}
}

func TestEnvOverrides(t *testing.T) {
	env := base()
	env["CRAWLER_ALLOW_HOSTS"] = "127.0.0.1:8099, 10.0.0.0/8"
	env["CRAWLER_DELAY"] = "250ms"
	env["CRAWLER_CONCURRENCY"] = "8"
	env["KGS_EMBED_PROVIDER"] = "openai"
	env["KGS_EMBED_MODEL"] = "text-embedding-3-small"
	env["KGS_EMBED_URL"] = "http://127.0.0.1:11434/v1"
	c, err := load(t, env)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.AllowHosts) != 2 || c.Delay != 250*time.Millisecond || c.Concurrency != 8 || c.Embed.BaseURL != "http://127.0.0.1:11434/v1" {
		t.Errorf("got %+v", c)
	}
}

func TestValidateNamesTheVariable(t *testing.T) {
	for _, tc := range []struct {
		key, value string
	}{
		{"CRAWLER_ADDR", "nohostport"},
		{"KGS_KG_URL", "ftp://kg"},
		{"KGS_API_KEYS", "short"},
		{"CRAWLER_ALLOW_HOSTS", "300.1.1.1/99"},
		{"CRAWLER_MAX_PAGES_CAP", "0"},
		{"CRAWLER_MAX_PAGES_CAP", "many"},
		{"CRAWLER_CONCURRENCY", "0"},
		{"CRAWLER_DELAY", "-1s"},
		{"CRAWLER_DELAY", "soon"},
		{"CRAWLER_MAX_BODY_BYTES", "10"},
		{"CRAWLER_CHUNK_TOKENS", "4"},
		{"CRAWLER_CHUNK_OVERLAP", "200"},
		{"CRAWLER_LEASE", "10ms"},
		{"KGS_LOG_LEVEL", "loud"},
		{"KGS_EMBED_PROVIDER", "magic"},
	} {
		t.Run(tc.key+"="+tc.value, func(t *testing.T) {
			env := base()
			env[tc.key] = tc.value
			_, err := load(t, env)
			if err == nil {
				t.Fatalf("got no error, want one naming %s", tc.key)
			}
			name := tc.key
			if strings.HasPrefix(name, "KGS_EMBED") {
				name = "KGS_EMBED_"
			}
			if !strings.Contains(err.Error(), name) {
				t.Errorf("error %q does not name %s", err, tc.key)
			}
		})
	}
}
