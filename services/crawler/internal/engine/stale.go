package engine

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/kgsearch/kgsearch/pkg/store"
	"github.com/kgsearch/kgsearch/services/crawler/internal/fetch"
)

// Stale documents: crawl jobs (jobRun.handle, jobRun.redirect) and POST
// /api/v1/pages (CrawlPage) remove the stored version of a page when the
// page's answer now says it has no content of its own to keep: gone (404,
// 410), noindex, no text, an empty shell that scripts fill, a body that is no
// longer a page to index (content_type), or a redirect to another URL. A page
// not fetched (robots.txt, blocklist, SSRF guard), failing for another reason
// (5xx, timeout, network) or too large to read (too_large: its content still
// exists) keeps it: its current state is unknown.

// staleWhy says, for the done reasons of a page with nothing to store, why
// its stored version goes.
var staleWhy = map[string]string{
	DoneNoIndex:        "the page now asks not to be indexed (robots noindex)",
	DoneEmpty:          "the page now has no text to index",
	DoneScriptRendered: "the page is now rendered by JavaScript in the browser",
}

// staleOutcome decides, for a page with a stored version prev that did not
// redirect, whether its answer d removes that version; when it does, the
// removal is done and its outcome returned (done as deleted_<why>, or failed
// when the store refused).
func (e *Engine) staleOutcome(ctx context.Context, prev *store.Document, d pageDone) (outcome, bool) {
	switch {
	case d.resp != nil && (d.resp.Status == http.StatusNotFound || d.resp.Status == http.StatusGone):
		return e.removeStored(ctx, prev, d.out.reason, fmt.Sprintf("the page answered HTTP %d", d.resp.Status)), true
	case d.out.state == store.FrontierSkipped && d.out.reason == fetch.ReasonContentType:
		return e.removeStored(ctx, prev, fetch.ReasonContentType, contentTypeWhy(d)), true
	case d.out.state == store.FrontierDone:
		if why := staleWhy[d.out.reason]; why != "" {
			if d.out.detail != "" {
				why += " (" + d.out.detail + ")"
			}
			return e.removeStored(ctx, prev, d.out.reason, why), true
		}
	}
	return outcome{}, false
}

// contentTypeWhy says in words that the URL no longer serves a page: the
// media type the fetcher refused from the headers, or the one the answer
// declared or its body showed when extraction refused it.
func contentTypeWhy(d pageDone) string {
	mt := ""
	var skip *fetch.SkipError
	switch {
	case errors.As(d.out.err, &skip) && skip.MediaType != "":
		mt = skip.MediaType
	case d.resp != nil && d.resp.ContentType != "":
		mt = fetch.MediaType(d.resp.ContentType)
	case d.resp != nil:
		mt = fetch.MediaType(http.DetectContentType(d.resp.Body))
	}
	if mt == "" {
		return "the URL no longer serves an HTML or text page"
	}
	return fmt.Sprintf("the URL now serves %s, not an HTML or text page", clipDetail(mt))
}

// clipDetail bounds a value the remote server chose before it goes into a
// detail.
func clipDetail(s string) string {
	const n = 100
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// removeStored removes the stored version of a page (document, chunks and,
// through the outbox, its kg document) because of what the page answers now:
// why is the reason the page would have ended with (http_404, noindex,
// redirect, ...), detail says it in words. The page ends done as deleted_<why>.
func (e *Engine) removeStored(ctx context.Context, prev *store.Document, why, detail string) outcome {
	bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if _, err := e.st.DeleteDocument(bg, prev.ID, &store.DeletePayload{URL: prev.URL}); err != nil && !errors.Is(err, store.ErrNotFound) {
		return outcome{state: store.FrontierFailed, reason: FailStore, err: err}
	}
	return outcome{state: store.FrontierDone, reason: deletedReason(why), detail: detail + "; its stored version was removed"}
}
