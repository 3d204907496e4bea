package embed

import (
	"context"
	"log/slog"
	"strings"
)

// Ollama calls Ollama's native embeddings endpoint, POST {BaseURL}/api/embed,
// asking the server to truncate texts longer than the model's context.
type Ollama struct {
	c *httpClient
}

// NewOllama checks cfg (Model and BaseURL are required) and returns the provider;
// it makes no request until Embed.
func NewOllama(cfg Config, logger *slog.Logger) (*Ollama, error) {
	c, err := newHTTPClient(cfg, ProviderOllama, strings.TrimRight(cfg.BaseURL, "/")+"/api/embed", logger)
	if err != nil {
		return nil, err
	}
	return &Ollama{c: c}, nil
}

type ollamaRequest struct {
	Model    string   `json:"model"`
	Input    []string `json:"input"`
	Truncate bool     `json:"truncate"`
}

type ollamaResponse struct {
	Embeddings [][]float32 `json:"embeddings"`
}

// Embed implements Embedder.
func (o *Ollama) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return o.c.embed(ctx, texts, func(ctx context.Context, in []string) ([][]float32, error) {
		var resp ollamaResponse
		if err := o.c.post(ctx, ollamaRequest{Model: o.c.model, Input: in, Truncate: true}, &resp); err != nil {
			return nil, err
		}
		return resp.Embeddings, nil
	})
}

// Info implements Embedder.
func (o *Ollama) Info() Model { return o.c.info() }

// Close implements Embedder.
func (o *Ollama) Close() error { return o.c.close() }
