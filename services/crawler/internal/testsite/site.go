package testsite

import (
	"fmt"
	"hash/fnv"
	"html"
	"io"
	"math/rand"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Paths of the special pages, for assertions.
const (
	PathHome      = "/"
	PathRobots    = "/robots.txt"
	PathSitemap   = "/sitemap.xml"
	PathOrphan    = "/orphan"
	PathPrivate   = "/private/secret"
	PathSlow      = "/slow"
	PathFlaky     = "/flaky"
	PathBusy      = "/busy"
	PathMissing   = "/missing"
	PathPDF       = "/files/manual.pdf"
	PathPNG       = "/img/logo.png"
	PathText      = "/notes.txt"
	PathHuge      = "/huge"
	PathLeave     = "/leave"
	PathCalendar  = "/calendar/2026/01"
	OutsideTarget = "http://outside.example/landing"
)

// Options shapes the site. Zero fields take the defaults in brackets.
type Options struct {
	// Articles is the number of pages /articles/1 ... /articles/N [8].
	Articles int
	// DeepChain is the length of the chain /deep/1 → /deep/2 → ... [6].
	DeepChain int
	// Host, when set (e.g. "site.test"), is the name links use instead of
	// 127.0.0.1; www.Host and an upper-case spelling are linked too. Resolve
	// the names with Site.Resolver.
	Host string
	// SlowDelay delays /slow [200ms].
	SlowDelay time.Duration
	// FlakyFailures is how many times /flaky answers 500 before 200 [2].
	FlakyFailures int
	// RetryAfter is the Retry-After of /busy's 429, in seconds [1].
	RetryAfter int
	// CrawlDelay is robots.txt's Crawl-delay for every agent [50ms]; a
	// negative value leaves the line out.
	CrawlDelay time.Duration
	// HugeBytes is the size of /huge [11 MiB, above a 10 MiB body limit].
	HugeBytes int
}

func (o *Options) defaults() {
	if o.Articles <= 0 {
		o.Articles = 8
	}
	if o.DeepChain <= 0 {
		o.DeepChain = 6
	}
	if o.SlowDelay == 0 {
		o.SlowDelay = 200 * time.Millisecond
	}
	if o.FlakyFailures == 0 {
		o.FlakyFailures = 2
	}
	if o.RetryAfter == 0 {
		o.RetryAfter = 1
	}
	if o.CrawlDelay == 0 {
		o.CrawlDelay = 50 * time.Millisecond
	}
	if o.HugeBytes == 0 {
		o.HugeBytes = 11 << 20
	}
	o.Host = strings.ToLower(strings.TrimSuffix(o.Host, "."))
}

// Request is one request the site received.
type Request struct {
	Method, Path, RawQuery, Host, UserAgent string
	IfNoneMatch, IfModifiedSince            string
	Status                                  int
	At                                      time.Time
}

// Site is a running test website. Its methods are safe for concurrent use.
type Site struct {
	opts Options
	srv  *httptest.Server
	host string // host name in links
	port string
	base string // scheme://host:port
	dns  net.PacketConn

	mu         sync.Mutex
	requests   []Request
	hits       map[string]int
	notMod     map[string]int
	versions   map[string]int
	modified   map[string]time.Time
	gone       map[string]bool
	unlinked   map[string]bool
	flakyCount int
	busyCount  int
}

// epoch is the Last-Modified of every page at version 1.
var epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// New starts the site on 127.0.0.1. Close it when done.
func New(opts Options) *Site {
	opts.defaults()
	s := &Site{
		opts:     opts,
		hits:     map[string]int{},
		notMod:   map[string]int{},
		versions: map[string]int{},
		modified: map[string]time.Time{},
		gone:     map[string]bool{},
		unlinked: map[string]bool{},
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	u, _ := url.Parse(s.srv.URL)
	s.port = u.Port()
	s.host = "127.0.0.1"
	if opts.Host != "" {
		s.host = opts.Host
	}
	s.base = "http://" + net.JoinHostPort(s.host, s.port)
	return s
}

// URL returns the site's base URL without a trailing slash, e.g.
// "http://127.0.0.1:41234" or "http://site.test:41234".
func (s *Site) URL() string { return s.base }

// SeedURL returns the home page URL, the usual crawl seed.
func (s *Site) SeedURL() string { return s.base + "/" }

// Addr returns the listening address "127.0.0.1:port", the entry to allow in
// netguard.
func (s *Site) Addr() string { return net.JoinHostPort("127.0.0.1", s.port) }

// Hosts returns the host names the site's links use (without port).
func (s *Site) Hosts() []string {
	if s.opts.Host == "" {
		return []string{s.host}
	}
	return []string{s.host, "www." + s.host}
}

// Close stops the server (and the DNS server of Resolver).
func (s *Site) Close() {
	s.srv.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dns != nil {
		s.dns.Close()
	}
}

// Hits returns how many requests path received (any query string).
func (s *Site) Hits(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

// HitsByPath returns a copy of the request counts per path.
func (s *Site) HitsByPath() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.hits))
	for k, v := range s.hits {
		out[k] = v
	}
	return out
}

// NotModified returns how many requests for path were answered 304.
func (s *Site) NotModified(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.notMod[path]
}

// Requests returns a copy of the request log in arrival order.
func (s *Site) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// ResetCounts clears the request log and counters and re-arms /flaky and
// /busy; page versions are kept (for recrawls).
func (s *Site) ResetCounts() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = nil
	s.hits = map[string]int{}
	s.notMod = map[string]int{}
	s.flakyCount, s.busyCount = 0, 0
}

// Update changes the content of the page at path: new text (a new Marker),
// a later Last-Modified and a new ETag.
func (s *Site) Update(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.versionLocked(path) + 1
	s.versions[path] = v
	s.modified[path] = epoch.Add(time.Duration(v-1) * time.Hour)
	delete(s.gone, path)
}

// Remove makes path answer 410 Gone until Update is called for it.
func (s *Site) Remove(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gone[path] = true
}

// Unlink takes the page at path out of the site's link graph: the pages'
// own links to it (not the navigation, sidebar and footer every page shares)
// and the sitemap no longer list it, while the page itself still answers.
// Link restores the links.
func (s *Site) Unlink(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unlinked[path] = true
}

// Link undoes Unlink.
func (s *Site) Link(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.unlinked, path)
}

// Marker returns the unique token in the current text of the page at path;
// it changes with Update.
func (s *Site) Marker(path string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return marker(path, s.versionLocked(path))
}

func (s *Site) versionLocked(path string) int {
	if v, ok := s.versions[path]; ok {
		return v
	}
	return 1
}

func marker(path string, version int) string {
	h := fnv.New32a()
	h.Write([]byte(path))
	return fmt.Sprintf("tsm%08x-v%d", h.Sum32(), version)
}

// kind is what a URL is.
type kind int

const (
	kindNotFound kind = iota
	kindPage
	kindText
	kindRedirect
	kindBinary
	kindHuge
	kindRobots
	kindSitemap
)

type link struct{ href, text string }

// resource is the site's answer for a URL, shared by the handler and
// CanonicalPages so that both always agree.
type resource struct {
	kind     kind
	status   int    // redirect status
	location string // redirect target (absolute or path)
	title    string
	links    []link
	ctype    string // binary content type
}

func (s *Site) navLinks() []link {
	return []link{{"/", "Home"}, {"/articles/", "Articles"}, {"/docs/guide", "Guide"}, {"/about", "About"}}
}

// resolve maps a URL (any host of the site) to its resource, without the
// links to unlinked pages.
func (s *Site) resolve(u *url.URL) resource {
	res := s.resolveAll(u)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.unlinked) == 0 || len(res.links) == 0 {
		return res
	}
	var keep []link
	for _, l := range res.links {
		if t, err := u.Parse(l.href); err == nil && s.unlinked[t.Path] {
			continue
		}
		keep = append(keep, l)
	}
	res.links = keep
	return res
}

// resolveAll maps a URL (any host of the site) to its resource.
func (s *Site) resolveAll(u *url.URL) resource {
	p := u.Path
	page := func(title string, links ...link) resource {
		return resource{kind: kindPage, title: title, links: links}
	}
	redirect := func(status int, to string) resource {
		return resource{kind: kindRedirect, status: status, location: to}
	}
	switch p {
	case "/":
		return page("Home", s.homeLinks()...)
	case PathRobots:
		return resource{kind: kindRobots}
	case PathSitemap:
		return resource{kind: kindSitemap}
	case "/articles":
		return redirect(http.StatusMovedPermanently, "/articles/")
	case "/articles/":
		var links []link
		for i := 1; i <= s.opts.Articles; i++ {
			links = append(links, link{fmt.Sprintf("/articles/%d", i), fmt.Sprintf("Article %d", i)})
		}
		return page("All articles", links...)
	case "/docs/guide":
		return page("Guide", link{"/docs/api", "API reference"}, link{"api#errors", "API errors"}, link{"../docs/guide", "This guide"}, link{"/old/guide", "Old guide address"})
	case "/docs/api":
		return page("API reference", link{"/docs/guide", "Guide"})
	case "/docs/chain-end":
		return page("End of the redirect chain")
	case "/old/guide":
		return redirect(http.StatusMovedPermanently, "/docs/guide")
	case "/chain/1":
		return redirect(http.StatusFound, "/chain/2")
	case "/chain/2":
		return redirect(http.StatusTemporaryRedirect, "/chain/3")
	case "/chain/3":
		return redirect(http.StatusMovedPermanently, "/docs/chain-end")
	case PathLeave:
		return redirect(http.StatusFound, OutsideTarget)
	case "/about":
		return page("About us")
	case "/privacy":
		return page("Privacy policy")
	case PathOrphan:
		return page("Orphan page", link{"/articles/1", "First article"})
	case PathPrivate:
		return page("Private area", link{"/", "Home"})
	case PathSlow:
		return page("Slow page")
	case PathFlaky:
		return page("Flaky page")
	case PathBusy:
		return page("Busy page")
	case PathPDF:
		return resource{kind: kindBinary, ctype: "application/pdf"}
	case PathPNG:
		return resource{kind: kindBinary, ctype: "image/png"}
	case PathText:
		return resource{kind: kindText}
	case PathHuge:
		return resource{kind: kindHuge}
	case "/search":
		q := u.Query()
		if q.Get("a") == "1" && q.Get("b") == "2" {
			return page("Search results", link{"/articles/2", "Second article"})
		}
		return resource{kind: kindNotFound}
	}
	if n, ok := numberAfter(p, "/articles/"); ok && n >= 1 && n <= s.opts.Articles {
		if strings.HasSuffix(p, "/") {
			return redirect(http.StatusMovedPermanently, strings.TrimSuffix(p, "/"))
		}
		var links []link
		if n > 1 {
			links = append(links, link{fmt.Sprintf("/articles/%d", n-1), "Previous article"})
		}
		if n < s.opts.Articles {
			links = append(links,
				link{strconv.Itoa(n + 1), "Next article"},
				link{fmt.Sprintf("../articles/%d?utm_content=next#top", n+1), "Next article (tracked)"})
		}
		links = append(links, link{"/docs/api", "API reference"})
		return page(fmt.Sprintf("Article %d", n), links...)
	}
	if n, ok := numberAfter(p, "/deep/"); ok && n >= 1 && n <= s.opts.DeepChain && !strings.HasSuffix(p, "/") {
		var links []link
		if n < s.opts.DeepChain {
			links = append(links, link{fmt.Sprintf("/deep/%d", n+1), "Deeper"})
		}
		return page(fmt.Sprintf("Deep page %d", n), links...)
	}
	if y, m, ok := calendarMonth(p); ok {
		ny, nm := y, m+1
		if nm == 13 {
			ny, nm = y+1, 1
		}
		py, pm := y, m-1
		if pm == 0 {
			py, pm = y-1, 12
		}
		return page(fmt.Sprintf("Calendar %04d-%02d", y, m),
			link{fmt.Sprintf("/calendar/%04d/%02d", ny, nm), "Next month"},
			link{fmt.Sprintf("/calendar/%04d/%02d", py, pm), "Previous month"})
	}
	return resource{kind: kindNotFound}
}

func (s *Site) homeLinks() []link {
	links := []link{
		{"/articles/", "All articles"},
		{"articles/1", "First article"},
		{"./articles/1#intro", "First article, introduction"},
		{"/articles/1?utm_source=newsletter&utm_medium=email", "First article (newsletter)"},
		{"/articles/1?fbclid=IwAR0abc", "First article (social)"},
		{"/docs/../articles/1", "First article (dot segments)"},
		{"/articles/./1", "First article (dot)"},
		{"HTTP://" + net.JoinHostPort(s.host, s.port) + "/articles/1", "First article (upper-case scheme)"},
		{"/articles/1/", "First article (trailing slash)"},
		{"/articles", "Articles without slash"},
		{"/search?b=2&a=1", "Search"},
		{"/search?a=1&b=2&utm_campaign=spring#results", "Search (tracked)"},
		{"/deep/1", "Deep chain"},
		{PathCalendar, "Events calendar"},
		{"/old/guide", "Old guide"},
		{"/chain/1", "Redirect chain"},
		{PathLeave, "Partner site"},
		{PathSlow, "Slow page"},
		{PathFlaky, "Flaky page"},
		{PathBusy, "Busy page"},
		{PathMissing, "Missing page"},
		{PathPDF, "Manual (PDF)"},
		{PathPNG, "Logo"},
		{PathText, "Release notes"},
		{PathHuge, "Huge page"},
		{PathPrivate, "Private area"},
		{"mailto:info@example.com", "Mail us"},
		{"javascript:void(0)", "Script link"},
	}
	if s.opts.Host != "" {
		links = append(links,
			link{"http://" + net.JoinHostPort(strings.ToUpper(s.host), s.port) + "/articles/2", "Second article (upper-case host)"},
			link{"http://" + net.JoinHostPort("www."+s.host, s.port) + "/articles/3", "Third article (www)"})
	}
	return links
}

func (s *Site) sitemapPaths() []string {
	paths := []string{"/", "/docs/guide", "/about", PathOrphan, PathPrivate}
	for i := 1; i <= s.opts.Articles; i++ {
		paths = append(paths, fmt.Sprintf("/articles/%d", i))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.DeleteFunc(paths, func(p string) bool { return s.unlinked[p] })
}

func numberAfter(p, prefix string) (int, bool) {
	rest, ok := strings.CutPrefix(p, prefix)
	if !ok {
		return 0, false
	}
	rest = strings.TrimSuffix(rest, "/")
	if rest == "" || strings.TrimLeft(rest, "0123456789") != "" || rest[0] == '0' || len(rest) > 6 {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil
}

func calendarMonth(p string) (int, int, bool) {
	rest, ok := strings.CutPrefix(p, "/calendar/")
	if !ok || len(rest) != 7 || rest[4] != '/' {
		return 0, 0, false
	}
	y, err1 := strconv.Atoi(rest[:4])
	m, err2 := strconv.Atoi(rest[5:])
	if err1 != nil || err2 != nil || y < 1000 || m < 1 || m > 12 {
		return 0, 0, false
	}
	return y, m, true
}

// paragraphs returns deterministic body text for a page.
func paragraphs(path string, version int, title string) []string {
	h := fnv.New64a()
	h.Write([]byte(path))
	r := rand.New(rand.NewSource(int64(h.Sum64()) + int64(version))) //nolint:gosec // G404: deterministic page text for tests, seeded by path
	vocab := strings.Fields("crawler index chunk token embedding vector graph entity relation search ranking snippet citation offset heading paragraph sentence document canonical redirect robots sitemap frontier queue depth politeness delay retry backoff extraction language metadata outbox")
	out := []string{fmt.Sprintf("This page is %s. Its marker is %s and no other page carries it.", title, marker(path, version))}
	for p := 0; p < 3; p++ {
		var b strings.Builder
		for w := 0; w < 45; w++ {
			if w > 0 {
				if w%9 == 0 {
					b.WriteString(". ")
				} else {
					b.WriteByte(' ')
				}
			}
			word := vocab[r.Intn(len(vocab))]
			if w%9 == 0 {
				word = strings.ToUpper(word[:1]) + word[1:]
			}
			b.WriteString(word)
		}
		b.WriteByte('.')
		out = append(out, b.String())
	}
	return out
}

func (s *Site) renderPage(path string, version int, res resource) string {
	var b strings.Builder
	esc := html.EscapeString
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>%s | Test Site</title>\n", esc(res.title))
	fmt.Fprintf(&b, "<meta name=\"description\" content=\"%s on the crawler test site.\">\n</head>\n<body>\n", esc(res.title))
	b.WriteString("<div id=\"cookie-banner\" class=\"cookie-consent\" role=\"dialog\">We use cookies to improve your visit. <a href=\"/privacy\">Learn more</a> <button>Accept all</button></div>\n")
	b.WriteString("<header class=\"site-header\"><a class=\"logo\" href=\"/\">Test Site</a>\n<nav class=\"main-nav\"><ul>")
	for _, l := range s.navLinks() {
		fmt.Fprintf(&b, "<li><a href=\"%s\">%s</a></li>", esc(l.href), esc(l.text))
	}
	b.WriteString("</ul></nav></header>\n<div class=\"layout\">\n<aside class=\"sidebar\"><h3>Popular</h3><ul><li><a href=\"/articles/2#popular\">Second article</a></li></ul></aside>\n")
	fmt.Fprintf(&b, "<main><article>\n<h1>%s</h1>\n", esc(res.title))
	for _, p := range paragraphs(path, version, res.title) {
		fmt.Fprintf(&b, "<p>%s</p>\n", esc(p))
	}
	if len(res.links) > 0 {
		b.WriteString("<h2>Further reading</h2>\n<ul>\n")
		for _, l := range res.links {
			fmt.Fprintf(&b, "<li><a href=\"%s\">%s</a></li>\n", esc(l.href), esc(l.text))
		}
		b.WriteString("</ul>\n")
	}
	b.WriteString("</article></main>\n</div>\n<footer class=\"site-footer\"><p>© 2026 Test Site. All rights reserved.</p><a href=\"/privacy\">Privacy</a> <a href=\"/about#team\">About us</a></footer>\n</body>\n</html>\n")
	return b.String()
}

func (s *Site) serve(w http.ResponseWriter, r *http.Request) {
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	defer func() {
		s.mu.Lock()
		s.requests = append(s.requests, Request{
			Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Host: r.Host,
			UserAgent: r.UserAgent(), IfNoneMatch: r.Header.Get("If-None-Match"),
			IfModifiedSince: r.Header.Get("If-Modified-Since"), Status: rec.status, At: time.Now(),
		})
		s.hits[r.URL.Path]++
		if rec.status == http.StatusNotModified {
			s.notMod[r.URL.Path]++
		}
		s.mu.Unlock()
	}()
	w = rec
	path := r.URL.Path
	res := s.resolve(r.URL)

	s.mu.Lock()
	gone := s.gone[path]
	version := s.versionLocked(path)
	modified, ok := s.modified[path]
	if !ok {
		modified = epoch
	}
	var flaky, busy int
	switch path {
	case PathFlaky:
		s.flakyCount++
		flaky = s.flakyCount
	case PathBusy:
		s.busyCount++
		busy = s.busyCount
	}
	s.mu.Unlock()

	if gone {
		http.Error(w, "gone", http.StatusGone)
		return
	}
	switch res.kind {
	case kindNotFound:
		http.Error(w, "not found", http.StatusNotFound)
		return
	case kindRedirect:
		http.Redirect(w, r, res.location, res.status)
		return
	case kindRobots:
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n")
		if s.opts.CrawlDelay > 0 {
			fmt.Fprintf(w, "Crawl-delay: %s\n", strconv.FormatFloat(s.opts.CrawlDelay.Seconds(), 'f', -1, 64))
		}
		fmt.Fprintf(w, "\nSitemap: %s/sitemap.xml\n", s.base)
		return
	case kindSitemap:
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprint(w, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n")
		for _, p := range s.sitemapPaths() {
			fmt.Fprintf(w, "  <url><loc>%s%s</loc><lastmod>%s</lastmod></url>\n", s.base, p, epoch.Format("2006-01-02"))
		}
		fmt.Fprint(w, "</urlset>\n")
		return
	case kindBinary:
		w.Header().Set("Content-Type", res.ctype)
		if res.ctype == "application/pdf" {
			_, _ = io.WriteString(w, "%PDF-1.4\n% test document\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n")
		} else {
			_, _ = w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"))
		}
		return
	case kindHuge:
		s.serveHuge(w)
		return
	}

	switch path {
	case PathSlow:
		select {
		case <-time.After(s.opts.SlowDelay):
		case <-r.Context().Done():
			return
		}
	case PathFlaky:
		if flaky <= s.opts.FlakyFailures {
			http.Error(w, "temporary failure", http.StatusInternalServerError)
			return
		}
	case PathBusy:
		if busy == 1 {
			w.Header().Set("Retry-After", strconv.Itoa(s.opts.RetryAfter))
			http.Error(w, "slow down", http.StatusTooManyRequests)
			return
		}
	}

	etag := fmt.Sprintf("%q", marker(path, version))
	w.Header().Set("ETag", etag)
	w.Header().Set("Last-Modified", modified.Format(http.TimeFormat))
	if notModified(r, etag, modified) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if res.kind == kindText {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "Release notes\n\nVersion 1.2 of the test site. Marker %s.\n\nThis plain-text page must be indexed as it is.\n", marker(path, version))
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprint(w, s.renderPage(path, version, res))
}

func notModified(r *http.Request, etag string, modified time.Time) bool {
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		for _, t := range strings.Split(inm, ",") {
			t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
			if t == etag || t == "*" {
				return true
			}
		}
		return false
	}
	if ims := r.Header.Get("If-Modified-Since"); ims != "" {
		if t, err := http.ParseTime(ims); err == nil && !modified.After(t) {
			return true
		}
	}
	return false
}

func (s *Site) serveHuge(w http.ResponseWriter) {
	const head = "<!DOCTYPE html><html><head><title>Huge page</title></head><body><h1>Huge page</h1>\n"
	const tail = "</body></html>\n"
	para := "<p>This paragraph repeats until the page is larger than any sensible body limit.</p>\n"
	n := s.opts.HugeBytes
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(n))
	written := 0
	write := func(str string) bool {
		if written+len(str) > n {
			str = str[:n-written]
		}
		k, err := w.Write([]byte(str))
		written += k
		return err == nil && written < n
	}
	if !write(head) {
		return
	}
	for written < n-len(tail) {
		if !write(para) {
			return
		}
	}
	for written < n {
		if !write(tail) {
			return
		}
	}
}

type statusRecorder struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (r *statusRecorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	r.wrote = true
	return r.ResponseWriter.Write(b)
}

// sortedKeys returns the keys of m in order.
func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
