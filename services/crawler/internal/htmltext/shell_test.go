package htmltext

import (
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kgsearch/kgsearch/services/crawler/internal/testsite"
)

func shellDoc(head, body string) string {
	return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Docs</title>` + head +
		`</head><body>` + body + `</body></html>`
}

func TestDetectShellFlagsClientRenderedPages(t *testing.T) {
	for _, tc := range []struct {
		name, page, evidence string
	}{
		{"docsify", shellDoc(`<link rel="stylesheet" href="//cdn.example/docsify/vue.css">`,
			`<div id="app"></div><script>window.$docsify = {name: 'x'}</script><script src="//cdn.example/docsify@4"></script>`),
			`an empty <div id="app">`},
		{"docsify with a placeholder", shellDoc("", `<div id="app">Loading ...</div><script src="docsify.js"></script>`),
			`<div id="app"> holding only "Loading ..."`},
		{"react build", shellDoc("", `<noscript>You need to enable JavaScript to run this app.</noscript><div id="root"></div><script src="/static/js/main.js"></script>`),
			`an empty <div id="root">`},
		{"next export", shellDoc("", `<div id="__next"></div><script id="__NEXT_DATA__" type="application/json">{"props":{}}</script><script src="/_next/main.js" defer></script>`),
			`an empty <div id="__next">`},
		{"vite module script in head", shellDoc(`<script type="module" src="/src/main.ts"></script>`, `<div id="app"></div>`),
			`an empty <div id="app">`},
		{"angular custom element", shellDoc("", `<app-root></app-root><script src="runtime.js" type="module"></script>`),
			`an empty <app-root>`},
		{"mount of any name beside server-rendered navigation", shellDoc("",
			`<header><a href="/">Acme</a></header><nav><a href="/a">Alpha guide</a> <a href="/b">Beta guide</a> <a href="/c">Gamma reference</a></nav>
<div id="wrapper"><div id="content-mount"></div></div><footer>Copyright 2026 Acme Corporation. All rights reserved.</footer><script src="bundle.js"></script>`),
			`an empty <div id="content-mount">`},
		{"a title beside the mount", shellDoc("", `<h1>Changelog</h1><div id="changes"></div><script src="changes.js"></script>`),
			`an empty <div id="changes">`},
		{"noscript only", shellDoc("", `<noscript><p>This site requires JavaScript.</p></noscript><div class="brand">Acme</div><script>render()</script>`),
			`a <noscript> saying "This site requires JavaScript."`},
		{"body built from nothing", shellDoc(`<script src="/app.js" defer></script>`, ``),
			`a body with nothing but scripts`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sh := DetectShell([]byte(tc.page), "text/html; charset=utf-8")
			if sh == nil {
				t.Fatalf("not flagged:\n%s", tc.page)
			}
			if got := sh.Evidence(); got != tc.evidence {
				t.Errorf("evidence: got %q, want %q", got, tc.evidence)
			}
			if sh.Scripts == 0 {
				t.Errorf("scripts: got 0")
			}
		})
	}
}

func TestDetectShellSparesPagesWithText(t *testing.T) {
	for _, tc := range []struct{ name, page string }{
		{"server-rendered app root", shellDoc("", `<div id="root"><h1>Getting started</h1><p>Install the package with pip, then import it and call
configure() once before the first request.</p></div><script src="/static/js/main.js"></script>`)},
		{"short real page", shellDoc("", `<main><h1>Release 1.2</h1><p>Fixes the login bug and the crash on start.</p></main><script src="/analytics.js"></script>`)},
		{"few words beside an empty widget", shellDoc("", `<h1>Release notes</h1><p>Version 1.2 fixes the login bug.</p><div id="comments"></div><script src="comments.js"></script>`)},
		{"short server-rendered page in an app root", shellDoc("", `<div id="root"><p>Moved to the new site.</p></div><script src="/hydrate.js"></script>`)},
		{"short server-rendered heading in an app root", shellDoc("", `<div id="app"><h1>Page moved</h1></div><script src="/hydrate.js"></script>`)},
		{"short page and a JavaScript notice", shellDoc("", `<noscript>Please enable JavaScript.</noscript><p>Moved to the new site.</p><script src="/a.js"></script>`)},
		// sphinx_rtd_theme names its content wrapper like navigation; an
		// index of links inside it reads as boilerplate.
		{"content in a wrapper named like navigation", shellDoc(`<script src="_static/jquery.js"></script>`,
			`<nav class="wy-nav-side"><a href="/">Home</a></nav><section class="wy-nav-content-wrap"><div role="main"><h1>Index</h1>
<table><tr><td><ul><li><a href="a.html#x">add() (Response method)</a></li><li><a href="b.html#y">body (Request attribute)</a></li></ul></td></tr></table></div></section>`)},
		{"empty mount without scripts", shellDoc("", `<div id="app"></div>`)},
		{"only a JSON data block", shellDoc(`<script type="application/ld+json">{"@type":"WebPage"}</script>`, `<div id="app"></div>`)},
		{"an image in the mount", shellDoc("", `<div id="app"><img src="/diagram.png" alt=""></div><script src="zoom.js"></script>`)},
		{"a redirect by an inline script", shellDoc("", `<script>location.replace("/docs/")</script>`)},
		{"noscript about something else", shellDoc("", `<noscript><img src="/pixel.gif"></noscript><p>Short note.</p><script>track()</script>`)},
		{"real text and a JavaScript notice", shellDoc("", `<noscript>Enable JavaScript for search.</noscript><article><h1>Configuration</h1>
<p>Every setting has a default; the file is read once at start and again on SIGHUP, so edits take effect without a restart.</p></article><script src="search.js"></script>`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if sh := DetectShell([]byte(tc.page), "text/html"); sh != nil {
				t.Errorf("flagged (%s):\n%s", sh.Evidence(), tc.page)
			}
		})
	}
}

// withScript adds an external script at the end of a page's body: every
// real page must stay unflagged whatever scripts it loads.
func withScript(page string) string {
	const s = `<script src="/assets/app.js"></script><div id="portal-root"></div>`
	if i := strings.LastIndex(strings.ToLower(page), "</body>"); i >= 0 {
		return page[:i] + s + page[i:]
	}
	return page + s
}

func TestDetectShellSparesTestdataPages(t *testing.T) {
	files, err := filepath.Glob("testdata/*.html")
	if err != nil || len(files) == 0 {
		t.Fatalf("testdata pages: %v (%d)", err, len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, page := range []string{string(b), withScript(string(b))} {
			if sh := DetectShell([]byte(page), "text/html"); sh != nil {
				t.Errorf("%s flagged as a shell (%s)", f, sh.Evidence())
			}
		}
	}
}

func TestDetectShellOnTestSites(t *testing.T) {
	site := testsite.New(testsite.Options{})
	defer site.Close()
	pages := site.CanonicalPages(testsite.Crawl{MaxDepth: 10, RespectRobots: false, UseSitemap: true})
	checked := 0
	for _, u := range pages {
		resp, err := http.Get(u) // loopback httptest server
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		ct := resp.Header.Get("Content-Type")
		if !strings.HasPrefix(ct, "text/html") {
			continue
		}
		checked++
		for _, page := range []string{string(b), withScript(string(b))} {
			if sh := DetectShell([]byte(page), ct); sh != nil {
				t.Errorf("%s flagged as a shell (%s)", u, sh.Evidence())
			}
		}
	}
	if checked < 10 {
		t.Errorf("checked %d HTML pages of the test site, want at least 10", checked)
	}

	for path, page := range testsite.ShellPages() {
		sh := DetectShell([]byte(page), "text/html; charset=utf-8")
		want := path != testsite.PathShellAbout
		if got := sh != nil; got != want {
			t.Errorf("shell site %s: flagged %v, want %v", path, got, want)
		}
		// The extractor agrees: a shell has (next to) no text, the
		// server-rendered page has its text.
		p, err := Extract([]byte(page), &url.URL{Scheme: "http", Host: "shell.test", Path: path}, "text/html", nil)
		if err != nil {
			t.Fatal(err)
		}
		if short := len(strings.TrimSpace(p.Text)) <= ShellMaxText; short != want {
			t.Errorf("shell site %s: extracted %d bytes of text %q", path, len(p.Text), p.Text)
		}
	}
}

func FuzzDetectShell(f *testing.F) {
	f.Add([]byte(shellDoc("", `<div id="app">Loading ...</div><script src="docsify.js"></script>`)), "text/html")
	f.Add([]byte(shellDoc("", `<noscript><p>Enable JavaScript \xff</p></noscript><x-app></x-app><script type=module>`)), "")
	f.Add([]byte("<script>a</script><div id='\xe2\x82'>"), "text/html; charset=latin1")
	f.Fuzz(func(t *testing.T, body []byte, contentType string) {
		sh := DetectShell(body, contentType)
		if sh == nil {
			return
		}
		if sh.Scripts == 0 {
			t.Fatalf("a shell without scripts: %+v", sh)
		}
		if ev := sh.Evidence(); ev == "" || !utf8.ValidString(ev) {
			t.Fatalf("evidence %q", ev)
		}
	})
}

// BenchmarkDetectShellNested measures a page of many nested, empty, named
// elements: every one is a candidate mount point, and the page is measured
// in one pass.
func BenchmarkDetectShellNested(b *testing.B) {
	var sb strings.Builder
	for i := range 400 {
		sb.WriteString(`<div id="d` + strconv.Itoa(i) + `">`)
	}
	body := []byte(shellDoc(`<script src="app.js"></script>`, sb.String()))
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if DetectShell(body, "text/html") == nil {
			b.Fatal("not flagged")
		}
	}
}
