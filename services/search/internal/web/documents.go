package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/kgsearch/kgsearch/pkg/apiclient"
)

// domainRemoval is the notice on the documents page a site's deletion returns to
// (POST/redirect/GET: the counts come in the redirect's query).
type domainRemoval struct {
	Domain string
	N      int
	More   bool   // documents of the host were left when the time bound was reached
	Left   string // what the page knows of them: "12 more remain", "more than 50 remain"
}

// Text is the notice's sentence.
func (r domainRemoval) Text() string {
	switch {
	case r.More:
		return fmt.Sprintf("Deleted %s of %s so far; %s.", docCount(r.N), r.Domain, r.Left)
	case r.N == 0:
		return r.Domain + " had no stored documents; nothing was deleted."
	}
	return fmt.Sprintf("Deleted %s of %s, with their chunks and their entries in the graph.", docCount(r.N), r.Domain)
}

func docCount(n int) string {
	if n == 1 {
		return "1 document"
	}
	return strconv.Itoa(n) + " documents"
}

// domainDeleteError is a refused or failed deletion of a site's documents, shown
// on the documents page above the filter (which keeps the host).
type domainDeleteError struct {
	Domain   string
	Message  string
	Field    string   // "domain" when the host is at fault: the notice links the filter's input
	Conflict bool     // a queued or running crawl covers the host
	Job      crawlRef // that crawl, when known
	Deleted  int      // documents deleted before the error
}

// crawlRef names a crawl for a link; URL and Status are empty when only the id is known.
type crawlRef struct{ ID, URL, Status string }

// conflictJob finds the job id in the crawler's 409 detail ("crawl <id> covers …").
var conflictJob = regexp.MustCompile(`\bcrawl ([A-Za-z0-9_-]{1,64}) covers\b`)

// removalNotice reads the notice of a finished site deletion from the page's
// query (removed=N, more=1, domain=HOST, checked by readDocumentsQuery); nil when
// there is none.
func removalNotice(v url.Values, domain string) *domainRemoval {
	n, err := strconv.Atoi(v.Get("removed"))
	if !v.Has("removed") || err != nil || domain == "" {
		return nil
	}
	return &domainRemoval{Domain: domain, N: n, More: v.Get("more") == "1"}
}

// left says what the listed page tells of the documents still there.
func left(v documentsView) string {
	switch {
	case v.After != "":
		return "more remain"
	case len(v.Docs) == 0:
		return "none are listed now"
	case v.NextAfter != "":
		return fmt.Sprintf("more than %d remain", len(v.Docs))
	case len(v.Docs) == 1:
		return "1 more remains"
	}
	return fmt.Sprintf("%d more remain", len(v.Docs))
}

func documentsURL(domain string) string {
	if domain == "" {
		return "/documents"
	}
	return "/documents?domain=" + url.QueryEscape(domain)
}

// deleteDomain deletes the documents of the host in the form, batch after batch
// of the crawler's DELETE /api/v1/documents?domain=, for at most Deps.DeleteBudget,
// then returns to the documents page filtered by the host with a notice of the
// count (and a button for the next batches when some are left). A refusal (a crawl
// covering the host, a host the crawler does not accept) is a notice on that page.
func (w *Web) deleteDomain(c *gin.Context) {
	if !w.mutating(c) {
		return
	}
	domain := strings.TrimSpace(c.PostForm("domain"))
	view := documentsView{Domain: domain, Back: documentsURL(domain)}
	if domain == "" || len(domain) > 253 {
		view.DeleteError = &domainDeleteError{Domain: domain, Field: "domain",
			Message: "name the host whose documents to delete, such as docs.python.org (at most 253 characters), and filter by it first."}
		w.renderDocuments(c, http.StatusBadRequest, view)
		return
	}
	if w.d.Crawler == nil {
		w.fail(c, http.StatusServiceUnavailable, "", "This search service has no crawler configured.", "/documents")
		return
	}
	n, more, host, err := w.deleteBatches(c.Request.Context(), domain)
	if err != nil {
		w.domainDeleteFailed(c, view, n, host, err)
		return
	}
	q := url.Values{"domain": {host}, "removed": {strconv.Itoa(n)}}
	if more {
		q.Set("more", "1")
	}
	c.Redirect(http.StatusSeeOther, "/documents?"+q.Encode())
}

// deleteBatches calls the crawler until it says no documents of the host are
// left, or until the next batch would end after the budget (the last batch's time
// is the estimate). It returns the count deleted, whether more are left, and the
// host as the crawler names it (normalised).
func (w *Web) deleteBatches(ctx context.Context, domain string) (deleted int, more bool, host string, err error) {
	start, host := time.Now(), domain
	for {
		t0 := time.Now()
		cctx, cancel := context.WithTimeout(ctx, max(w.d.Timeout, w.d.DeleteBudget))
		d, err := w.d.Crawler.DeleteDomain(cctx, domain, 0)
		cancel()
		if err != nil {
			return deleted, false, host, fmt.Errorf("delete documents of %s: %w", domain, err)
		}
		deleted += d.Deleted
		if d.Domain != "" {
			host = d.Domain
		}
		if !d.More {
			return deleted, false, host, nil
		}
		if time.Since(start)+time.Since(t0) > w.d.DeleteBudget {
			return deleted, true, host, nil
		}
	}
}

// domainDeleteFailed shows why the site's documents were not (all) deleted on the
// documents page filtered by the host: the crawl covering it (409), the host the
// crawler refused (400, naming the filter's input), or that the crawler cannot be
// reached. Never a 5xx page for a refusal.
func (w *Web) domainDeleteFailed(c *gin.Context, view documentsView, n int, host string, err error) {
	e := &domainDeleteError{Domain: host, Deleted: n}
	view.DeleteError = e
	ce, ok := crawlerRefusal(err)
	if !ok {
		w.d.Logger.Warn("web: delete a site's documents", "err", err)
		e.Message = "The crawler cannot be reached right now; try again in a moment."
		w.renderDocuments(c, http.StatusServiceUnavailable, view)
		return
	}
	e.Message = ce.Detail
	switch {
	case ce.Status == http.StatusConflict:
		e.Conflict = true
		e.Job = w.coveringCrawl(c.Request.Context(), host, ce.Detail)
	case ce.Status == http.StatusBadRequest && (ce.Field == "domain" || ce.Field == ""):
		e.Field = "domain"
	}
	w.renderDocuments(c, ce.Status, view)
}

// coveringCrawl finds the queued or running crawl the crawler's 409 is about: in
// the crawls list, the one the detail names, else one started on the host or a
// parent domain of it; failing that, the id in the detail alone.
func (w *Web) coveringCrawl(ctx context.Context, domain, detail string) crawlRef {
	ctx, cancel := context.WithTimeout(ctx, w.d.Timeout)
	defer cancel()
	jobs, err := w.d.Crawler.Crawls(ctx, 100)
	if err != nil {
		w.d.Logger.Warn("web: list crawls", "err", err)
	}
	var byHost *apiclient.CrawlStatus
	for i := range jobs {
		j := &jobs[i]
		if j.Terminal() || j.ID == "" {
			continue
		}
		if strings.Contains(detail, j.ID) {
			return crawlRef{ID: j.ID, URL: j.URL, Status: j.Status}
		}
		if byHost == nil && hostCovers(j.URL, domain) {
			byHost = j
		}
	}
	if byHost != nil {
		return crawlRef{ID: byHost.ID, URL: byHost.URL, Status: byHost.Status}
	}
	if m := conflictJob.FindStringSubmatch(detail); m != nil {
		return crawlRef{ID: m[1]}
	}
	return crawlRef{}
}

// hostCovers reports whether a crawl started at start covers domain: the same
// host or a subdomain of it, www. aside.
func hostCovers(start, domain string) bool {
	u, err := url.Parse(start)
	if err != nil || u.Hostname() == "" {
		return false
	}
	h := strings.TrimPrefix(strings.ToLower(u.Hostname()), "www.")
	d := strings.TrimPrefix(strings.ToLower(domain), "www.")
	return d == h || strings.HasSuffix(d, "."+h)
}

// renderDocuments shows the first page of the host's documents under view's
// notice (a refused site deletion); a list that cannot be read is said instead.
func (w *Web) renderDocuments(c *gin.Context, status int, view documentsView) {
	if w.d.Crawler == nil {
		view.Disabled = "This search service has no crawler configured."
	} else if len(view.Domain) <= 253 {
		ctx, cancel := context.WithTimeout(c.Request.Context(), w.d.Timeout)
		defer cancel()
		p, err := w.d.Crawler.Documents(ctx, view.Domain, "", 50)
		if err != nil {
			w.d.Logger.Warn("web: list documents", "err", err)
			view.Disabled = "The list of documents cannot be read from the crawler right now."
		} else {
			view.Docs, view.NextAfter = p.Documents, p.NextAfter
		}
	}
	w.render(c, status, "documents", "Documents", "documents", view)
}

// Before says what was deleted before the error ("" when nothing was).
func (e *domainDeleteError) Before() string {
	if e.Deleted == 0 {
		return ""
	}
	verb := "were"
	if e.Deleted == 1 {
		verb = "was"
	}
	return fmt.Sprintf("%s of %s %s deleted before this.", docCount(e.Deleted), e.Domain, verb)
}
