package embed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/url"
	"runtime"
	"strings"
	"time"

	"github.com/kgsearch/kgsearch/pkg/envconf"
)

// Embedder turns texts into vectors. Implementations are safe for concurrent use.
type Embedder interface {
	// Embed returns one vector per text, in input order. An empty slice gives an
	// empty result; an empty string is a valid text.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Info names the model and its dimensions. For HTTP providers without a
	// configured Dims, Dims is 0 until the first successful Embed (see Probe).
	Info() Model
	// Close releases the model or connections; Embed after Close fails with ErrClosed.
	Close() error
}

// Model identifies the vectors an Embedder produces. Vectors are only comparable
// when both fields match.
type Model struct {
	Name string `json:"name"`
	Dims int    `json:"dims"`
}

func (m Model) String() string { return fmt.Sprintf("%s (%d dimensions)", m.Name, m.Dims) }

var (
	// ErrClosed is returned by Embed after Close.
	ErrClosed = errors.New("embedder is closed")
	// ErrModelMismatch means vectors of one model were about to meet vectors of another.
	ErrModelMismatch = errors.New("embedding model mismatch")
)

// CheckCompatible refuses to mix vectors: stored is what an index was built with,
// current what the running embedder produces.
func CheckCompatible(stored, current Model) error {
	if stored.Name != current.Name || stored.Dims != current.Dims {
		return fmt.Errorf("%w: the store holds vectors of %s but the embedder produces %s; "+
			"re-embed the corpus or configure the original model", ErrModelMismatch, stored, current)
	}
	return nil
}

// Start builds the configured embedder and finds its model's dimensions (asking an
// HTTP provider once when they are not configured). The caller closes the embedder.
func Start(ctx context.Context, cfg Config, logger *slog.Logger) (Embedder, Model, error) {
	e, err := New(cfg, logger)
	if err != nil {
		return nil, Model{}, fmt.Errorf("start embedder: %w", err)
	}
	m, err := Probe(ctx, e)
	if err != nil {
		_ = e.Close()
		return nil, Model{}, fmt.Errorf("start embedder: %w", err)
	}
	if logger != nil {
		logger.Info("embedding model ready", "model", m.Name, "dims", m.Dims)
	}
	return e, m, nil
}

// Probe returns e's model, embedding one short text first when the dimensions are
// not known yet (HTTP providers without Config.Dims).
func Probe(ctx context.Context, e Embedder) (Model, error) {
	if m := e.Info(); m.Dims > 0 {
		return m, nil
	}
	if _, err := e.Embed(ctx, []string{"dimension probe"}); err != nil {
		return Model{}, fmt.Errorf("probe embedding dimensions: %w", err)
	}
	return e.Info(), nil
}

// Provider names accepted in Config.Provider.
const (
	ProviderONNX   = "onnx"
	ProviderOpenAI = "openai"
	ProviderOllama = "ollama"
)

// DefaultONNXModel is the model name recorded for the default ONNX provider.
const DefaultONNXModel = "all-MiniLM-L6-v2"

// Config selects and tunes a provider. Zero values take the defaults listed.
type Config struct {
	// Provider is "onnx" (default), "openai" or "ollama".
	Provider string
	// Model is the model name: recorded for onnx (default "all-MiniLM-L6-v2", or
	// "all-MiniLM-L6-v2-qint8" for ModelFile model.qint8.onnx; set it when ModelDir
	// holds another model), requested from the server for openai and ollama
	// (required there).
	Model string
	// Dims, when set, is checked against what the model produces; for HTTP
	// providers it also makes Info exact before the first call.
	Dims int

	// ModelDir (onnx) holds the ONNX file and vocab.txt (KGS_EMBED_MODEL_DIR).
	ModelDir string
	// ModelFile (onnx) is the ONNX file inside ModelDir; default "model.onnx" (fp32).
	// model.sh also installs "model.qint8.onnx": int8 weights, about half the CPU
	// time, cosine >= 0.97 to fp32.
	ModelFile string
	// ORTLib (onnx) is the path of libonnxruntime.so (KGS_ORT_LIB).
	ORTLib string
	// MaxTokens (onnx) truncates each text to this many tokens including [CLS]
	// and [SEP]; default 256, the length all-MiniLM-L6-v2 was trained with.
	MaxTokens int
	// Threads (onnx) is ONNX Runtime's intra-op thread count; default GOMAXPROCS.
	Threads int
	// Sessions (onnx) is the number of model sessions run in parallel; default 1.
	Sessions int

	// BatchSize caps texts per model call or request; default 32 (onnx), 64 (HTTP).
	BatchSize int
	// BatchTokens caps tokens per batch: padded rows x longest row for onnx
	// (default MaxTokens), estimated as bytes/4 for HTTP (default 32768).
	BatchTokens int

	// BaseURL (openai, ollama) is the server, e.g. http://127.0.0.1:11434 or
	// https://api.openai.com/v1 (a trailing /v1 is accepted).
	BaseURL string
	// APIKey (openai) is sent as a bearer token; it is never logged.
	APIKey string
	// Timeout bounds one HTTP attempt; default 60s.
	Timeout time.Duration
	// MaxRetries is the number of retries after a 429, 5xx, or timeout; default 4;
	// negative disables retries.
	MaxRetries int
	// RetryBackoff is the first retry delay, doubled each time (with jitter, at
	// most 30s); default 500ms. A Retry-After header takes precedence.
	RetryBackoff time.Duration
}

// withDefaults fills zero values.
func (c Config) withDefaults() Config {
	if c.Provider == "" {
		c.Provider = ProviderONNX
	}
	c.Provider = strings.ToLower(strings.TrimSpace(c.Provider))
	if c.Provider == ProviderONNX {
		if c.ModelFile == "" {
			c.ModelFile = "model.onnx"
		}
		if c.Model == "" {
			c.Model = DefaultONNXModel
			if c.ModelFile != "model.onnx" { // a variant's vectors differ slightly: name it
				c.Model += "-" + strings.TrimSuffix(strings.TrimPrefix(c.ModelFile, "model."), ".onnx")
			}
		}
		if c.MaxTokens == 0 {
			c.MaxTokens = 256
		}
		if c.Threads == 0 {
			c.Threads = runtime.GOMAXPROCS(0)
		}
		if c.Sessions == 0 {
			c.Sessions = 1
		}
		if c.BatchSize == 0 {
			c.BatchSize = 32
		}
		if c.BatchTokens == 0 {
			// Small batches use the CPU caches best: on this 2-core box a 256-token
			// chunk costs 56 ms CPU in batches of 1, 62 in 4s, 73 in 32s
			// (BenchmarkONNXEmbed). So a batch holds one full-length text, or
			// several short ones (queries) adding up to the same padded size.
			c.BatchTokens = c.MaxTokens
		}
		return c
	}
	if c.BatchSize == 0 {
		c.BatchSize = 64
	}
	if c.BatchTokens == 0 {
		c.BatchTokens = 32768
	}
	if c.Timeout == 0 {
		c.Timeout = 60 * time.Second
	}
	if c.MaxRetries == 0 {
		c.MaxRetries = 4
	}
	if c.RetryBackoff == 0 {
		c.RetryBackoff = 500 * time.Millisecond
	}
	return c
}

// Validate reports the first bad field, by name, after defaults are applied.
func (c Config) Validate() error {
	c = c.withDefaults()
	switch {
	case c.Dims < 0:
		return fmt.Errorf("embed config: Dims is %d: want 0 (from the model) or a positive size", c.Dims)
	case c.BatchSize < 1:
		return fmt.Errorf("embed config: BatchSize is %d: want at least 1", c.BatchSize)
	case c.BatchTokens < 1:
		return fmt.Errorf("embed config: BatchTokens is %d: want at least 1", c.BatchTokens)
	}
	switch c.Provider {
	case ProviderONNX:
		switch {
		case c.ModelDir == "":
			return errors.New("embed config: ModelDir is empty: set it (KGS_EMBED_MODEL_DIR) to the folder " +
				"with model.onnx and vocab.txt that deploy/local/model.sh installs")
		case c.ORTLib == "":
			return errors.New("embed config: ORTLib is empty: set it (KGS_ORT_LIB) to the path of " +
				"libonnxruntime.so that deploy/local/model.sh installs")
		case c.MaxTokens < 2 || c.MaxTokens > 8192:
			return fmt.Errorf("embed config: MaxTokens is %d: want 2..8192 (and at most the model's positions)", c.MaxTokens)
		case c.Threads < 1:
			return fmt.Errorf("embed config: Threads is %d: want at least 1", c.Threads)
		case c.Sessions < 1:
			return fmt.Errorf("embed config: Sessions is %d: want at least 1", c.Sessions)
		case c.BatchTokens < c.MaxTokens:
			return fmt.Errorf("embed config: BatchTokens (%d) is below MaxTokens (%d): one text must fit a batch",
				c.BatchTokens, c.MaxTokens)
		}
	case ProviderOpenAI, ProviderOllama:
		if c.Model == "" {
			return fmt.Errorf("embed config: Model is empty: the %s provider needs the model name to request", c.Provider)
		}
		u, err := url.Parse(c.BaseURL)
		if c.BaseURL == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("embed config: BaseURL %q is not an http(s) URL: the %s provider needs its server, "+
				"e.g. http://127.0.0.1:11434", c.BaseURL, c.Provider)
		}
		if c.Timeout < 0 {
			return fmt.Errorf("embed config: Timeout is %s: want a positive duration", c.Timeout)
		}
		if c.RetryBackoff < 0 {
			return fmt.Errorf("embed config: RetryBackoff is %s: want a positive duration", c.RetryBackoff)
		}
	default:
		return fmt.Errorf("embed config: Provider %q is unknown: want %q, %q or %q",
			c.Provider, ProviderONNX, ProviderOpenAI, ProviderOllama)
	}
	return nil
}

// New builds the provider cfg.Provider names. logger may be nil.
func New(cfg Config, logger *slog.Logger) (Embedder, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	switch cfg.Provider {
	case ProviderOpenAI:
		return NewOpenAI(cfg, logger)
	case ProviderOllama:
		return NewOllama(cfg, logger)
	default:
		return NewONNX(cfg, logger)
	}
}

// FromEnv reads a Config from environment variables through r, which records
// every malformed value (check r.Err after the last read, as the services do for
// their whole configuration):
//
//	KGS_EMBED_PROVIDER  onnx | openai | ollama        KGS_EMBED_MODEL      model name
//	KGS_EMBED_DIMS      expected dimensions           KGS_EMBED_MODEL_DIR  onnx model folder
//	KGS_ORT_LIB         libonnxruntime.so path        KGS_EMBED_MODEL_FILE onnx file in the folder
//	KGS_EMBED_MAX_TOKENS onnx truncation
//	KGS_EMBED_THREADS   onnx intra-op threads         KGS_EMBED_SESSIONS   onnx parallel sessions
//	KGS_EMBED_BATCH_SIZE texts per batch              KGS_EMBED_BATCH_TOKENS tokens per batch
//	KGS_EMBED_BASE_URL  HTTP server (alias KGS_EMBED_URL)
//	KGS_EMBED_API_KEY   bearer token (or KGS_EMBED_API_KEY_FILE)
//	KGS_EMBED_TIMEOUT   per-attempt timeout, e.g. 30s KGS_EMBED_MAX_RETRIES retries
//
// Unset variables leave the zero value, which New replaces by the provider's default.
func FromEnv(r *envconf.Reader) Config {
	return Config{
		Provider:  r.String("KGS_EMBED_PROVIDER", ""),
		Model:     r.String("KGS_EMBED_MODEL", ""),
		ModelDir:  r.String("KGS_EMBED_MODEL_DIR", ""),
		ORTLib:    r.String("KGS_ORT_LIB", ""),
		ModelFile: r.String("KGS_EMBED_MODEL_FILE", ""),
		// KGS_EMBED_URL: the shorter alias the docs use.
		BaseURL:     r.String("KGS_EMBED_BASE_URL", r.String("KGS_EMBED_URL", "")),
		APIKey:      r.Secret("KGS_EMBED_API_KEY"),
		Dims:        r.Int("KGS_EMBED_DIMS", 0),
		MaxTokens:   r.Int("KGS_EMBED_MAX_TOKENS", 0),
		Threads:     r.Int("KGS_EMBED_THREADS", 0),
		Sessions:    r.Int("KGS_EMBED_SESSIONS", 0),
		BatchSize:   r.Int("KGS_EMBED_BATCH_SIZE", 0),
		BatchTokens: r.Int("KGS_EMBED_BATCH_TOKENS", 0),
		MaxRetries:  r.Int("KGS_EMBED_MAX_RETRIES", 0),
		Timeout:     r.Duration("KGS_EMBED_TIMEOUT", 0),
	}
}

// ConfigFromEnv is FromEnv for programs and benchmarks that read nothing else from
// the environment: it reads through getenv (os.Getenv) and returns the malformed
// values as the error.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	r := envconf.FromFunc(getenv)
	c := FromEnv(r)
	return c, r.Err()
}

// Normalize scales v to unit length in place (a zero vector stays zero), so that
// cosine similarity is a dot product (the embedders here normalise what they
// return with it; kgeval the stored vectors it reads).
func Normalize(v []float32) {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(sum))
	for i := range v {
		v[i] *= inv
	}
}

// Cosine is the cosine similarity of two vectors of equal length (0 when either
// is zero or the lengths differ).
func Cosine(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}
