// Package web is the search service's web interface: a search page with score
// breakdowns, an entity view with its neighbourhood drawn as SVG, and crawl pages
// that start, watch (server-sent events), cancel crawls and delete documents through
// the crawler's API. Pages are rendered on the server with html/template from
// templates embedded in the binary; the only script is static/app.js (written for
// this package, no build step, nothing loaded from elsewhere), which adds typing
// suggestions, live slider values, the live crawl counters and warnings, and the
// refresh of running crawls on the crawls list.
//
// Searches call the pipeline in-process, the same call the REST API makes; the kg
// and crawler calls go through their Go clients. Mutating routes (start or cancel a
// crawl, delete a document or all of a site's) need a login when KGS_API_KEYS is
// set, and every form POST carries a CSRF token.
package web

import (
	"bytes"
	"context"
	"crypto/rand"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/kgsearch/kgsearch/pkg/apiclient"
	"github.com/kgsearch/kgsearch/pkg/httpserver"
	"github.com/kgsearch/kgsearch/pkg/kgapi"
	"github.com/kgsearch/kgsearch/pkg/store"
	"github.com/kgsearch/kgsearch/services/search/internal/indexer"
	"github.com/kgsearch/kgsearch/services/search/internal/pipeline"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Searcher runs a search (the pipeline; api.Searcher has the same shape).
type Searcher interface {
	Search(ctx context.Context, req pipeline.Request) (*pipeline.Response, error)
}

// Chunks reads stored chunks, for the heading paths of result citations.
type Chunks interface {
	ChunksByIDs(ctx context.Context, ids []int64) ([]store.Chunk, error)
}

// Docs gives the metadata of a document the search index knows.
type Docs interface {
	Doc(id string) (indexer.Doc, bool)
}

// Graph is what the entity view asks of the kg service.
type Graph interface {
	Entity(ctx context.Context, id string) (*kgapi.Entity, error)
	Match(ctx context.Context, req kgapi.MatchRequest) (*kgapi.MatchResponse, error)
}

// Crawler is what the crawl and document pages ask of the crawler service
// (*apiclient.CrawlerClient). Its API key stays on this server; browsers never see it.
type Crawler interface {
	Start(ctx context.Context, spec apiclient.CrawlSpec) (*apiclient.CrawlStatus, error)
	Crawl(ctx context.Context, id string) (*apiclient.CrawlStatus, error)
	Crawls(ctx context.Context, limit int) ([]apiclient.CrawlStatus, error)
	CrawlsWithStatus(ctx context.Context, status string, limit int) ([]apiclient.CrawlStatus, error)
	Cancel(ctx context.Context, id string) (*apiclient.CrawlStatus, error)
	EventStream(ctx context.Context, id string) (io.ReadCloser, error)
	Documents(ctx context.Context, domain, after string, limit int) (*apiclient.DocumentPage, error)
	DeleteDocument(ctx context.Context, id string) error
	DeleteDomain(ctx context.Context, domain string, limit int) (*apiclient.DomainDeletion, error)
}

// Deps are the collaborators of the web pages. Chunks, Graph and Crawler may be nil:
// citations then lack heading paths, and the entity and crawl pages say what is missing.
type Deps struct {
	Search  Searcher
	Chunks  Chunks
	Docs    Docs
	Graph   Graph
	Crawler Crawler
	// APIKeys, when non-empty, are the keys a login must present before crawls can
	// be started or cancelled and documents deleted (KGS_API_KEYS).
	APIKeys []string
	// PrivateReads, with APIKeys, puts the read pages (search, entities, crawls,
	// documents) behind the login too: searches are not public (KGS_PUBLIC_SEARCH unset).
	PrivateReads bool
	Logger       *slog.Logger
	// Timeout bounds the kg and crawler calls of one page, and the store read of
	// the results' heading paths; default 5s.
	Timeout time.Duration
	// CrawlsPoll is how often the crawls list asks this server for crawls started
	// after it loaded (GET /crawls.json); default 5s.
	CrawlsPoll time.Duration
	// DeleteBudget bounds one POST of the delete-a-site form: no batch of the
	// crawler's DELETE /api/v1/documents?domain= starts that would end after it (the
	// last one's time is the estimate); the page then offers the next batches.
	// Default 10s.
	DeleteBudget time.Duration
}

// Web serves the pages.
type Web struct {
	d      Deps
	pages  map[string]*template.Template
	secret []byte // HMAC key of session cookies and CSRF tokens; new at every start
	static http.Handler
	files  fs.FS // the static files, to tell a file from a folder or nothing
}

// New parses the templates and returns the web interface.
func New(d Deps) (*Web, error) {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Timeout <= 0 {
		d.Timeout = 5 * time.Second
	}
	if d.CrawlsPoll <= 0 {
		d.CrawlsPoll = 5 * time.Second
	}
	if d.DeleteBudget <= 0 {
		d.DeleteBudget = 10 * time.Second
	}
	w := &Web{d: d, pages: map[string]*template.Template{}, secret: make([]byte, 32)}
	if _, err := rand.Read(w.secret); err != nil {
		return nil, fmt.Errorf("web: session secret: %w", err)
	}
	for _, name := range []string{"search", "entity", "crawls", "crawl", "documents", "login", "error"} {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("web: parse template %s: %w", name, err)
		}
		w.pages[name] = t
	}
	sub, err := fs.Sub(staticFS, "static")
	if err != nil {
		return nil, fmt.Errorf("web: static files: %w", err)
	}
	w.static = http.StripPrefix("/static/", http.FileServerFS(sub))
	w.files = sub
	return w, nil
}

// Register mounts the pages on the engine. They answer HTML, never problem+json.
func (w *Web) Register(e *gin.Engine) {
	e.GET("/", w.reader(w.searchPage))
	e.GET("/entities/:id", w.reader(w.entityPage))
	e.GET("/crawls", w.reader(w.crawlsPage))
	e.GET("/crawls.json", w.jsonReader(w.crawlsJSON))
	e.POST("/crawls", w.startCrawl)
	e.GET("/crawls/:id", w.reader(w.crawlPage))
	e.GET("/crawls/:id/events", w.reader(w.crawlEvents))
	e.GET("/crawls/:id/status", w.reader(w.crawlStatus))
	e.POST("/crawls/:id/cancel", w.cancelCrawl)
	e.GET("/documents", w.reader(w.documentsPage))
	e.POST("/documents/:id/delete", w.deleteDocument)
	e.POST("/documents/delete-domain", w.deleteDomain)
	e.GET("/login", w.loginPage)
	e.POST("/login", w.login)
	e.POST("/logout", w.logout)
	e.GET("/static/*path", w.staticFile)
}

// staticFile serves one embedded file. A folder or a missing file is the HTML
// 404 page: the file server would list a folder's files and answer a missing
// one in plain text.
func (w *Web) staticFile(c *gin.Context) {
	name := strings.TrimPrefix(c.Param("path"), "/")
	if st, err := fs.Stat(w.files, name); name == "" || err != nil || st.IsDir() {
		w.fail(c, http.StatusNotFound, "", "There is no file at this address. Search from the start page, or pick Crawls or Documents above.", "/")
		return
	}
	c.Header("Cache-Control", "public, max-age=3600")
	w.static.ServeHTTP(c.Writer, c.Request)
}

// NotFoundPage answers a browser's navigation to an unknown path (GET or HEAD,
// Accept naming text/html, outside /api/ and /mcp) with the HTML 404 page instead
// of a problem document; it writes nothing for other requests. The server calls
// it before its own 404 (httpserver.Server.SetNotFoundPage).
func (w *Web) NotFoundPage(c *gin.Context) {
	r := c.Request
	if (r.Method != http.MethodGet && r.Method != http.MethodHead) || !fromBrowser(r) {
		return
	}
	w.fail(c, http.StatusNotFound, "", "There is no page at this address. Search from the start page, or pick Crawls or Documents above.", "/")
}

// ErrorPage answers an error the server writes itself before the page's handler
// runs (the rate limit on searches, crawl creation and sign-in, a form body over the
// size limit) with the HTML error page when a browser asked for a page (Accept
// naming text/html, outside /api/ and /mcp); programs keep the problem document
// (httpserver.Server.SetErrorPage). A browser used to be shown the raw JSON.
func (w *Web) ErrorPage(c *gin.Context, p httpserver.Problem) bool {
	if !fromBrowser(c.Request) {
		return false
	}
	msg := p.Detail
	switch {
	case p.Status == http.StatusTooManyRequests:
		msg = "Too many requests from you in a short time: " + p.Detail + ". Wait a moment and try again."
	case msg == "":
		msg = p.Title
	}
	w.fail(c, p.Status, p.Field, msg, "/")
	return true
}

// fromBrowser reports a request for a page: Accept names text/html and the path is
// not the API's or MCP's.
func fromBrowser(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "text/html") && !strings.HasPrefix(r.URL.Path, "/api/") &&
		r.URL.Path != "/mcp" && !strings.HasPrefix(r.URL.Path, "/mcp/")
}

// page is what every template gets besides its own data.
type page struct {
	Title    string
	Nav      string // the active navigation entry
	CSRF     string
	LoggedIn bool
	NeedsKey bool // KGS_API_KEYS is set
	Data     any
}

// securityHeaders keep the pages from running anything but our own script.
func securityHeaders(c *gin.Context) {
	h := c.Writer.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
		"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("X-Frame-Options", "DENY")
}

// render executes a page template into a buffer first, so a template error becomes
// an error page instead of half a page. The title of a page answering 4xx or 5xx
// starts with "Error:".
func (w *Web) render(c *gin.Context, status int, name, title, nav string, data any) {
	if status >= 400 {
		title = "Error: " + title // the tab and a screen reader's first words say the page is an error
	}
	p := page{Title: title, Nav: nav, CSRF: w.csrfToken(c), LoggedIn: w.loggedIn(c), NeedsKey: len(w.d.APIKeys) > 0, Data: data}
	var buf bytes.Buffer
	if err := w.pages[name].Execute(&buf, p); err != nil {
		w.d.Logger.Error("web: render page", "page", name, "err", err)
		buf.Reset()
		status = http.StatusInternalServerError
		p = page{Title: "Error", Data: errorView{Status: status, Message: "The page could not be rendered; the server log has the details."}}
		_ = w.pages["error"].Execute(&buf, p)
	}
	securityHeaders(c)
	c.Header("Cache-Control", "no-store")
	c.Data(status, "text/html; charset=utf-8", buf.Bytes())
}

// errorView is the data of the error page.
type errorView struct {
	Status   int
	Message  string
	Field    string // the request field at fault, for programs (the message names it for people)
	Back     string // a link to try again
	BackText string // what the link does
}

// fail renders a readable error page.
func (w *Web) fail(c *gin.Context, status int, field, msg, back string) {
	w.render(c, status, "error", http.StatusText(status), "", errorView{Status: status, Message: msg, Field: field, Back: back, BackText: backText(back)})
}

// backText says where the error page's link goes.
func backText(back string) string {
	switch {
	case strings.HasPrefix(back, "/?q="):
		return "Search for it instead"
	case strings.HasPrefix(back, "/login"):
		return "Log in"
	case strings.HasPrefix(back, "/crawls/"):
		return "Back to the crawl"
	case strings.HasPrefix(back, "/crawls"):
		return "Back to the crawls"
	case strings.HasPrefix(back, "/documents"):
		return "Back to the documents"
	}
	return "Go to the search page"
}

// dependencyError turns a failed kg or crawler call into a page: 4xx answers are
// passed on with their detail, the rest is a 503 naming the service.
func (w *Web) dependencyError(c *gin.Context, service string, err error, back string) {
	var ke *kgapi.StatusError
	if ce, ok := crawlerRefusal(err); ok {
		w.fail(c, ce.Status, ce.Field, ce.Detail, back)
		return
	}
	switch {
	case errors.As(err, &ke) && ke.Status < 500:
		w.fail(c, ke.Status, "", ke.Detail, back)
	default:
		w.d.Logger.Warn("web: dependency failed", "service", service, "err", err)
		w.fail(c, http.StatusServiceUnavailable, "", "The "+service+" service cannot be reached right now; try again in a moment.", back)
	}
}

// inputType is the type of a form input showing v: want ("date" or "number")
// when v is empty or a value a browser shows in such an input, otherwise "text".
// A date input empties itself of a value that is not YYYY-MM-DD, such as the
// RFC 3339 time the search takes in published_after (the page searched with
// it, but the next Apply dropped it without a word), and a number input of
// "ten": as text they keep the value as it was given, valid or to be fixed.
func inputType(want, v string) string {
	ok := v == ""
	switch want {
	case "date":
		if len(v) == len("2006-01-02") {
			_, err := time.Parse("2006-01-02", v)
			ok = ok || err == nil
		}
	case "number":
		ok = ok || htmlNumber.MatchString(v)
	}
	if ok {
		return want
	}
	return "text"
}

// htmlNumber is HTML's valid floating-point number.
var htmlNumber = regexp.MustCompile(`^-?(?:[0-9]+|[0-9]*\.[0-9]+)(?:[eE][-+]?[0-9]+)?$`)

var funcs = template.FuncMap{
	"pct":     func(x float64) string { return fmt.Sprintf("%.2f", x*100) },
	"f3":      func(x float64) string { return fmt.Sprintf("%.3f", x) },
	"f4":      func(x float64) string { return fmt.Sprintf("%.4f", x) },
	"f1":      func(x float64) string { return fmt.Sprintf("%.1f", x) },
	"join":    strings.Join,
	"lower":   strings.ToLower,
	"add":     func(a, b int) int { return a + b },
	"mul":     func(a, b float64) float64 { return a * b },
	"pathesc": url.PathEscape,
	"clip":    clip,
	"spaced":  func(s string) string { return strings.ReplaceAll(s, ",", ", ") },
	"bytes":   bytesText,
	// The type of the search form's date and number inputs for their values.
	"inputType": inputType,
	// The crawl page's legend of page outcomes and the reasons' words for app.js.
	"outcomes":    func() []outcome { return outcomes },
	"reasonWords": reasonWordsJSON,
	"when": func(t *time.Time) string {
		if t == nil || t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	},
}
