package embed

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kgsearch/kgsearch/pkg/envconf"
)

func TestConfigValidate(t *testing.T) {
	onnx := Config{ModelDir: "/m", ORTLib: "/lib.so"}
	http := Config{Provider: "openai", Model: "m", BaseURL: "http://127.0.0.1:1"}
	with := func(c Config, f func(*Config)) Config { f(&c); return c }
	tests := []struct {
		name string
		cfg  Config
		want string // "" = valid
	}{
		{"onnx defaults", onnx, ""},
		{"provider case and spaces", with(onnx, func(c *Config) { c.Provider = " ONNX " }), ""},
		{"openai", http, ""},
		{"ollama", with(http, func(c *Config) { c.Provider = "ollama" }), ""},
		{"unknown provider", with(onnx, func(c *Config) { c.Provider = "bert" }), `Provider "bert" is unknown`},
		{"onnx without ModelDir", Config{ORTLib: "/lib.so"}, "ModelDir is empty"},
		{"onnx without ORTLib", Config{ModelDir: "/m"}, "ORTLib is empty"},
		{"negative dims", with(onnx, func(c *Config) { c.Dims = -1 }), "Dims is -1"},
		{"max tokens too small", with(onnx, func(c *Config) { c.MaxTokens = 1 }), "MaxTokens is 1"},
		{"negative threads", with(onnx, func(c *Config) { c.Threads = -2 }), "Threads is -2"},
		{"negative sessions", with(onnx, func(c *Config) { c.Sessions = -1 }), "Sessions is -1"},
		{"negative batch size", with(onnx, func(c *Config) { c.BatchSize = -1 }), "BatchSize is -1"},
		{"batch tokens below max tokens", with(onnx, func(c *Config) { c.BatchTokens = 100 }), "BatchTokens (100) is below MaxTokens (256)"},
		{"http without model", with(http, func(c *Config) { c.Model = "" }), "Model is empty"},
		{"http without base URL", with(http, func(c *Config) { c.BaseURL = "" }), "BaseURL"},
		{"http base URL without scheme", with(http, func(c *Config) { c.BaseURL = "127.0.0.1:11434" }), "BaseURL"},
		{"http negative timeout", with(http, func(c *Config) { c.Timeout = -time.Second }), "Timeout is -1s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Validate() = %v, want an error containing %q", err, tt.want)
			}
			if tt.want != "" {
				if _, err := New(tt.cfg, nil); err == nil {
					t.Errorf("New accepted a config Validate rejects")
				}
			}
		})
	}
}

func TestNewPicksProvider(t *testing.T) {
	for _, tt := range []struct {
		provider string
		want     string
	}{{"openai", "*embed.OpenAI"}, {"ollama", "*embed.Ollama"}, {"OpenAI", "*embed.OpenAI"}} {
		e, err := New(Config{Provider: tt.provider, Model: "m", BaseURL: "http://127.0.0.1:9"}, nil)
		if err != nil {
			t.Fatalf("New(%s): %v", tt.provider, err)
		}
		if got := typeName(e); got != tt.want {
			t.Errorf("New(%s) = %s, want %s", tt.provider, got, tt.want)
		}
	}
}

func typeName(e Embedder) string {
	switch e.(type) {
	case *OpenAI:
		return "*embed.OpenAI"
	case *Ollama:
		return "*embed.Ollama"
	case *ONNX:
		return "*embed.ONNX"
	}
	return "other"
}

func TestConfigFromEnv(t *testing.T) {
	env := map[string]string{
		"KGS_EMBED_PROVIDER": "ollama", "KGS_EMBED_MODEL": "nomic-embed-text", "KGS_EMBED_DIMS": "768",
		"KGS_EMBED_BASE_URL": "http://127.0.0.1:11434", "KGS_EMBED_API_KEY": "k", "KGS_EMBED_BATCH_SIZE": "16",
		"KGS_EMBED_TIMEOUT": "5s", "KGS_EMBED_MAX_RETRIES": "2", "KGS_EMBED_MODEL_DIR": "/m", "KGS_ORT_LIB": "/l",
		"KGS_EMBED_THREADS": "3", "KGS_EMBED_SESSIONS": "2", "KGS_EMBED_MAX_TOKENS": "128", "KGS_EMBED_BATCH_TOKENS": "999",
		"KGS_EMBED_MODEL_FILE": "model.int8.onnx",
	}
	r := envconf.FromMap(env)
	got := FromEnv(r)
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	want := Config{Provider: "ollama", Model: "nomic-embed-text", Dims: 768, BaseURL: "http://127.0.0.1:11434",
		APIKey: "k", BatchSize: 16, Timeout: 5 * time.Second, MaxRetries: 2, ModelDir: "/m", ORTLib: "/l",
		Threads: 3, Sessions: 2, MaxTokens: 128, BatchTokens: 999, ModelFile: "model.int8.onnx"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("FromEnv (-want +got):\n%s", diff)
	}
	// KGS_EMBED_URL is an alias of KGS_EMBED_BASE_URL, which wins when both are set.
	for _, tt := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"KGS_EMBED_URL": "http://a"}, "http://a"},
		{map[string]string{"KGS_EMBED_URL": "http://a", "KGS_EMBED_BASE_URL": "http://b"}, "http://b"},
	} {
		if got := FromEnv(envconf.FromMap(tt.env)).BaseURL; got != tt.want {
			t.Errorf("BaseURL from %v: got %q, want %q", tt.env, got, tt.want)
		}
	}
	for key, val := range map[string]string{"KGS_EMBED_DIMS": "many", "KGS_EMBED_TIMEOUT": "5"} {
		_, err := ConfigFromEnv(func(k string) string {
			if k == key {
				return val
			}
			return ""
		})
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("ConfigFromEnv with %s=%q: got %v, want an error naming %s", key, val, err, key)
		}
	}
}

func TestCheckCompatible(t *testing.T) {
	a := Model{Name: "all-MiniLM-L6-v2", Dims: 384}
	if err := CheckCompatible(a, a); err != nil {
		t.Errorf("CheckCompatible(same) = %v, want nil", err)
	}
	for _, b := range []Model{{Name: "all-MiniLM-L6-v2", Dims: 768}, {Name: "bge-small-en-v1.5", Dims: 384}} {
		err := CheckCompatible(a, b)
		if !errors.Is(err, ErrModelMismatch) || !strings.Contains(err.Error(), b.Name) {
			t.Errorf("CheckCompatible(%v, %v) = %v, want ErrModelMismatch naming both", a, b, err)
		}
	}
}

func TestCosineAndNormalize(t *testing.T) {
	v := []float32{3, 4}
	Normalize(v)
	if d := maxAbsDiff(v, []float32{0.6, 0.8}); d > 1e-7 {
		t.Errorf("Normalize([3 4]) = %v, want [0.6 0.8]", v)
	}
	zero := []float32{0, 0}
	Normalize(zero)
	if zero[0] != 0 || zero[1] != 0 {
		t.Errorf("Normalize(zero) = %v, want zero", zero)
	}
	tests := []struct {
		a, b []float32
		want float64
	}{
		{[]float32{1, 0}, []float32{0, 1}, 0},
		{[]float32{1, 1}, []float32{2, 2}, 1},
		{[]float32{1, 0}, []float32{-1, 0}, -1},
		{[]float32{1, 0}, []float32{0, 0}, 0},
		{[]float32{1}, []float32{1, 0}, 0},
	}
	for _, tt := range tests {
		if got := Cosine(tt.a, tt.b); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("Cosine(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestPlanBatches(t *testing.T) {
	tests := []struct {
		name      string
		lengths   []int
		rows, tok int
		padded    bool
		want      [][]int
	}{
		{"empty", nil, 4, 100, true, nil},
		{"row limit keeps order", []int{1, 1, 1, 1, 1}, 2, 100, false, [][]int{{0, 1}, {2, 3}, {4}}},
		{"sum limit", []int{60, 50, 40, 10}, 10, 100, false, [][]int{{0}, {1, 2, 3}}},
		{"oversized item alone", []int{10, 500, 10}, 10, 100, false, [][]int{{0}, {1}, {2}}},
		{"padded sorts longest first", []int{5, 50, 6, 40}, 10, 100, true, [][]int{{1, 3}, {2, 0}}},
		{"padded cost is rows x longest", []int{30, 30, 30, 30}, 10, 100, true, [][]int{{0, 1, 2}, {3}}},
		{"padded row limit", []int{3, 3, 3}, 1, 100, true, [][]int{{0}, {1}, {2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := planBatches(tt.lengths, tt.rows, tt.tok, tt.padded)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("planBatches(%v, %d, %d, %v) (-want +got):\n%s", tt.lengths, tt.rows, tt.tok, tt.padded, diff)
			}
		})
	}
}
