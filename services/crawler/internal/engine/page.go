package engine

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/kgsearch/kgsearch/pkg/store"
	"github.com/kgsearch/kgsearch/services/crawler/internal/canon"
	"github.com/kgsearch/kgsearch/services/crawler/internal/fetch"
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
	Detail   string             `json:"detail,omitempty"` // script_rendered: what shows the page is an empty shell
	Chunks   int                `json:"chunks"`
	Timings  map[string]float64 `json:"stage_ms"`
}

const maxPageRedirects = 5

// CrawlPage fetches and indexes one page synchronously, through the same
// page step as a crawl. Redirects are followed on the same host (www and bare
// host count as one) up to 5 hops; the document is stored under the final URL.
func (e *Engine) CrawlPage(ctx context.Context, rawURL string, tags []string) (PageResult, error) {
	c, err := canon.Seed(rawURL, e.cfg.Canon)
	if err != nil {
		return PageResult{}, &PageError{Field: "url", Reason: "invalid_url", Err: err}
	}
	seed, _ := url.Parse(c)
	scope := []string{seed.Hostname()}
	var stages StageTimes
	for hop := 0; ; hop++ {
		u, _ := url.Parse(c)
		if err := e.checkTarget(ctx, u); err != nil {
			return PageResult{}, err
		}
		prev, err := e.previous(ctx, c)
		if err != nil {
			return PageResult{}, err
		}
		d := e.runPage(ctx, pageJob{u: u, req: fetch.Request{URL: c}, prev: prev, tags: tags})
		stages.add(d.stages)
		if d.out.reason == SkipRedirect {
			if c, err = e.followRedirect(u, d.resp.Location, scope, hop); err != nil {
				return PageResult{}, err
			}
			continue
		}
		e.countEnd(d.out)
		if err := pageFailure(ctx, c, d); err != nil {
			return PageResult{}, err
		}
		return PageResult{Document: d.result.Document, Outcome: d.result.Outcome, Detail: d.out.detail, Chunks: d.result.Chunks, Timings: stages.asMap()}, nil
	}
}

// followRedirect returns the next URL of a single-page crawl: in scope and
// within maxPageRedirects hops.
func (e *Engine) followRedirect(u *url.URL, location string, scope []string, hop int) (string, error) {
	if hop >= maxPageRedirects {
		return "", &PageError{Reason: "redirect", Err: fmt.Errorf("more than %d redirects", maxPageRedirects)}
	}
	next, err := canon.Resolve(u, location, e.cfg.Canon)
	if err != nil {
		return "", &PageError{Reason: SkipRedirectOutOfScope, Err: fmt.Errorf("redirect to %q: %w", location, err)}
	}
	nu, _ := url.Parse(next)
	if !canon.InScope(nu, scope) {
		return "", &PageError{Reason: SkipRedirectOutOfScope, Err: fmt.Errorf("redirect to %s leaves %s", next, scope[0])}
	}
	return next, nil
}

// pageFailure turns a page step that did not store the page into the error
// POST /pages answers: the caller's context error, a store or embedding
// error as it is (a server-side failure), or a PageError the client can act on.
func pageFailure(ctx context.Context, c string, d pageDone) error {
	out := d.out
	switch {
	case out.state == "":
		return ctx.Err()
	case out.state == store.FrontierDone:
		return nil
	case out.reason == FailStore || out.reason == FailEmbed:
		return out.err
	case d.resp != nil && strings.HasPrefix(out.reason, "http_"):
		return &PageError{Reason: out.reason, Err: fmt.Errorf("%s answered HTTP %d", c, d.resp.Status)}
	}
	return &PageError{Reason: out.reason, Err: out.err}
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
