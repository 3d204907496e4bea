// Package regraph re-delivers stored documents to the kg service, so the knowledge
// graph can be rebuilt with the current extractor without crawling and embedding
// again (`make regraph`, command services/crawler/cmd/kgregraph).
//
// The kg payload carries what the store does not keep — the code spans and links of
// the page's HTML — so it cannot be rebuilt from the stored chunks alone. For each
// stored document the page is fetched again and extracted and split exactly as the
// crawl did (pipeline.KGPayload); a page whose content hash or chunk count no longer
// matches the stored version is reported as changed and not sent (a recrawl updates
// it, store and graph together). Nothing is written to MariaDB and nothing is
// embedded: the chunk ids are the stored ones, so the graph's chunks keep pointing at
// the store's.
package regraph

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/kgsearch/kgsearch/pkg/kgapi"
	"github.com/kgsearch/kgsearch/pkg/store"
	"github.com/kgsearch/kgsearch/services/crawler/internal/fetch"
	"github.com/kgsearch/kgsearch/services/crawler/internal/pipeline"
)

// Documents lists the stored documents (store.Store).
type Documents interface {
	ListDocuments(ctx context.Context, o store.ListOptions) (store.DocumentPage, error)
}

// Fetcher fetches a page (fetch.Fetcher).
type Fetcher interface {
	Fetch(ctx context.Context, req fetch.Request) (*fetch.Response, error)
}

// Payloads rebuilds a stored page's kg payload (pipeline.Pipeline).
type Payloads interface {
	KGPayload(in pipeline.Page) (kgapi.Document, error)
}

// KG ingests a document (kgapi.Client).
type KG interface {
	Ingest(ctx context.Context, doc kgapi.Document) (*kgapi.IngestResponse, error)
}

// Options selects and paces the documents.
type Options struct {
	Domain  string // only documents of this domain; all when empty
	Workers int    // documents in flight; default 2
	DryRun  bool   // rebuild and check every payload, send nothing
}

// Report counts what Run did.
type Report struct {
	Documents int      `json:"documents"` // stored documents considered
	Delivered int      `json:"delivered"` // ingested by kg (with DryRun: checked)
	Chunks    int      `json:"chunks"`    // chunks of the delivered documents
	Changed   []string `json:"changed"`   // URLs whose page no longer matches the store (recrawl them)
	Failed    []string `json:"failed"`    // URL: reason
	TookMS    int64    `json:"took_ms"`
}

// Run re-delivers every stored document (of opt.Domain) to kg. A document that
// cannot be fetched, extracted or ingested is listed in Failed and the others go
// on; only listing the store or a cancelled ctx stops the run with an error.
func Run(ctx context.Context, docs Documents, f Fetcher, p Payloads, kg KG, opt Options, logger *slog.Logger) (Report, error) {
	if opt.Workers <= 0 {
		opt.Workers = 2
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	start := time.Now()
	rep := Report{Changed: []string{}, Failed: []string{}}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(opt.Workers)
	after := ""
	for {
		page, err := docs.ListDocuments(gctx, store.ListOptions{After: after, Limit: 500, Domain: opt.Domain})
		if err != nil {
			_ = g.Wait()
			return rep, fmt.Errorf("list stored documents: %w", err)
		}
		for _, d := range page.Documents {
			rep.Documents++
			g.Go(func() error {
				chunks, err := deliver(gctx, d, f, p, kg, opt.DryRun)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					rep.Delivered++
					rep.Chunks += chunks
				case errors.Is(err, pipeline.ErrChanged):
					rep.Changed = append(rep.Changed, d.URL)
					logger.Warn("page changed since it was stored; not re-delivered", "url", d.URL, "err", err)
				case gctx.Err() != nil:
					return gctx.Err()
				default:
					rep.Failed = append(rep.Failed, d.URL+": "+err.Error())
					logger.Warn("re-delivery failed", "url", d.URL, "err", err)
				}
				if n := rep.Delivered; n%50 == 0 && err == nil {
					logger.Info("re-delivering", "delivered", n, "documents", rep.Documents)
				}
				return nil
			})
		}
		if page.NextAfter == "" {
			break
		}
		after = page.NextAfter
	}
	err := g.Wait()
	rep.TookMS = time.Since(start).Milliseconds()
	if err == nil {
		err = ctx.Err()
	}
	return rep, err
}

// deliver fetches, extracts and re-sends one stored document; it returns the number
// of chunks sent.
func deliver(ctx context.Context, d store.Document, f Fetcher, p Payloads, kg KG, dry bool) (int, error) {
	u, err := url.Parse(d.URL)
	if err != nil {
		return 0, fmt.Errorf("parse stored URL: %w", err)
	}
	resp, err := f.Fetch(ctx, fetch.Request{URL: d.URL})
	if err != nil {
		return 0, fmt.Errorf("fetch: %w", err)
	}
	if resp.Status < 200 || resp.Status > 299 {
		return 0, fmt.Errorf("fetch: HTTP %d (%w: the page is gone or moved; recrawl the site)", resp.Status, pipeline.ErrChanged)
	}
	page, _, err := pipeline.Extract(u, resp.ContentType, resp.Body, resp.Header)
	if err != nil {
		return 0, fmt.Errorf("extract: %w", err)
	}
	doc, err := p.KGPayload(pipeline.Page{URL: d.URL, Extracted: page, Previous: &d})
	if err != nil {
		return 0, err
	}
	if dry {
		return len(doc.Chunks), nil
	}
	if _, err := kg.Ingest(ctx, doc); err != nil {
		return 0, fmt.Errorf("kg ingest: %w", err)
	}
	return len(doc.Chunks), nil
}
