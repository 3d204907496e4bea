package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeVector is what the fake servers answer for a text: dims values derived from
// the text, so tests can tell which vector belongs to which text.
func fakeVector(text string, dims int) []float32 {
	v := make([]float32, dims)
	for i := range v {
		v[i] = float32(len(text)%7 + i + 1)
	}
	v[0] += float32(len(text))
	return v
}

func unit(v []float32) []float32 {
	out := append([]float32(nil), v...)
	Normalize(out)
	return out
}

// fakeServer is an embeddings server for tests. Each request first consults
// script (by attempt number, 1-based); a nil step answers normally.
type fakeServer struct {
	t      *testing.T
	dims   int
	script func(attempt int, w http.ResponseWriter, r *http.Request) bool // true: handled

	mu       sync.Mutex
	attempts int
	batches  [][]string
	paths    []string
	auth     []string
	bodies   []map[string]any
}

func (f *fakeServer) handler(format string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw := new(bytes.Buffer)
		_, _ = raw.ReadFrom(r.Body)
		var body map[string]any
		if err := json.Unmarshal(raw.Bytes(), &body); err != nil {
			http.Error(w, "bad json", http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.attempts++
		attempt := f.attempts
		f.paths = append(f.paths, r.URL.Path)
		f.auth = append(f.auth, r.Header.Get("Authorization"))
		f.bodies = append(f.bodies, body)
		f.mu.Unlock()
		if f.script != nil && f.script(attempt, w, r) {
			return
		}
		var input []string
		for _, x := range body["input"].([]any) {
			input = append(input, x.(string))
		}
		f.mu.Lock()
		f.batches = append(f.batches, input)
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch format {
		case "openai":
			type item struct {
				Object    string    `json:"object"`
				Index     int       `json:"index"`
				Embedding []float32 `json:"embedding"`
			}
			data := make([]item, 0, len(input))
			for i := len(input) - 1; i >= 0; i-- { // reversed: clients must use index
				data = append(data, item{"embedding", i, fakeVector(input[i], f.dims)})
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": body["model"]})
		case "ollama":
			vecs := make([][]float32, len(input))
			for i, s := range input {
				vecs[i] = fakeVector(s, f.dims)
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"model": body["model"], "embeddings": vecs})
		}
	})
}

func (f *fakeServer) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.attempts
}

func startFake(t *testing.T, format string, dims int, script func(int, http.ResponseWriter, *http.Request) bool) (*fakeServer, string) {
	t.Helper()
	f := &fakeServer{t: t, dims: dims, script: script}
	srv := httptest.NewServer(f.handler(format))
	t.Cleanup(srv.Close)
	return f, srv.URL
}

func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("text number %d %s", i, strings.Repeat("x", i%13))
	}
	return out
}

func testHTTPConfig(provider, url string) Config {
	return Config{Provider: provider, BaseURL: url, Model: "test-model", APIKey: "sk-secret-123",
		RetryBackoff: time.Millisecond, Timeout: 2 * time.Second}
}

func TestHTTPProvidersEmbed(t *testing.T) {
	for _, provider := range []string{ProviderOpenAI, ProviderOllama} {
		t.Run(provider, func(t *testing.T) {
			f, url := startFake(t, provider, 8, nil)
			cfg := testHTTPConfig(provider, url)
			e, err := New(cfg, nil)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			defer e.Close()
			if got := e.Info(); got != (Model{Name: "test-model", Dims: 0}) {
				t.Errorf("Info before the first call = %+v, want dims 0 (unknown)", got)
			}
			in := texts(150)
			got, err := e.Embed(context.Background(), in)
			if err != nil {
				t.Fatalf("Embed: %v", err)
			}
			if len(got) != len(in) {
				t.Fatalf("got %d vectors, want %d", len(got), len(in))
			}
			for i := range in {
				if d := maxAbsDiff(got[i], unit(fakeVector(in[i], 8))); d > 1e-6 {
					t.Fatalf("vector %d does not belong to text %d (diff %g)", i, i, d)
				}
			}
			var sizes []int
			for _, b := range f.batches {
				sizes = append(sizes, len(b))
			}
			if diff := cmp.Diff([]int{64, 64, 22}, sizes); diff != "" {
				t.Errorf("batch sizes (-want +got):\n%s", diff)
			}
			if got := e.Info(); got != (Model{Name: "test-model", Dims: 8}) {
				t.Errorf("Info after a call = %+v, want dims 8", got)
			}
			wantPath := map[string]string{ProviderOpenAI: "/v1/embeddings", ProviderOllama: "/api/embed"}[provider]
			if f.paths[0] != wantPath {
				t.Errorf("path = %q, want %q", f.paths[0], wantPath)
			}
			if f.bodies[0]["model"] != "test-model" {
				t.Errorf("request model = %v, want test-model", f.bodies[0]["model"])
			}
			if provider == ProviderOpenAI && f.auth[0] != "Bearer sk-secret-123" {
				t.Errorf("Authorization = %q, want the bearer key", f.auth[0])
			}
			if provider == ProviderOllama && f.bodies[0]["truncate"] != true {
				t.Errorf("ollama request truncate = %v, want true", f.bodies[0]["truncate"])
			}
			empty, err := e.Embed(context.Background(), nil)
			if err != nil || len(empty) != 0 || f.count() != 3 {
				t.Errorf("Embed(nil) = %d vectors, %v after %d requests; want 0, nil, no request", len(empty), err, f.count())
			}
			_ = e.Close()
			if _, err := e.Embed(context.Background(), in[:1]); !errors.Is(err, ErrClosed) {
				t.Errorf("Embed after Close: got %v, want ErrClosed", err)
			}
		})
	}
}

func TestOpenAIBaseURLWithV1(t *testing.T) {
	f, url := startFake(t, "openai", 4, nil)
	e, err := NewOpenAI(testHTTPConfig(ProviderOpenAI, url+"/v1/"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Embed(context.Background(), []string{"a"}); err != nil {
		t.Fatal(err)
	}
	if f.paths[0] != "/v1/embeddings" {
		t.Errorf("path = %q, want /v1/embeddings", f.paths[0])
	}
}

func TestHTTPTokenAwareBatches(t *testing.T) {
	f, url := startFake(t, "ollama", 4, nil)
	cfg := testHTTPConfig(ProviderOllama, url)
	cfg.BatchTokens = 300 // ~1200 bytes per request
	e, err := NewOllama(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	in := []string{strings.Repeat("a", 800), strings.Repeat("b", 800), "c", strings.Repeat("d", 2000), "e"}
	got, err := e.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(in) {
		t.Fatalf("got %d vectors, want %d", len(got), len(in))
	}
	var sizes []int
	for _, b := range f.batches {
		sizes = append(sizes, len(b))
	}
	// 201 est. tokens each for a and b; c fits with b; d alone (over the limit); e after.
	if diff := cmp.Diff([]int{1, 2, 1, 1}, sizes); diff != "" {
		t.Errorf("batch sizes (-want +got):\n%s", diff)
	}
}

func TestHTTPRetries(t *testing.T) {
	status := func(codes ...int) func(int, http.ResponseWriter, *http.Request) bool {
		return func(attempt int, w http.ResponseWriter, r *http.Request) bool {
			if attempt > len(codes) {
				return false
			}
			if codes[attempt-1] == http.StatusTooManyRequests {
				w.Header().Set("Retry-After", "0")
			}
			http.Error(w, `{"error":"busy, key sk-secret-123"}`, codes[attempt-1])
			return true
		}
	}
	tests := []struct {
		name       string
		script     func(int, http.ResponseWriter, *http.Request) bool
		maxRetries int
		wantStatus int // 0: success
		wantTries  int
	}{
		{"503 then success", status(503, 503), 4, 0, 3},
		{"429 then success", status(429), 4, 0, 2},
		{"500 until retries are used up", status(500, 500, 500, 500), 2, 500, 3},
		{"400 is not retried", status(400), 4, 400, 1},
		{"401 is not retried", status(401), 4, 401, 1},
		{"retries disabled", status(502), -1, 502, 1},
		{"timeout then success", func(attempt int, w http.ResponseWriter, r *http.Request) bool {
			if attempt == 1 {
				<-r.Context().Done() // hang until the client gives up
				return true
			}
			return false
		}, 4, 0, 2},
		{"malformed JSON is not retried", func(attempt int, w http.ResponseWriter, r *http.Request) bool {
			_, _ = w.Write([]byte(`{"data": [`))
			return true
		}, 4, -1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, url := startFake(t, "openai", 4, tt.script)
			var logs bytes.Buffer
			cfg := testHTTPConfig(ProviderOpenAI, url)
			cfg.MaxRetries = tt.maxRetries
			cfg.Timeout = 200 * time.Millisecond
			e, err := NewOpenAI(cfg, slog.New(slog.NewTextHandler(&logs, nil)))
			if err != nil {
				t.Fatal(err)
			}
			got, err := e.Embed(context.Background(), []string{"one", "two"})
			if f.count() != tt.wantTries {
				t.Errorf("server saw %d requests, want %d", f.count(), tt.wantTries)
			}
			if strings.Contains(logs.String(), "sk-secret-123") {
				t.Errorf("logs contain the API key:\n%s", logs.String())
			}
			switch {
			case tt.wantStatus == 0:
				if err != nil || len(got) != 2 {
					t.Fatalf("Embed = %d vectors, %v; want 2 vectors", len(got), err)
				}
			case tt.wantStatus > 0:
				var he *HTTPError
				if !errors.As(err, &he) {
					t.Fatalf("Embed error = %v, want an *HTTPError", err)
				}
				if he.Status != tt.wantStatus || he.Attempts != tt.wantTries {
					t.Errorf("HTTPError status %d after %d attempts, want %d after %d", he.Status, he.Attempts, tt.wantStatus, tt.wantTries)
				}
				if strings.Contains(err.Error(), "sk-secret-123") || !strings.Contains(err.Error(), "[redacted]") {
					t.Errorf("error %q: want the echoed API key redacted", err)
				}
			default:
				if err == nil {
					t.Fatal("Embed: got no error, want one")
				}
			}
		})
	}
}

func TestHTTPContextDeadline(t *testing.T) {
	f, url := startFake(t, "ollama", 4, func(_ int, w http.ResponseWriter, r *http.Request) bool {
		<-r.Context().Done()
		return true
	})
	cfg := testHTTPConfig(ProviderOllama, url)
	cfg.Timeout = time.Minute
	e, err := NewOllama(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = e.Embed(ctx, []string{"x"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Embed past the caller's deadline: got %v, want context.DeadlineExceeded", err)
	}
	if f.count() != 1 {
		t.Errorf("server saw %d requests, want 1 (no retry after the caller gave up)", f.count())
	}
}

func TestHTTPBadResponses(t *testing.T) {
	reply := func(body string) func(int, http.ResponseWriter, *http.Request) bool {
		return func(_ int, w http.ResponseWriter, _ *http.Request) bool {
			_, _ = w.Write([]byte(body))
			return true
		}
	}
	tests := []struct {
		name     string
		provider string
		dims     int
		script   func(int, http.ResponseWriter, *http.Request) bool
		want     string
	}{
		{"too few vectors", "ollama", 0, reply(`{"embeddings": [[1,2]]}`), "got 1 vectors for 2 texts"},
		{"ragged dimensions", "ollama", 0, reply(`{"embeddings": [[1,2],[1,2,3]]}`), "returned 3 dimensions"},
		{"configured dims differ", "ollama", 3, reply(`{"embeddings": [[1,2],[3,4]]}`), "Dims is configured as 3"},
		{"empty vector", "ollama", 0, reply(`{"embeddings": [[],[]]}`), "empty vector"},
		{"repeated index", "openai", 0, reply(`{"data": [{"index":0,"embedding":[1]},{"index":0,"embedding":[2]}]}`), "repeated index 0"},
		{"missing index", "openai", 0, reply(`{"data": [{"index":1,"embedding":[1]}]}`), "no vector for input 0"},
		{"index out of range", "openai", 0, reply(`{"data": [{"index":5,"embedding":[1]},{"index":0,"embedding":[1]}]}`), "index 5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, url := startFake(t, tt.provider, 2, tt.script)
			cfg := testHTTPConfig(tt.provider, url)
			cfg.Dims = tt.dims
			e, err := New(cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			_, err = e.Embed(context.Background(), []string{"a", "b"})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Embed: got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestProbe(t *testing.T) {
	f, url := startFake(t, "openai", 6, nil)
	e, err := New(testHTTPConfig(ProviderOpenAI, url), nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Probe(context.Background(), e)
	if err != nil || m != (Model{Name: "test-model", Dims: 6}) {
		t.Fatalf("Probe = %+v, %v; want test-model with 6 dims", m, err)
	}
	if _, err := Probe(context.Background(), e); err != nil || f.count() != 1 {
		t.Errorf("second Probe: %v after %d requests, want no new request", err, f.count())
	}
}

func TestRetryDelay(t *testing.T) {
	c := &httpClient{backoff: 100 * time.Millisecond}
	for attempt := 1; attempt <= 12; attempt++ {
		full := min(100*time.Millisecond<<(attempt-1), maxBackoff)
		for range 20 {
			d := c.delay(attempt, 0)
			if d < full/2 || d > full {
				t.Fatalf("delay(%d) = %s, want within [%s, %s]", attempt, d, full/2, full)
			}
		}
	}
	if d := c.delay(1, 3*time.Second); d != 3*time.Second {
		t.Errorf("delay with Retry-After 3s = %s, want 3s", d)
	}
	if d := c.delay(1, time.Hour); d != maxBackoff {
		t.Errorf("delay with Retry-After 1h = %s, want the %s cap", d, maxBackoff)
	}
	tests := map[string]time.Duration{"": 0, "7": 7 * time.Second, "-1": 0, "soon": 0,
		time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat): 0}
	for in, want := range tests {
		if got := retryAfter(in); got != want {
			t.Errorf("retryAfter(%q) = %s, want %s", in, got, want)
		}
	}
	future := retryAfter(time.Now().Add(10 * time.Second).UTC().Format(http.TimeFormat))
	if math.Abs(future.Seconds()-10) > 2 {
		t.Errorf("retryAfter(now+10s as a date) = %s, want about 10s", future)
	}
}
