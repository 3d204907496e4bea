package testsite

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
)

// Paths of the shell site's pages. The first four are client-rendered
// shells: their HTML holds no text, a script builds the page in the
// browser; PathShellAbout is rendered on the server (and hydrated by a
// script), with its text in the HTML.
const (
	PathShellDocsify  = "/"       // Docsify: <div id="app">Loading ...</div> and its config script
	PathShellReact    = "/guide/" // a React build: <noscript> and an empty <div id="root">
	PathShellNext     = "/api/"   // a Next.js export without pre-rendering: an empty <div id="__next">
	PathShellNoscript = "/faq/"   // no mount point, only a <noscript> asking for JavaScript
	PathShellAbout    = "/about/" // server-rendered text inside <div id="root">
)

// ShellSite serves a small documentation site whose pages, but one, are
// rendered by JavaScript in the browser, for tests of what the crawler says
// about such sites. Every page links every other in a server-rendered <nav>,
// so a crawl from SeedURL reaches them all at depth 1.
type ShellSite struct {
	srv  *httptest.Server
	mu   sync.Mutex
	hits map[string]int
}

// NewShellSite starts the shell site on a loopback httptest server.
func NewShellSite() *ShellSite {
	s := &ShellSite{hits: map[string]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// URL is the site's base URL, without a trailing slash.
func (s *ShellSite) URL() string { return s.srv.URL }

// SeedURL is the start page.
func (s *ShellSite) SeedURL() string { return s.srv.URL + PathShellDocsify }

// Addr is the server's host:port, for netguard's allow list.
func (s *ShellSite) Addr() string {
	u, _ := url.Parse(s.srv.URL)
	return net.JoinHostPort(u.Hostname(), u.Port())
}

// Close stops the server.
func (s *ShellSite) Close() { s.srv.Close() }

// Hits returns how often path was requested.
func (s *ShellSite) Hits(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

// ShellPaths are the paths of the client-rendered pages, sorted.
func ShellPaths() []string {
	p := []string{PathShellDocsify, PathShellReact, PathShellNext, PathShellNoscript}
	sort.Strings(p)
	return p
}

// ShellPages returns every page of the shell site by path, as served.
func ShellPages() map[string]string {
	return map[string]string{
		PathShellDocsify: shellPage("Acme docs", `<div id="app">Loading ...</div>
<script>window.$docsify = {name: 'Acme', repo: 'acme/docs', loadSidebar: true}</script>
<script src="/lib/docsify.min.js"></script>`),
		PathShellReact: shellPage("Guide · Acme", `<noscript>You need to enable JavaScript to run this app.</noscript>
<div id="root"></div>
<script type="module" src="/assets/index-4f2a.js"></script>`),
		PathShellNext: shellPage("API · Acme", `<div id="__next"></div>
<script id="__NEXT_DATA__" type="application/json">{"props":{"pageProps":{}},"page":"/api"}</script>
<script src="/_next/static/chunks/main.js" defer></script>`),
		PathShellNoscript: shellPage("FAQ · Acme", `<noscript><p>This site requires JavaScript. Please enable it in your browser.</p></noscript>
<script>document.write('<div class="faq"></div>'); loadFaq();</script>`),
		PathShellAbout: shellPage("About · Acme", `<div id="root"><main><h1>About Acme</h1>
<p>Acme builds command line tools for people who maintain documentation sites. This page is rendered on the
server and hydrated in the browser, so its text is in the HTML the crawler reads.</p>
<h2>Contact</h2><p>Write to the maintainers through the issue tracker of the project.</p></main></div>
<script src="/assets/hydrate.js"></script>`),
	}
}

// shellPage is a page with the site's navigation bar above body.
func shellPage(title, body string) string {
	var nav strings.Builder
	for _, l := range [][2]string{{PathShellDocsify, "Home"}, {PathShellReact, "Guide"}, {PathShellNext, "API"},
		{PathShellNoscript, "FAQ"}, {PathShellAbout, "About"}} {
		fmt.Fprintf(&nav, `<a href="%s">%s</a> `, l[0], l[1])
	}
	return fmt.Sprintf(`<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>%s</title><link rel="stylesheet" href="/assets/theme.css"></head>
<body>
<nav class="app-nav">%s</nav>
%s
</body>
</html>
`, title, nav.String(), body)
}

func (s *ShellSite) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.hits[r.URL.Path]++
	s.mu.Unlock()
	page, ok := ShellPages()[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = io.WriteString(w, page)
}
