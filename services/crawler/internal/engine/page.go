package engine

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/kgsearch/kgsearch/pkg/store"
	"github.com/kgsearch/kgsearch/services/crawler/internal/canon"
	"github.com/kgsearch/kgsearch/services/crawler/internal/fetch"
	"github.com/kgsearch/kgsearch/services/crawler/internal/htmltext"
	"github.com/kgsearch/kgsearch/services/crawler/internal/pipeline"
)

// PageError is a page that could not be indexed for a reason the caller can
// act on (refused address, blocklisted domain, robots.txt, HTTP error,
// content type). Field is the request field at fault, when there is one.
type PageError struct {
	Field  string
	Reason string // skip or failure reason, as in job counters
	Err    error
}

func (e *PageError) Error() string { return e.Reason + ": " + e.Err.Error() }
func (e *PageError) Unwrap() error { return e.Err }

// PageResult is what CrawlPage stored.
type PageResult struct {
	Document store.Document     `json:"document"`
	Outcome  pipeline.Outcome   `json:"outcome"`
	Chunks   int                `json:"chunks"`
	Timings  map[string]float64 `json:"stage_ms"`
}

const maxPageRedirects = 5

// CrawlPage fetches and indexes one page synchronously. Redirects are followed
// on the same host (www and bare host count as one) up to 5 hops; the
// document is stored under the final URL.
func (e *Engine) CrawlPage(ctx context.Context, rawURL string, tags []string) (PageResult, error) {
	c, err := canon.Canonicalize(strings.TrimSpace(rawURL), e.cfg.Canon)
	if err != nil {
		return PageResult{}, &PageError{Field: "url", Reason: "invalid_url", Err: err}
	}
	seed, _ := url.Parse(c)
	scope := []string{seed.Hostname()}
	timings := map[string]float64{}
	for hop := 0; ; hop++ {
		u, _ := url.Parse(c)
		if err := e.checkTarget(ctx, u); err != nil {
			return PageResult{}, err
		}
		var prev *store.Document
		if d, err := e.st.DocumentByURL(ctx, c); err == nil {
			prev = &d
		} else if !errors.Is(err, store.ErrNotFound) {
			return PageResult{}, err
		}
		fetchedAt := time.Now().UTC()
		resp, err := e.fetcher.Fetch(ctx, fetch.Request{URL: c})
		if resp != nil {
			timings["fetch"] += ms(resp.Duration)
			e.m.fetched.Inc()
			e.m.bytes.Add(float64(len(resp.Body)))
			e.m.fetchDur.Observe(resp.Duration.Seconds())
		}
		if err != nil {
			out := classifyFetchError(ctx, err)
			if ctx.Err() != nil {
				return PageResult{}, ctx.Err()
			}
			return PageResult{}, &PageError{Reason: out.reason, Err: err}
		}
		if resp.Redirect() {
			if hop >= maxPageRedirects {
				return PageResult{}, &PageError{Reason: "redirect", Err: fmt.Errorf("more than %d redirects", maxPageRedirects)}
			}
			next, err := canon.Resolve(u, resp.Location, e.cfg.Canon)
			if err != nil {
				return PageResult{}, &PageError{Reason: SkipRedirectOutOfScope, Err: fmt.Errorf("redirect to %q: %w", resp.Location, err)}
			}
			nu, _ := url.Parse(next)
			if !canon.InScope(nu, scope) {
				return PageResult{}, &PageError{Reason: SkipRedirectOutOfScope, Err: fmt.Errorf("redirect to %s leaves %s", next, seed.Hostname())}
			}
			c = next
			continue
		}
		if resp.Status < 200 || resp.Status > 299 {
			return PageResult{}, &PageError{Reason: fmt.Sprintf("http_%d", resp.Status), Err: fmt.Errorf("%s answered HTTP %d", c, resp.Status)}
		}
		page, took, err := pipeline.Extract(u, resp.ContentType, resp.Body, resp.Header)
		timings["extract"] = ms(took)
		if errors.Is(err, htmltext.ErrUnsupportedType) {
			return PageResult{}, &PageError{Reason: fetch.ReasonContentType, Err: err}
		}
		if err != nil {
			return PageResult{}, &PageError{Reason: FailExtract, Err: err}
		}
		res, err := e.pipe.Index(ctx, pipeline.Page{
			URL: c, Extracted: page, ETag: resp.Header.Get("ETag"), LastModified: resp.Header.Get("Last-Modified"),
			FetchedAt: fetchedAt, Tags: tags, Previous: prev,
		})
		timings["chunk"], timings["embed"], timings["store"] = ms(res.Timings.Chunk), ms(res.Timings.Embed), ms(res.Timings.Store)
		if err != nil {
			return PageResult{}, err
		}
		if res.Outcome == pipeline.Stored {
			e.m.stored.Inc()
			e.m.chunks.Add(float64(res.Chunks))
		}
		return PageResult{Document: res.Document, Outcome: res.Outcome, Chunks: res.Chunks, Timings: timings}, nil
	}
}

// checkTarget refuses blocklisted domains and internal addresses before any request.
func (e *Engine) checkTarget(ctx context.Context, u *url.URL) error {
	if blocked, err := e.block.blocked(ctx, u.Hostname()); err != nil {
		return err
	} else if blocked {
		return &PageError{Field: "url", Reason: SkipBlocked, Err: fmt.Errorf("%s is on the blocklist", u.Hostname())}
	}
	if e.guard != nil {
		if err := e.guard.CheckURL(u); err != nil {
			return &PageError{Field: "url", Reason: SkipSSRF, Err: fmt.Errorf("%w; internal addresses are refused unless the operator allows them in CRAWLER_ALLOW_HOSTS", err)}
		}
	}
	return nil
}

// CheckSeed refuses a job's start URL when it is blocklisted or internal.
func (e *Engine) CheckSeed(ctx context.Context, seed string) error {
	u, err := url.Parse(seed)
	if err != nil {
		return &PageError{Field: "url", Reason: FilterInvalid, Err: err}
	}
	return e.checkTarget(ctx, u)
}
