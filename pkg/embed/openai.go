package embed

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
)

// OpenAI calls an OpenAI-compatible embeddings endpoint, POST {BaseURL}/v1/embeddings
// (OpenAI, Ollama's /v1, vLLM, Hugging Face TEI, llama.cpp server). Vectors are
// L2-normalised on arrival so every provider returns unit vectors.
type OpenAI struct {
	c *httpClient
}

// NewOpenAI checks cfg (Model and BaseURL are required) and returns the provider;
// it makes no request until Embed.
func NewOpenAI(cfg Config, logger *slog.Logger) (*OpenAI, error) {
	base := strings.TrimRight(cfg.BaseURL, "/")
	url := base + "/v1/embeddings"
	if strings.HasSuffix(base, "/v1") {
		url = base + "/embeddings"
	}
	c, err := newHTTPClient(cfg, ProviderOpenAI, url, logger)
	if err != nil {
		return nil, err
	}
	return &OpenAI{c: c}, nil
}

type openAIRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
}

type openAIResponse struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

// Embed implements Embedder.
func (o *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return o.c.embed(ctx, texts, func(ctx context.Context, in []string) ([][]float32, error) {
		var resp openAIResponse
		req := openAIRequest{Model: o.c.model, Input: in, EncodingFormat: "float"}
		if err := o.c.post(ctx, req, &resp); err != nil {
			return nil, err
		}
		out := make([][]float32, len(in))
		for _, d := range resp.Data {
			if d.Index < 0 || d.Index >= len(in) || out[d.Index] != nil {
				return nil, fmt.Errorf("openai embeddings: response has bad or repeated index %d for %d inputs", d.Index, len(in))
			}
			out[d.Index] = d.Embedding
		}
		for i, v := range out {
			if v == nil {
				return nil, fmt.Errorf("openai embeddings: response has no vector for input %d of %d", i, len(in))
			}
		}
		return out, nil
	})
}

// Info implements Embedder.
func (o *OpenAI) Info() Model { return o.c.info() }

// Close implements Embedder.
func (o *OpenAI) Close() error { return o.c.close() }
