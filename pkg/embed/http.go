package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

const (
	maxResponseBytes = 64 << 20
	maxBackoff       = 30 * time.Second
	maxErrorBody     = 512
)

// HTTPError is a response the server refused; retryable statuses (429, 5xx)
// appear here only once the retries are used up.
type HTTPError struct {
	Provider string // "openai" or "ollama"
	Status   int
	Body     string // the start of the response body, API key removed
	Attempts int
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("%s embeddings: HTTP %d %s after %d attempt(s): %s",
		e.Provider, e.Status, http.StatusText(e.Status), e.Attempts, e.Body)
}

// Temporary reports whether a later call may succeed (rate limit or server error).
func (e *HTTPError) Temporary() bool {
	return e.Status == http.StatusTooManyRequests || e.Status >= 500
}

// httpClient is the part the OpenAI and Ollama providers share: batching,
// per-attempt timeouts, retries with backoff, and dimension bookkeeping.
type httpClient struct {
	provider  string
	url       string
	apiKey    string
	model     string
	wantDims  int
	dims      atomic.Int64
	batchSize int
	batchTok  int
	timeout   time.Duration
	retries   int
	backoff   time.Duration
	client    *http.Client
	logger    *slog.Logger
	closed    atomic.Bool
}

func newHTTPClient(cfg Config, provider, url string, logger *slog.Logger) (*httpClient, error) {
	cfg.Provider = provider
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	c := &httpClient{
		provider:  provider,
		url:       url,
		apiKey:    cfg.APIKey,
		model:     cfg.Model,
		wantDims:  cfg.Dims,
		batchSize: cfg.BatchSize,
		batchTok:  cfg.BatchTokens,
		timeout:   cfg.Timeout,
		retries:   max(cfg.MaxRetries, 0),
		backoff:   cfg.RetryBackoff,
		client:    &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()},
		logger:    logger,
	}
	c.dims.Store(int64(cfg.Dims))
	return c, nil
}

func (c *httpClient) info() Model { return Model{Name: c.model, Dims: int(c.dims.Load())} }

func (c *httpClient) close() error {
	c.closed.Store(true)
	c.client.CloseIdleConnections()
	return nil
}

// embed splits texts into batches, sends each with call, and checks the vectors.
func (c *httpClient) embed(ctx context.Context, texts []string, call func(context.Context, []string) ([][]float32, error)) ([][]float32, error) {
	if c.closed.Load() {
		return nil, ErrClosed
	}
	out := make([][]float32, 0, len(texts))
	if len(texts) == 0 {
		return out, nil
	}
	est := make([]int, len(texts))
	for i, t := range texts {
		est[i] = len(t)/4 + 1 // rough tokens per text; servers truncate or refuse beyond their limit
	}
	for _, batch := range planBatches(est, c.batchSize, c.batchTok, false) {
		in := texts[batch[0] : batch[len(batch)-1]+1] // order is kept, so a batch is a range
		vecs, err := call(ctx, in)
		if err != nil {
			return nil, err
		}
		if len(vecs) != len(in) {
			return nil, fmt.Errorf("%s embeddings: got %d vectors for %d texts", c.provider, len(vecs), len(in))
		}
		for _, v := range vecs {
			if err := c.checkDims(len(v)); err != nil {
				return nil, err
			}
			Normalize(v)
		}
		out = append(out, vecs...)
	}
	return out, nil
}

func (c *httpClient) checkDims(n int) error {
	if n == 0 {
		return fmt.Errorf("%s embeddings: model %s returned an empty vector", c.provider, c.model)
	}
	if c.dims.CompareAndSwap(0, int64(n)) {
		return nil
	}
	if d := c.dims.Load(); int(d) != n {
		what := "earlier responses had"
		if c.wantDims > 0 {
			what = "Dims is configured as"
		}
		return fmt.Errorf("%w: %s model %s returned %d dimensions, %s %d", ErrModelMismatch, c.provider, c.model, n, what, d)
	}
	return nil
}

// post sends body as JSON and decodes the answer into out, retrying 429, 5xx,
// transport errors and per-attempt timeouts with exponential backoff.
func (c *httpClient) post(ctx context.Context, body, out any) error {
	payload, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("encode %s embeddings request: %w", c.provider, err)
	}
	for attempt := 1; ; attempt++ {
		status, retryAfter, err := c.attempt(ctx, payload, out)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s embeddings: %w", c.provider, ctx.Err())
		}
		var he *HTTPError
		retryable := !errors.As(err, &he) || he.Temporary()
		if errors.Is(err, errDecode) {
			retryable = false
		}
		if he != nil {
			he.Attempts = attempt
		}
		if !retryable || attempt > c.retries {
			return err
		}
		delay := c.delay(attempt, retryAfter)
		c.logger.Warn("embedding request failed, retrying", "provider", c.provider, "url", c.url,
			"attempt", attempt, "status", status, "delay", delay, "err", err)
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%s embeddings: %w (while waiting to retry after: %w)", c.provider, ctx.Err(), err)
		case <-t.C:
		}
	}
}

var errDecode = errors.New("undecodable response")

// attempt makes one request; it returns the HTTP status (0 if none) and the
// server's Retry-After delay, if any.
func (c *httpClient) attempt(ctx context.Context, payload []byte, out any) (int, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(payload))
	if err != nil {
		return 0, 0, fmt.Errorf("build %s embeddings request: %w", c.provider, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return 0, 0, fmt.Errorf("%s embeddings: POST %s: %w", c.provider, c.url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return resp.StatusCode, 0, fmt.Errorf("%s embeddings: read response from %s: %w", c.provider, c.url, err)
	}
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, retryAfter(resp.Header.Get("Retry-After")), &HTTPError{
			Provider: c.provider, Status: resp.StatusCode, Body: c.scrub(body),
		}
	}
	if len(body) > maxResponseBytes {
		return resp.StatusCode, 0, fmt.Errorf("%s embeddings: %w: response from %s exceeds %d bytes", c.provider, errDecode, c.url, maxResponseBytes)
	}
	if err := json.Unmarshal(body, out); err != nil {
		return resp.StatusCode, 0, fmt.Errorf("%s embeddings: %w from %s: %w", c.provider, errDecode, c.url, err)
	}
	return resp.StatusCode, 0, nil
}

// scrub shortens an error body for messages and removes the API key if echoed.
func (c *httpClient) scrub(body []byte) string {
	s := strings.TrimSpace(string(body))
	if c.apiKey != "" {
		s = strings.ReplaceAll(s, c.apiKey, "[redacted]")
	}
	if len(s) > maxErrorBody {
		s = s[:maxErrorBody] + "..."
	}
	return s
}

// delay is the wait before retry number attempt: the server's Retry-After when
// given, else backoff x 2^(attempt-1) with jitter, at most maxBackoff.
func (c *httpClient) delay(attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return min(retryAfter, maxBackoff)
	}
	d := c.backoff << min(attempt-1, 20)
	if d <= 0 || d > maxBackoff {
		d = maxBackoff
	}
	return d/2 + rand.N(d/2+1) //nolint:gosec // G404: backoff jitter, not a secret
}

// retryAfter parses a Retry-After header: delay-seconds or an HTTP date.
func retryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}
