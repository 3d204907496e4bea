package engine

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/kgsearch/kgsearch/pkg/store"
	"github.com/kgsearch/kgsearch/services/crawler/internal/canon"
	"github.com/kgsearch/kgsearch/services/crawler/internal/fetch"
	"github.com/kgsearch/kgsearch/services/crawler/internal/netguard"
	"github.com/kgsearch/kgsearch/services/crawler/internal/pipeline"
)

// PageError is a page that could not be indexed for a reason the caller can
// act on (refused address, blocklisted domain, robots.txt, HTTP error,
// content type). Field is the request field at fault, when there is one.
type PageError struct {
	Field  string
	Reason string // skip or failure reason, as in job counters
	Err    error
	// Removed lists the stored versions the request removed before it
	// failed (URLs on the way that now redirect).
	Removed []Removal
}

func (e *PageError) Error() string { return e.Reason + ": " + e.Err.Error() }
func (e *PageError) Unwrap() error { return e.Err }

// PageResult is what CrawlPage did with the page.
type PageResult struct {
	Document store.Document   `json:"document"`
	Outcome  pipeline.Outcome `json:"outcome"`
	// Reason says why, when Outcome is deleted, in the words of a crawl's
	// deleted_by_reason (http_404, noindex, content_type, redirect, ...).
	Reason string `json:"reason,omitempty"`
	// Detail says what shows a script_rendered page is an empty shell, why
	// a deleted page's stored version was removed, or that an unchanged
	// page's tags were replaced by the request's.
	Detail  string             `json:"detail,omitempty"`
	Chunks  int                `json:"chunks"`
	Timings map[string]float64 `json:"stage_ms"`
	// Removed lists the stored versions this request removed: the page's
	// own (Outcome deleted) and those of URLs on the way that now redirect
	// to another one.
	Removed []Removal `json:"removed,omitempty"`
}

// Removal is a stored version that a single-page crawl removed.
type Removal struct {
	ID     string `json:"id"`
	URL    string `json:"url"`
	Title  string `json:"title"`
	Reason string `json:"reason"`
	Detail string `json:"detail"`
}

// Deleted is the Outcome of a page whose stored version was removed.
const Deleted pipeline.Outcome = DoneDeleted

const maxPageRedirects = 5

// CrawlPage fetches and indexes one page synchronously, through the same
// page step as a crawl. Redirects are followed on the same host (www and bare
// host count as one) up to 5 hops; the document is stored under the final URL.
// Like a crawl, it removes a stored version the page's answer leaves nothing
// to keep of (staleOutcome), and that of a URL that now redirects to another
// one; the result lists what it removed.
func (e *Engine) CrawlPage(ctx context.Context, rawURL string, tags []string) (PageResult, error) {
	c, err := canon.Seed(rawURL, e.cfg.Canon)
	if err != nil {
		return PageResult{}, &PageError{Field: "url", Reason: "invalid_url", Err: err}
	}
	seed, _ := url.Parse(c)
	scope := []string{seed.Hostname()}
	var stages StageTimes
	var removed []Removal
	for hop := 0; ; hop++ {
		u, _ := url.Parse(c)
		if err := e.checkTarget(ctx, u); err != nil {
			return PageResult{}, withRemoved(err, removed)
		}
		prev, err := e.previous(ctx, c)
		if err != nil {
			return PageResult{}, err
		}
		d := e.runPage(ctx, pageJob{u: u, req: fetch.Request{URL: c}, prev: prev, tags: tags})
		stages.add(d.stages)
		if d.out.reason == SkipRedirect {
			next, err := e.followRedirect(u, d.location, scope)
			if prev != nil && (err != nil || next != c) {
				out := e.removeRedirected(ctx, prev, d.location, next, err)
				e.countEnd(out)
				if out.state != store.FrontierDone {
					return PageResult{}, out.err
				}
				removed = append(removed, removal(prev, out))
				if err != nil { // out of scope: the page itself is gone
					return deletedResult(prev, out, stages, removed), nil
				}
			}
			if err == nil && hop >= maxPageRedirects {
				err = &PageError{Reason: SkipRedirect, Err: fmt.Errorf("more than %d redirects", maxPageRedirects)}
			}
			if err != nil {
				return PageResult{}, withRemoved(err, removed)
			}
			c = next
			continue
		}
		if prev != nil {
			if out, ok := e.staleOutcome(ctx, prev, d); ok {
				d.out = out
			}
		}
		e.countEnd(d.out)
		if err := pageFailure(ctx, c, d); err != nil {
			return PageResult{}, withRemoved(err, removed)
		}
		if _, ok := deletedWhy(d.out.reason); ok {
			removed = append(removed, removal(prev, d.out))
			return deletedResult(prev, d.out, stages, removed), nil
		}
		doc := d.result.Document
		if d.result.Outcome == pipeline.Stored {
			// The store sets created_at and updated_at: answer them as stored.
			if stored, err := e.previous(ctx, c); err == nil && stored != nil {
				doc = *stored
			}
		}
		return PageResult{Document: doc, Outcome: d.result.Outcome, Detail: d.out.detail, Chunks: d.result.Chunks,
			Timings: stages.asMap(), Removed: removed}, nil
	}
}

// removeRedirected removes the stored version of a URL that now redirects:
// to next, another URL in scope, or (err) to location outside the scope.
func (e *Engine) removeRedirected(ctx context.Context, prev *store.Document, location, next string, err error) outcome {
	if err != nil {
		return e.removeStored(ctx, prev, SkipRedirectOutOfScope, fmt.Sprintf("the URL now redirects to %s, outside the crawl's scope", clipDetail(location)))
	}
	return e.removeStored(ctx, prev, SkipRedirect, "the URL now redirects to "+next)
}

// removal describes the removal of prev that ended as out.
func removal(prev *store.Document, out outcome) Removal {
	why, _ := deletedWhy(out.reason)
	return Removal{ID: prev.ID, URL: prev.URL, Title: prev.Title, Reason: why, Detail: out.detail}
}

// deletedResult is the answer for a page whose stored version prev was
// removed (out): its id, URL and title, no chunks.
func deletedResult(prev *store.Document, out outcome, stages StageTimes, removed []Removal) PageResult {
	why, _ := deletedWhy(out.reason)
	doc := store.Document{ID: prev.ID, URL: prev.URL, Title: prev.Title}
	return PageResult{Document: doc, Outcome: Deleted, Reason: why, Detail: out.detail, Timings: stages.asMap(), Removed: removed}
}

// withRemoved adds to a PageError what the request removed before it failed,
// so that the answer does not hide it.
func withRemoved(err error, removed []Removal) error {
	var pe *PageError
	if len(removed) == 0 || !errors.As(err, &pe) {
		return err
	}
	cp := *pe
	cp.Removed = append(cp.Removed, removed...)
	return &cp
}

// followRedirect returns the next URL of a single-page crawl: the redirect's
// target when it is in scope; an error when it is not.
func (e *Engine) followRedirect(u *url.URL, location string, scope []string) (string, error) {
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
			return &PageError{Field: "url", Reason: SkipSSRF, Err: ssrfRefusal(err)}
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

// ssrfRefusal is what the user reads about a refused internal address: what
// was refused and why (netguard.BlockedError, without the fetch's wrapping)
// and the setting that allows it.
func ssrfRefusal(err error) error {
	var be *netguard.BlockedError
	if errors.As(err, &be) {
		err = be
	}
	return fmt.Errorf("%w; internal addresses are refused unless the operator allows them in CRAWLER_ALLOW_HOSTS", err)
}
