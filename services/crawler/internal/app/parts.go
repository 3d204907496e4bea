package app

import (
	"fmt"

	"github.com/kgsearch/kgsearch/pkg/embed"
	"github.com/kgsearch/kgsearch/services/crawler/internal/chunk"
	"github.com/kgsearch/kgsearch/services/crawler/internal/config"
	"github.com/kgsearch/kgsearch/services/crawler/internal/fetch"
	"github.com/kgsearch/kgsearch/services/crawler/internal/netguard"
	"github.com/kgsearch/kgsearch/services/crawler/internal/pipeline"
)

// PageParts are what turns a URL into an indexed page: the one SSRF guard, the
// fetcher that dials through it, and the index pipeline (chunk → embed → store).
// The crawler and kgregraph, which must re-extract pages exactly as the crawl
// did, build them here from the same configuration.
type PageParts struct {
	Guard   *netguard.Guard
	Fetcher *fetch.Fetcher
	Pipe    *pipeline.Pipeline
}

// NewPageParts builds the page parts over the store st and the embedder.
func NewPageParts(cfg config.Config, st pipeline.Store, embedder embed.Embedder) (PageParts, error) {
	splitter, err := chunk.New(chunk.Options{MaxTokens: cfg.ChunkTokens, Overlap: cfg.ChunkOverlap, MinTokens: min(48, cfg.ChunkTokens)})
	if err != nil {
		return PageParts{}, fmt.Errorf("start chunker: %w", err)
	}
	guard, err := netguard.New(netguard.Options{Allow: cfg.AllowHosts, ResponseHeaderTimeout: cfg.Timeout})
	if err != nil {
		return PageParts{}, fmt.Errorf("CRAWLER_ALLOW_HOSTS: %w", err)
	}
	fetcher, err := fetch.New(fetch.Config{
		UserAgent: cfg.UserAgent, Guard: guard, Timeout: cfg.Timeout, MaxBodyBytes: cfg.MaxBodyBytes,
		HostParallel: cfg.HostParallel, Delay: cfg.Delay, MaxCrawlDelay: cfg.MaxCrawlDelay,
		Retries: cfg.Retries, RetryBackoff: cfg.RetryBackoff,
	})
	if err != nil {
		return PageParts{}, fmt.Errorf("start fetcher: %w", err)
	}
	pipe := pipeline.New(st, embedder, pipeline.ChunkSplitter{S: splitter}, fmt.Sprintf("%d/%d", cfg.ChunkTokens, cfg.ChunkOverlap))
	return PageParts{Guard: guard, Fetcher: fetcher, Pipe: pipe}, nil
}
