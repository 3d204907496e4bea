package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/kgsearch/kgsearch/pkg/apiclient"
	"github.com/kgsearch/kgsearch/pkg/docid"
	"github.com/kgsearch/kgsearch/pkg/httpserver"
)

// validID matches crawl job ids (UUIDs) and document ids.
var validID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// crawlForm is the start-a-crawl form.
type crawlForm struct {
	URL, MaxDepth, MaxPages, Include, Exclude, Tags string
	Robots, Sitemap, Prune                          bool
}

type crawlsView struct {
	Form       crawlForm
	Jobs       []jobView
	Error      string
	ErrorField string // id of the form control to fix ("" when none)
	ErrorLabel string // how the message names the control
	Disabled   string // why crawls cannot be started from here
	Running    bool   // a listed crawl has not ended: static/app.js refreshes its row
	At         string // when the list was read, for the page without that script
	// The list's filter from the URL: one status ("" for all) and how many.
	Status     string
	Limit      int
	Statuses   []string    // the filter's choices
	ParamError *paramError // a URL parameter the page cannot use: no list is shown
	ListURL    string      // this list as JSON (GET /crawls.json), for static/app.js
	PollMS     int64       // how often app.js asks ListURL for new crawls
}

// The crawls list's URL parameters.
var (
	crawlsQuery    = pageQuery{Path: "/crawls", Known: []string{"status", "limit"}}
	crawlsJSONSpec = httpserver.QuerySpec{Names: []string{"status", "limit"},
		Instead: map[string]string{"state": "status", "k": "limit", "n": "limit", "size": "limit", "count": "limit", "per_page": "limit"}}
	crawlStatuses = []string{"queued", "running", "done", "failed", "cancelled"}
	// noParams is the URL of a JSON route that takes none (GET /crawls/{id}/status).
	noParams = httpserver.QuerySpec{Unknown: "this route takes no URL parameters"}
)

// The crawls list shows crawlsLimit crawls unless its URL asks for another
// number, at most maxCrawlsLimit.
const crawlsLimit, maxCrawlsLimit = 20, 100

// crawlsFilter reads the list's status and limit; a value the list cannot use is
// a paramError.
func crawlsFilter(v url.Values) (status string, limit int, bad *paramError) {
	status = strings.ToLower(strings.TrimSpace(v.Get("status")))
	if status == "all" {
		status = ""
	}
	if status != "" && !slices.Contains(crawlStatuses, status) {
		return "", crawlsLimit, crawlsQuery.bad(v, "status",
			"status is one of queued, running, done, failed or cancelled; leave it out to list crawls of every status.")
	}
	limit, ok := intParam(v, "limit", crawlsLimit, 1, maxCrawlsLimit)
	if !ok {
		return status, crawlsLimit, crawlsQuery.bad(v, "limit",
			fmt.Sprintf("limit is how many crawls to list, a whole number from 1 to %d (%d when left out).", maxCrawlsLimit, crawlsLimit))
	}
	return status, limit, nil
}

// listURL is the JSON list of the crawls shown with this filter.
func listURL(status string, limit int) string {
	q := url.Values{}
	if status != "" {
		q.Set("status", status)
	}
	if limit != crawlsLimit {
		q.Set("limit", strconv.Itoa(limit))
	}
	if len(q) == 0 {
		return "/crawls.json"
	}
	return "/crawls.json?" + q.Encode()
}

// crawlFields are the crawl form's controls by request field, with their labels.
var crawlFields = map[string]string{"url": "Start page", "max_depth": "Max depth", "max_pages": "Max pages",
	"include": "Include", "exclude": "Exclude", "tags": "Tags", "respect_robots": "Obey robots.txt", "use_sitemap": "Seed from the sitemap",
	"prune": "Remove pages no longer linked"}

// crawlError is the view of a crawl form refused for field: the crawler names list
// entries as include[2] or tags[0], which the page names as the control and its
// line or entry; a field the form has no control for is named as the crawler
// named it.
func crawlError(f crawlForm, field, msg string) crawlsView {
	v := crawlsView{Form: f, Error: msg}
	base, index, _ := strings.Cut(field, "[")
	label, ok := crawlFields[base]
	if !ok {
		v.ErrorLabel = field
		return v
	}
	v.ErrorField, v.ErrorLabel = base, label
	if n, err := strconv.Atoi(strings.TrimSuffix(index, "]")); err == nil && index != "" {
		unit := "pattern"
		if base == "tags" {
			unit = "tag"
		}
		v.ErrorLabel = fmt.Sprintf("%s (%s %d)", label, unit, n+1)
	}
	return v
}

// jobView is a job with what the page derives from it.
type jobView struct {
	*apiclient.CrawlStatus
	Processed int64
	Total     int64 // processed plus the pages still to do (see pagesLeft): the progress bar's end
	ETA       string
	Reasons   []reasonCount
	Skips     []reasonCount
	Deletions []reasonCount // why stored versions were removed
}

// host is the host of the crawl's start page as the documents list filters by
// it ("" when the URL has none it could use).
func (v jobView) host() string {
	u, err := url.Parse(v.URL)
	if err != nil {
		return ""
	}
	h, _, ok := hostParam(u.Hostname())
	if !ok {
		return ""
	}
	return h
}

// DocsHref is the documents list of the crawl's host, or of every host.
func (v jobView) DocsHref() string { return documentsURL(v.host()) }

// DocsText names that list.
func (v jobView) DocsText() string {
	if h := v.host(); h != "" {
		return "the stored documents of " + h
	}
	return "all stored documents"
}

type reasonCount struct {
	Reason string
	N      int64
}

func defaultCrawlForm() crawlForm {
	return crawlForm{MaxDepth: "2", MaxPages: "50", Robots: true, Sitemap: true}
}

func (w *Web) crawlsPage(c *gin.Context) {
	view := crawlsView{Form: defaultCrawlForm()}
	v, bad := crawlsQuery.read(c.Request)
	if bad == nil {
		view.Status, view.Limit, bad = crawlsFilter(v)
	}
	if bad != nil {
		view.ParamError, view.Limit = bad, crawlsLimit
		w.renderCrawls(c, http.StatusBadRequest, view)
		return
	}
	w.renderCrawls(c, http.StatusOK, view)
}

// renderCrawls lists the latest jobs (of view's filter) under the form; a page
// with a parameter it cannot use lists none.
func (w *Web) renderCrawls(c *gin.Context, status int, view crawlsView) {
	view.Statuses = crawlStatuses
	if view.Limit == 0 {
		view.Limit = crawlsLimit
	}
	view.ListURL, view.PollMS = listURL(view.Status, view.Limit), w.d.CrawlsPoll.Milliseconds()
	if view.ParamError != nil {
		w.render(c, status, "crawls", "Crawls", "crawls", view)
		return
	}
	if w.d.Crawler == nil {
		view.Disabled = "This search service has no crawler configured."
		w.render(c, status, "crawls", "Crawls", "crawls", view)
		return
	}
	ctx, cancel := context.WithTimeout(c.Request.Context(), w.d.Timeout)
	defer cancel()
	jobs, err := w.d.Crawler.CrawlsWithStatus(ctx, view.Status, view.Limit)
	if err != nil {
		w.d.Logger.Warn("web: list crawls", "err", err)
		view.Disabled = "The crawler cannot be reached right now; try again in a moment."
		if status == http.StatusOK {
			status = http.StatusServiceUnavailable
		}
	}
	for i := range jobs {
		view.Jobs = append(view.Jobs, describeJob(&jobs[i]))
		view.Running = view.Running || !jobs[i].Terminal()
	}
	view.At = time.Now().UTC().Format("15:04:05") + " UTC"
	w.render(c, status, "crawls", "Crawls", "crawls", view)
}

// describeJob adds the processed count, the ETA and the sorted reasons.
func describeJob(j *apiclient.CrawlStatus) jobView {
	v := jobView{CrawlStatus: j}
	ct := j.Counters
	v.Processed = ct.Stored + ct.Unchanged + ct.Empty + ct.Deleted
	v.ETA = eta(j, v.Processed)
	v.Total = v.Processed
	if !j.Terminal() {
		v.Total += max(pagesLeft(j, v.Processed), 0)
	}
	v.Reasons = sortedCounts(ct.FailedBy)
	v.Skips = sortedCounts(ct.Skipped)
	v.Deletions = sortedCounts(ct.DeletedBy)
	return v
}

// eta estimates the time left: the pages still allowed by max_pages (at most the
// queued and in-flight URLs) at the job's fetch rate so far. static/app.js
// computes the same from the live counters.
func eta(j *apiclient.CrawlStatus, processed int64) string {
	if j.Terminal() {
		return "finished"
	}
	left := pagesLeft(j, processed)
	if left <= 0 {
		return "almost done"
	}
	if j.Rates.PagesPerSec <= 0 {
		return "estimating…"
	}
	return (time.Duration(float64(left)/j.Rates.PagesPerSec) * time.Second).Round(time.Second).String()
}

// pagesLeft is the pages a running job may still process: those max_pages still
// allows, at most the queued and in-flight URLs.
func pagesLeft(j *apiclient.CrawlStatus, processed int64) int64 {
	left := int64(j.Spec.MaxPages) - processed
	if work := j.Counters.Queued + j.Counters.InFlight; work < left || j.Spec.MaxPages == 0 {
		left = work
	}
	return left
}

func sortedCounts(m map[string]int64) []reasonCount {
	out := make([]reasonCount, 0, len(m))
	for k, n := range m {
		if n > 0 {
			out = append(out, reasonCount{k, n})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].N > out[j].N || (out[i].N == out[j].N && out[i].Reason < out[j].Reason)
	})
	return out
}

// readCrawlForm checks the form and builds the crawler's request; a bad field is
// reported with its name.
func readCrawlForm(c *gin.Context) (crawlForm, apiclient.CrawlSpec, string, string) {
	f := crawlForm{URL: strings.TrimSpace(c.PostForm("url")), MaxDepth: strings.TrimSpace(c.PostForm("max_depth")),
		MaxPages: strings.TrimSpace(c.PostForm("max_pages")), Include: c.PostForm("include"), Exclude: c.PostForm("exclude"),
		Tags: c.PostForm("tags"), Robots: c.PostForm("respect_robots") != "", Sitemap: c.PostForm("use_sitemap") != "",
		Prune: c.PostForm("prune") != ""}
	spec := apiclient.CrawlSpec{URL: f.URL, RespectRobots: &f.Robots, UseSitemap: &f.Sitemap, Prune: f.Prune}
	if f.URL == "" {
		return f, spec, "url", "Give the address of the first page to crawl, e.g. https://docs.example.org/."
	}
	if len(f.URL) > 2048 {
		return f, spec, "url", "The start address is longer than 2048 bytes."
	}
	if f.MaxDepth != "" {
		n, err := strconv.Atoi(f.MaxDepth)
		if err != nil || n < 0 || n > 100 {
			return f, spec, "max_depth", "Depth is a whole number of links from the start page, from 0 to 100."
		}
		spec.MaxDepth = &n
	}
	if f.MaxPages != "" {
		n, err := strconv.Atoi(f.MaxPages)
		if err != nil || n < 1 || n > 1_000_000 {
			return f, spec, "max_pages", "Max pages is a whole number from 1 to 1000000 (the crawler may allow fewer: it names its limit)."
		}
		spec.MaxPages = n
	}
	spec.Include, spec.Exclude = lines(f.Include), lines(f.Exclude)
	for _, t := range strings.Split(f.Tags, ",") {
		if t = strings.TrimSpace(t); t != "" {
			spec.Tags = append(spec.Tags, t)
		}
	}
	return f, spec, "", ""
}

func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func (w *Web) startCrawl(c *gin.Context) {
	if !w.mutating(c) {
		return
	}
	f, spec, field, msg := readCrawlForm(c)
	if field != "" {
		w.renderCrawls(c, http.StatusBadRequest, crawlError(f, field, msg))
		return
	}
	if w.d.Crawler == nil {
		w.fail(c, http.StatusServiceUnavailable, "", "This search service has no crawler configured.", "/crawls")
		return
	}
	ctx, cancel := context.WithTimeout(c.Request.Context(), w.d.Timeout)
	defer cancel()
	job, err := w.d.Crawler.Start(ctx, spec)
	if ce, ok := crawlerRefusal(err); ok {
		w.renderCrawls(c, ce.Status, crawlError(f, ce.Field, ce.Detail))
		return
	}
	if err != nil {
		w.dependencyError(c, "crawler", err, "/crawls")
		return
	}
	c.Redirect(http.StatusSeeOther, "/crawls/"+job.ID)
}

// crawlJob reads the job named in the URL, or renders why it cannot.
func (w *Web) crawlJob(c *gin.Context) (*apiclient.CrawlStatus, bool) {
	id := c.Param("id")
	if !validID.MatchString(id) {
		w.fail(c, http.StatusBadRequest, "id", "A crawl id is a UUID such as 0b6c…; pick one from the list of crawls.", "/crawls")
		return nil, false
	}
	if w.d.Crawler == nil {
		w.fail(c, http.StatusServiceUnavailable, "", "This search service has no crawler configured.", "/")
		return nil, false
	}
	ctx, cancel := context.WithTimeout(c.Request.Context(), w.d.Timeout)
	defer cancel()
	job, err := w.d.Crawler.Crawl(ctx, id)
	if err != nil {
		w.dependencyError(c, "crawler", err, "/crawls")
		return nil, false
	}
	return job, true
}

func (w *Web) crawlPage(c *gin.Context) {
	job, ok := w.crawlJob(c)
	if !ok {
		return
	}
	w.render(c, http.StatusOK, "crawl", "Crawl of "+clip(job.URL, 60), "crawls", describeJob(job))
}

func (w *Web) cancelCrawl(c *gin.Context) {
	if !w.mutating(c) {
		return
	}
	job, ok := w.crawlJob(c)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(c.Request.Context(), w.d.Timeout)
	defer cancel()
	if _, err := w.d.Crawler.Cancel(ctx, job.ID); err != nil {
		w.dependencyError(c, "crawler", err, "/crawls/"+job.ID)
		return
	}
	c.Redirect(http.StatusSeeOther, "/crawls/"+job.ID)
}

// crawlEvents relays the crawler's server-sent events for one job to the browser
// (the browser never talks to the crawler, so its address and key stay private).
// Errors are problem documents, as crawlStatus answers them.
func (w *Web) crawlEvents(c *gin.Context) {
	securityHeaders(c)
	id := c.Param("id")
	switch {
	case w.d.Crawler == nil:
		problem(c, http.StatusServiceUnavailable, "", "This search service has no crawler configured.")
		return
	case !validID.MatchString(id):
		problem(c, http.StatusNotFound, "id", "There is no crawl "+strconv.Quote(id)+": a crawl id is a UUID such as 0b6c…; pick one from the list of crawls.")
		return
	}
	body, err := w.d.Crawler.EventStream(c.Request.Context(), id)
	if err != nil {
		if ce, ok := crawlerRefusal(err); ok {
			problem(c, ce.Status, ce.Field, ce.Detail)
			return
		}
		w.d.Logger.Warn("web: crawl events", "err", err)
		problem(c, http.StatusServiceUnavailable, "", "The crawler cannot be reached right now; try again in a moment.")
		return
	}
	defer body.Close()
	h := c.Writer.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	c.Writer.WriteHeader(http.StatusOK)
	c.Writer.Flush()
	buf := make([]byte, 32<<10)
	for {
		n, err := body.Read(buf)
		if n > 0 {
			if _, werr := c.Writer.Write(buf[:n]); werr != nil {
				return
			}
			c.Writer.Flush()
		}
		if err != nil {
			return
		}
	}
}

// crawlStatus answers a job's status as JSON (the crawler's answer, as the
// client reads it) for static/app.js, which refreshes the running rows of the
// crawls list with it; like the event stream, it keeps the crawler's address
// and key on this server. It takes no URL parameters (one is a 400, as on the
// API). Errors are problem documents.
func (w *Web) crawlStatus(c *gin.Context) {
	securityHeaders(c)
	c.Header("Cache-Control", "no-store")
	var he *httpserver.Error
	if _, err := httpserver.StrictQuery(c.Request, noParams); errors.As(err, &he) {
		problem(c, he.Status, he.Field, he.Detail)
		return
	}
	id := c.Param("id")
	if !validID.MatchString(id) {
		problem(c, http.StatusBadRequest, "id", "A crawl id is a UUID such as 0b6c…; pick one from the list of crawls.")
		return
	}
	w.crawlerJSON(c, "web: crawl status", func(ctx context.Context) (any, error) {
		return w.d.Crawler.Crawl(ctx, id)
	})
}

// crawlerJSON answers what call asks the crawler as JSON, for the crawl
// pages' scripts: the crawler's own refusal as its problem document, a 503
// when no crawler is configured or it cannot be reached (logged with logMsg).
func (w *Web) crawlerJSON(c *gin.Context, logMsg string, call func(context.Context) (any, error)) {
	if w.d.Crawler == nil {
		problem(c, http.StatusServiceUnavailable, "", "This search service has no crawler configured.")
		return
	}
	ctx, cancel := context.WithTimeout(c.Request.Context(), w.d.Timeout)
	defer cancel()
	out, err := call(ctx)
	if ce, ok := crawlerRefusal(err); ok {
		problem(c, ce.Status, ce.Field, ce.Detail)
		return
	}
	if err != nil {
		w.d.Logger.Warn(logMsg, "err", err)
		problem(c, http.StatusServiceUnavailable, "", "The crawler cannot be reached right now; try again in a moment.")
		return
	}
	c.JSON(http.StatusOK, out)
}

// crawlsJSON answers the crawls list as JSON ({"crawls": [...]}, each the
// crawler's status of a job, newest first) with the page's filter (status,
// limit), for static/app.js, which adds crawls started after the page loaded.
// Its parameters are read strictly; errors are problem documents.
func (w *Web) crawlsJSON(c *gin.Context) {
	securityHeaders(c)
	c.Header("Cache-Control", "no-store")
	v, err := httpserver.StrictQuery(c.Request, crawlsJSONSpec)
	var he *httpserver.Error
	if errors.As(err, &he) {
		problem(c, he.Status, he.Field, he.Detail)
		return
	}
	status, limit, bad := crawlsFilter(v)
	if bad != nil {
		problem(c, http.StatusBadRequest, bad.Name, bad.Accepts)
		return
	}
	w.crawlerJSON(c, "web: list crawls", func(ctx context.Context) (any, error) {
		jobs, err := w.d.Crawler.CrawlsWithStatus(ctx, status, limit)
		if jobs == nil {
			jobs = []apiclient.CrawlStatus{}
		}
		return gin.H{"crawls": jobs}, err
	})
}

// problem writes an RFC 9457 problem document.
func problem(c *gin.Context, status int, field, detail string) {
	b, _ := json.Marshal(httpserver.Problem{Type: "about:blank", Title: http.StatusText(status), Status: status, Detail: detail, Field: field})
	c.Data(status, "application/problem+json", b)
}

type documentsView struct {
	Deleted     bool           // the page shown after a delete says it happened
	Removed     *domainRemoval // the page shown after a site's documents were deleted says how many
	DeleteError *domainDeleteError
	ParamError  *paramError // a URL parameter the page cannot use: no list is shown
	Docs        []apiclient.Document
	Domain      string
	After       string
	Limit       int
	NextAfter   string
	Disabled    string
	Back        string
}

// NextHref is the address of the next page of the list.
func (v documentsView) NextHref() string {
	q := url.Values{"after": {v.NextAfter}}
	if v.Domain != "" {
		q.Set("domain", v.Domain)
	}
	if v.Limit != docsLimit && v.Limit != 0 {
		q.Set("limit", strconv.Itoa(v.Limit))
	}
	return "/documents?" + q.Encode()
}

// FirstHref is the address of the list's first page (its filter and limit).
func (v documentsView) FirstHref() string {
	q := url.Values{}
	if v.Domain != "" {
		q.Set("domain", v.Domain)
	}
	if v.Limit != docsLimit && v.Limit != 0 {
		q.Set("limit", strconv.Itoa(v.Limit))
	}
	if len(q) == 0 {
		return "/documents"
	}
	return "/documents?" + q.Encode()
}

// The documents list's URL parameters; deleted, removed and more are set by the
// redirects after a deletion.
var documentsQuery = pageQuery{Path: "/documents", Known: []string{"domain", "after", "limit", "deleted", "removed", "more"}}

// The documents list shows docsLimit documents a page unless its URL asks for
// another number, at most maxDocsLimit.
const docsLimit, maxDocsLimit = 50, 200

func (w *Web) documentsPage(c *gin.Context) {
	v, bad := documentsQuery.read(c.Request)
	view := documentsView{Domain: strings.TrimSpace(v.Get("domain")), After: v.Get("after"), Deleted: v.Get("deleted") == "1", Limit: docsLimit}
	view.Back = c.Request.URL.RequestURI()
	if bad == nil {
		bad = readDocumentsQuery(v, &view)
	}
	if bad != nil {
		view.ParamError = bad
		w.render(c, http.StatusBadRequest, "documents", "Documents", "documents", view)
		return
	}
	if w.d.Crawler == nil {
		view.Disabled = "This search service has no crawler configured."
		w.render(c, http.StatusOK, "documents", "Documents", "documents", view)
		return
	}
	ctx, cancel := context.WithTimeout(c.Request.Context(), w.d.Timeout)
	defer cancel()
	p, err := w.d.Crawler.Documents(ctx, view.Domain, view.After, view.Limit)
	if err != nil {
		w.dependencyError(c, "crawler", err, "/documents")
		return
	}
	view.Docs, view.NextAfter = p.Documents, p.NextAfter
	if view.Removed = removalNotice(v, view.Domain); view.Removed != nil && view.Removed.More {
		view.Removed.Left = left(view)
	}
	w.render(c, http.StatusOK, "documents", "Documents", "documents", view)
}

// readDocumentsQuery checks the documents list's parameters into view (the
// domain lower-cased); the first it cannot use is returned.
func readDocumentsQuery(v url.Values, view *documentsView) *paramError {
	domain, host, ok := hostParam(view.Domain)
	if !ok {
		e := documentsQuery.bad(v, "domain", "domain is a host name such as docs.python.org: no scheme (https://), port, path or spaces; write an internationalised name in its xn-- form.")
		if host != "" {
			e.Instead, e.InsteadText = documentsQuery.with(v, "domain", host), "list the documents of "+host
		}
		return e
	}
	view.Domain = domain
	if view.After != "" && !docid.Valid(view.After) {
		return documentsQuery.bad(v, "after", "after is the id of the last document of the previous page (32 hexadecimal digits); follow the page's Next page link instead.")
	}
	var n bool
	if view.Limit, n = intParam(v, "limit", docsLimit, 1, maxDocsLimit); !n {
		return documentsQuery.bad(v, "limit", fmt.Sprintf("limit is how many documents to list on a page, a whole number from 1 to %d (%d when left out).", maxDocsLimit, docsLimit))
	}
	if d, ok := v["deleted"]; ok && d[0] != "1" {
		return documentsQuery.bad(v, "deleted", "deleted=1 is what the page adds after deleting a document, to say so; it takes no other value.")
	}
	if r, ok := v["removed"]; ok {
		if n, err := strconv.Atoi(r[0]); err != nil || n < 0 || n > 1_000_000_000 || view.Domain == "" {
			return documentsQuery.bad(v, "removed", "removed is the count of documents deleted, a whole number, with the domain they were deleted from; the page adds it after deleting a site's documents.")
		}
	}
	if m, ok := v["more"]; ok && (m[0] != "1" || !v.Has("removed")) {
		return documentsQuery.bad(v, "more", "more=1 goes with removed, when a site's documents were not all deleted; it takes no other value.")
	}
	return nil
}

func (w *Web) deleteDocument(c *gin.Context) {
	if !w.mutating(c) {
		return
	}
	id := c.Param("id")
	back := safeNext(c.PostForm("back"))
	if !validID.MatchString(id) {
		w.fail(c, http.StatusBadRequest, "id", "A document id is 1 to 64 letters, digits, - or _.", back)
		return
	}
	if w.d.Crawler == nil {
		w.fail(c, http.StatusServiceUnavailable, "", "This search service has no crawler configured.", "/")
		return
	}
	ctx, cancel := context.WithTimeout(c.Request.Context(), w.d.Timeout)
	defer cancel()
	if err := w.d.Crawler.DeleteDocument(ctx, id); err != nil {
		w.dependencyError(c, "crawler", err, back)
		return
	}
	c.Redirect(http.StatusSeeOther, withDeleted(back))
}

// withDeleted marks the page a delete returns to (a local path, see safeNext) with
// deleted=1, so it says the document is gone: the row only vanished before.
func withDeleted(back string) string {
	u, err := url.Parse(back)
	if err != nil {
		return back
	}
	q := u.Query()
	q.Set("deleted", "1")
	u.RawQuery = q.Encode()
	return u.RequestURI()
}

// crawlerRefusal is the crawler's 4xx answer in err, passed on to the browser
// with its detail and field. A 429 or 5xx answer, like a crawler that cannot be
// reached, is not a refusal: the page says the crawler is unavailable.
func crawlerRefusal(err error) (*apiclient.Error, bool) {
	var e *apiclient.Error
	if !errors.As(err, &e) || e.Status >= 500 || e.Status == http.StatusTooManyRequests {
		return nil, false
	}
	r := *e
	if r.Detail == "" {
		r.Detail = r.Title
	}
	if r.Status == http.StatusUnauthorized {
		r.Detail = "the crawler refused this server's API key (KGS_CRAWLER_API_KEY)"
	}
	return &r, true
}

// bytesText formats a byte count.
func bytesText(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
