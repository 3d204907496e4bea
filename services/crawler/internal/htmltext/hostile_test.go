package htmltext

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// hostilePage returns an HTML page of about size bytes built to make a
// main-text extractor work hard: kind names the shape.
func hostilePage(kind string, size int) []byte {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html><html><head><title>Hostile</title></head><body>")
	for b.Len() < size {
		switch kind {
		case "deep-divs": // nesting close to the parser's 512 cap
			const depth = 500
			b.WriteString(strings.Repeat("<div>", depth))
			b.WriteString("<p>Some words of text, enough to score as a paragraph, again and again.</p>")
			b.WriteString(strings.Repeat("</div>", depth))
		case "deep-divs-text": // text at every level
			const depth = 500
			for i := 0; i < depth; i++ {
				b.WriteString("<div>word, ")
			}
			b.WriteString(strings.Repeat("</div>", depth))
		case "siblings": // very many sibling paragraphs in one div
			b.WriteString("<div>")
			for i := 0; i < 2000; i++ {
				b.WriteString("<p>Some words, a comma.</p>")
			}
			b.WriteString("</div>")
		case "flat-divs": // very many sibling divs in the body
			b.WriteString("<div>x</div>")
		case "attributes": // huge attribute counts
			b.WriteString("<div")
			for i := 0; i < 1000; i++ {
				fmt.Fprintf(&b, " data-a%d=\"v\"", i)
			}
			b.WriteString(" class=\"content article nav footer\"><p>Some text, with a comma.</p></div>")
		case "tiny-text": // many tiny text nodes
			b.WriteString("<p>")
			for i := 0; i < 1000; i++ {
				b.WriteString("a<b>b</b>")
			}
			b.WriteString("</p>")
		case "tables": // many tables
			b.WriteString("<table><tr><td>a, b</td><td>c</td></tr><tr><td><a href=\"/x\">x</a></td><td>d</td></tr></table>")
		case "nested-tables": // tables nested in tables
			const depth = 120
			b.WriteString(strings.Repeat("<table><tr><td>cell, ", depth))
			b.WriteString(strings.Repeat("</td></tr></table>", depth))
		case "nested-tables-30": // tables nested 30 deep (120 elements)
			const depth = 30
			b.WriteString(strings.Repeat("<table><tr><td>cell, ", depth))
			b.WriteString(strings.Repeat("</td></tr></table>", depth))
		case "nested-nav": // blocks named navigation, nested, with prose
			const depth = 500
			b.WriteString(strings.Repeat(`<div class="nav">words, `, depth))
			b.WriteString(strings.Repeat("</div>", depth))
		case "nested-lists": // deeply nested lists
			const depth = 240
			b.WriteString(strings.Repeat("<ul><li>item, ", depth))
			b.WriteString(strings.Repeat("</li></ul>", depth))
		case "links": // many links
			fmt.Fprintf(&b, "<a href=\"/p%d\">link %d</a> ", b.Len(), b.Len())
		default:
			panic("unknown hostile page kind " + kind)
		}
	}
	b.WriteString("</body></html>")
	return []byte(b.String())
}

// hostileKinds are the shapes hostilePage builds.
var hostileKinds = []string{"deep-divs", "deep-divs-text", "siblings", "flat-divs", "attributes", "tiny-text", "tables", "nested-tables", "nested-tables-30", "nested-lists", "nested-nav", "links"}

// TestExtractHostilePages checks that pages too large or too deeply nested
// for the extraction libraries get the simple extraction, text and all, and
// that the shell check still reads them.
func TestExtractHostilePages(t *testing.T) {
	u := mustURL(t, "https://hostile.example.com/page.html")
	for _, tc := range []struct {
		kind string
		size int
		want string
	}{
		{"deep-divs", 512 << 10, "Some words of text"},
		{"deep-divs-text", 512 << 10, "word,"},
		{"nested-tables", 256 << 10, "cell,"},
		{"nested-lists", 256 << 10, "item,"},
		{"nested-nav", 512 << 10, "words,"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			body := hostilePage(tc.kind, tc.size)
			if nodes, work := documentSize(mustParse(t, body)); nodes <= MaxLibraryNodes && work <= MaxLibraryWork {
				t.Fatalf("page within the bounds: %d nodes, work %d", nodes, work)
			}
			p, err := Extract(body, u, "text/html", nil)
			if err != nil {
				t.Fatal(err)
			}
			if p.Extractor != ExtractorSimple || p.Title != "Hostile" || !strings.Contains(p.Text, tc.want) {
				t.Errorf("extractor %q, title %q, text %.80q", p.Extractor, p.Title, p.Text)
			}
		})
	}
	t.Run("many-nodes", func(t *testing.T) {
		// Flat, but more nodes than the libraries may walk.
		body := []byte("<html><head><title>Flat</title></head><body><main><p>" +
			strings.Repeat("<br>word", MaxLibraryNodes/2+1) + "</p></main><footer>Footer text</footer></body></html>")
		p, err := Extract(body, u, "text/html", nil)
		if err != nil {
			t.Fatal(err)
		}
		if p.Extractor != ExtractorSimple || !strings.HasPrefix(p.Text, "word") || strings.Contains(p.Text, "Footer") {
			t.Errorf("extractor %q, text %.40q ... %.40q", p.Extractor, p.Text, p.Text[max(0, len(p.Text)-40):])
		}
	})
	t.Run("shell", func(t *testing.T) {
		// Empty lists nested in list items, and a script: a shell.
		body := "<html><body><script src=/app.js></script>" +
			strings.Repeat(strings.Repeat("<ul><li>", 250)+strings.Repeat("</li></ul>", 250), 100) + "</body></html>"
		if sh := DetectShell([]byte(body), "text/html"); sh == nil || sh.Scripts != 1 {
			t.Errorf("DetectShell = %+v, want a shell with one script", sh)
		}
	})
}

// TestHoldsContentText checks that holdsContentText agrees with
// contentTextLen on every element of a page.
func TestHoldsContentText(t *testing.T) {
	doc := mustParse(t, []byte(`<html><body><ul><li> <ul><li><script>x</script></li></ul></li>
		<li><nav>menu</nav><span> </span><ul><li><b>yes</b></li></ul></li>
		<li hidden>hidden</li><li><div style="display:none">no</div> </li></ul></body></html>`))
	holds, memo := map[*html.Node]bool{}, newTextMemo()
	walkElements(doc, func(n *html.Node) bool {
		if got, want := holdsContentText(n, holds, memo), contentTextLen(n) > 0; got != want {
			t.Errorf("<%s>: holdsContentText = %v, contentTextLen > 0 = %v", n.Data, got, want)
		}
		return true
	})
}

func mustParse(t testing.TB, body []byte) *html.Node {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestTextMemo checks that the remembered measures agree with the direct
// ones on every element of a page, and so do the boilerplate rules.
func TestTextMemo(t *testing.T) {
	doc := mustParse(t, []byte(`<html><body>
		<div class="nav-bar"><a href="/a">Home</a> | <a href="/b">Up</a></div>
		<div class="navigation"><p>Prose about navigation, a paragraph of it.</p><div class="nav-x">short</div></div>
		<ul class="menu"><li><a href="/c">One</a></li><li>Two <script>x()</script></li></ul>
		<div class="cookie-banner">We use cookies. <a href="/ok">OK</a></div>
		<div class="search-results"></div>
		<div class="site-footer">Copyright <nav>nav text</nav></div>
		<div class="pager"><a rel="next" href="/n">Next</a></div>
		<section><header>Title</header><dl><dt>x</dt></dl></section>
		<a href="/d"><span>linked <b>text</b></span></a>
		</body></html>`))
	m := newTextMemo()
	var nodes []*html.Node
	walkElements(doc, func(n *html.Node) bool { nodes = append(nodes, n); return true })
	// Deepest first, then outermost first: the memo must not depend on the
	// order it is asked in.
	for _, order := range [][]*html.Node{reversed(nodes), nodes} {
		for _, n := range order {
			if got, want := m.textLen(n), textLen(n); got != want {
				t.Errorf("<%s class=%q>: textLen %d, want %d", n.Data, attr(n, "class"), got, want)
			}
			if got, want := m.linkShare(n), linkShare(n); got != want {
				t.Errorf("<%s class=%q>: linkShare %v, want %v", n.Data, attr(n, "class"), got, want)
			}
			if got, want := m.hasProseBlock(n), hasProseBlock(n); got != want {
				t.Errorf("<%s class=%q>: hasProseBlock %v, want %v", n.Data, attr(n, "class"), got, want)
			}
			if got, want := boilerplateIn(n, m), isBoilerplate(n); got != want {
				t.Errorf("<%s class=%q>: boilerplate %v, want %v", n.Data, attr(n, "class"), got, want)
			}
		}
	}
}

func reversed(nodes []*html.Node) []*html.Node {
	r := make([]*html.Node, len(nodes))
	for i, n := range nodes {
		r[len(nodes)-1-i] = n
	}
	return r
}
