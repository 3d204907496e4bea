package htmltext

import (
	"strings"
	"testing"

	"github.com/go-shiori/dom"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// TestExtractNestedSections covers a reference page without a main landmark
// whose sections nest (a section per topic inside the page's section, API
// entries as definition lists inside those): readability alone keeps only
// the best-scored API entry. The whole page must come through, without the
// header, pager and table-of-contents column around it.
func TestExtractNestedSections(t *testing.T) {
	p := extractFile(t, "nested-sections.html", "http://example.com/manual/ref/gears.html", nil)
	if p.Extractor != ExtractorContainer {
		t.Errorf("Extractor = %q, want %q", p.Extractor, ExtractorContainer)
	}
	textHas(t, p, // first, middle and last section, with their API entries and code
		"Gear reference\n\nThis page describes the gear classes of Widgetry",
		"Choosing a gear\n\nSection 1 covers choosing a gear. In short, the tooth count decides the ratio",
		"class widgetry.Gear(teeth, module=1.0)\n\nCreate a Gear for use in a machine.",
		"Section 4 covers measuring backlash.",
		"Compound note 9: when the outer gear turns",
		">>> part = widgetry.Lubricant(grade=1)\n>>> part.check()\n[]",
		"Section 8 covers storing spare parts. In short, dry storage keeps bare steel from rusting",
		"check()\n\nReturn a list of problems found with this sparepart;")
	textLacks(t, p, "Widgetry 4.1 manual", "Table of contents", "previous", "Contents", "Previous topic", "Pulleys and belts", "Last update", "Nov 1, 2026", "- Gear reference", "- Choosing a gear", "Copyright", "¶")
	var path []string
	i := strings.Index(p.Text, "Section 8 covers")
	for _, s := range p.Sections {
		if s.Start <= i && i < s.End {
			path = s.HeadingPath
		}
	}
	if d := cmp.Diff([]string{"Gear reference", "Storing spare parts"}, path); d != "" {
		t.Errorf("heading path of the last section (-want +got):\n%s", d)
	}
}

// TestExtractBlogKeepsReadability covers a page whose content container
// also holds a sidebar column, share links and reader comments: readability's
// article is the whole post, so it stays the choice and none of the rest
// comes in.
func TestExtractBlogKeepsReadability(t *testing.T) {
	p := extractFile(t, "blog-comments.html", "http://example.com/blog/plane-blade.html", nil)
	if p.Extractor != ExtractorReadability {
		t.Errorf("Extractor = %q, want %q", p.Extractor, ExtractorReadability)
	}
	textHas(t, p, "A dull plane tears the grain", "A whisper-thin, unbroken shaving means you are done.")
	textLacks(t, p, "COOKIE-TEXT", "MASTHEAD-TEXT", "COMMENT-TEXT", "14 comments", "WIDGET-TEXT", "Popular posts", "Share this", "FOOTER-TEXT")
}

func TestContentContainerSkipsCommentThreads(t *testing.T) {
	// A thread named by its class stays out of the container; an element
	// whose id is "comments" stays in (documentation derives ids from
	// headings: that is the section about comments in a language).
	page := `<html><body><div id="top"><a href="/">Home</a> <a href="/b">Blog</a></div><div id="c">` +
		`<div class="post"><h1>Title</h1>` + strings.Repeat("<p>Post text with enough words to count as prose in this test page.</p>", 8) + `</div>` +
		`<div class="comments-area"><ol class="comment-list">` + strings.Repeat("<li><p>COMMENT text that is long enough to matter for the share.</p></li>", 8) + `</ol></div>` +
		`<div id="comments"><h2>Comments</h2><p>A comment starts with a hash sign and ends at the end of the line.</p></div>` +
		`</div></body></html>`
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	c, need := contentContainer(findFirst(doc, atom.Body), false)
	if c == nil {
		t.Fatal("no container found")
	}
	c = pruneContainer(dom.Clone(c, true))
	text := collapse(textOf(c))
	if attr(c, "id") != "c" || strings.Contains(text, "COMMENT") || !strings.Contains(text, "A comment starts with a hash sign") {
		t.Errorf("container <%s id=%q> holds %q; want div#c without the comment thread", c.Data, attr(c, "id"), text)
	}
	// The core is the post; the comments section is a content sibling with
	// a heading, so the container is their parent.
	post := findFirst(doc, atom.H1).Parent
	if want := int(containerRatio * float64(textLen(post))); need != want {
		t.Errorf("need = %d, want %d (from the post's length: the comments section is short)", need, want)
	}
}

func TestIsSiteTitle(t *testing.T) {
	tests := map[string]bool{
		`<h1><a href="../index.html">Example 3.2 documentation</a></h1>`:  true,
		`<h1><a href="/"><img alt="logo"> Example</a> </h1>`:              true,
		`<h1>Widgets<a class="headerlink" href="#widgets">¶</a></h1>`:     false,
		`<h1><a class="toc-backref" href="#id1">Programming FAQ</a></h1>`: false,
		`<h1>Release notes for <a href="/v2/">version 2</a></h1>`:         false,
		`<h1>Plain title</h1>`: false,
	}
	for src, want := range tests {
		doc, err := html.Parse(strings.NewReader(src))
		if err != nil {
			t.Fatal(err)
		}
		if got := isSiteTitle(findFirst(doc, atom.H1)); got != want {
			t.Errorf("isSiteTitle(%s) = %v, want %v", src, got, want)
		}
	}
}

// TestExtractSkipsSiteTitleHeading: readability's content lacks an h1 and
// the page's only h1 is the site name in the header; it must not become the
// top heading of the text.
func TestExtractSkipsSiteTitleHeading(t *testing.T) {
	page := `<html><head><title>Pulleys — Widgetry manual</title></head><body>` +
		`<div id="top"><h1><a href="../index.html">Widgetry manual</a></h1><a href="../contents.html">Contents</a></div>` +
		`<div id="content"><h2>Pulleys</h2>` + strings.Repeat("<p>A pulley changes the direction of a force, and a block of several pulleys also changes its size.</p>", 6) + `</div>` +
		`</body></html>`
	p, err := Extract([]byte(page), mustURL(t, "http://example.com/manual/pulleys.html"), "text/html", nil)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, p)
	if strings.Contains(p.Text, "Widgetry manual") || len(p.Headings) == 0 || p.Headings[0].Text != "Pulleys" {
		t.Errorf("headings %v, text:\n%s\nwant the first heading Pulleys and no site name", p.Headings, p.Text)
	}
}

func TestIsBoilerplateSparesNamedContent(t *testing.T) {
	tests := map[string]bool{
		// documentation entries and sections named after their subject
		`<div class="section" id="s-csrf-cookie-age"><span id="std-setting-CSRF_COOKIE_AGE"></span><h3>CSRF_COOKIE_AGE<a class="headerlink" href="#csrf-cookie-age">¶</a></h3><p>Age in seconds.</p></div>`: false,
		`<section id="menus"><h2>Menus</h2><p>The File menu opens files.</p></section>`:                                                                                                                     false,
		`<dl><dt id="django.http.HttpRequest.COOKIES">HttpRequest.COOKIES</dt><dd>A dictionary.</dd></dl>`:                                                                                                  false,
		`<p>Choose <span class="menuselection">File ‣ Open</span>.</p>`:                                                                                                                                     false,
		// boilerplate
		`<div id="cookie-banner"><h2>We use cookies</h2><p>Accept them.</p></div>`:             true,
		`<div class="cookie-consent">We use cookies.</div>`:                                    true,
		`<ul class="menu"><li><a href="/">Home</a></li></ul>`:                                  true,
		`<div id="sidebar"><h3>Contents</h3></div>`:                                            true,
		"<div class=\"menu-wrapper\"><a href=\"/\">Home</a> <a href=\"/docs/\">Docs</a></div>": true,
		// named like boilerplate, but prose: a text on menus or cookies
		"<div class=\"menu-notes\"><h2>Drop-down lists</h2><p>How the application's drop-down lists behave.</p></div>":                                                      false,
		"<div class=\"cookie-guide\">" + strings.Repeat("<p>A cookie is a small piece of data that the server asks the browser to store and send back.</p>", 30) + "</div>": false,
		`<div class="breadcrumbs"><a href="/">Home</a> » Guide</div>`:                                                                                                       true,
		// footers, navigation named nav*, pager bars (Doxygen, texinfo, DocBook)
		`<address class="footer"><small>Generated by <a href="https://example.org/"><img src="logo.svg" alt="gen"></a> 1.9</small></address>`:                                                                                                                          true,
		`<div id="nav-path" class="navpath"><ul><li class="navelem"><a class="el" href="dir_1.html">include</a></li></ul></div>`:                                                                                                                                       true,
		`<div class="navheader"><table><tr><th colspan="3">Chapter 26. Gear Maintenance</th></tr><tr><td><a accesskey="p" href="a.html">Prev</a></td><th>Part III. Keeping the Gadget Running</th><td><a accesskey="n" href="c.html">Next</a></td></tr></table></div>`: true,
		`<div class="navigation-guide"><h2>Moving around</h2><p>Use the arrow keys.</p></div>`:                                                                                                                                                                         false,
		`<div class="navigation-guide"><table><tr><td>Arrow keys move the cursor between the fields of the current form, one at a time; the tab key moves to the next group of fields and the escape key leaves the form without saving anything.</td></tr><tr><td>Holding the shift key reverses the direction of the tab key, so that the previous group of fields gets the focus.</td></tr></table></div>`: false,
		`<div class="navfooter"><table><tr><td><a accesskey="p" href="a.html">Prev</a></td><td><a accesskey="n" href="c.html">Next</a></td></tr></table></div>`:                                                              true,
		`<div class="header">Next: <a href="b.html" rel="next">Bolts</a>, Up: <a href="i.html" rel="up">Parts</a> [<a href="i.html#c">Contents</a>]</div>`:                                                                   true,
		`<div class="page-wrapper"><div class="content"><h1><a class="header" href="#lex">Lexical structure</a></h1></div><div class="buttons"><a rel="prev" href="n.html"></a><a rel="next" href="i.html"></a></div></div>`: false,
		"<div class=\"navigation-notes\"><h2>Keyboard navigation</h2><p>The arrow keys move the cursor between fields; the tab key moves to the next group of fields.</p></div>":                                             false,
		"<div class=\"aside-note\"><p>Continue with <a rel=\"next\" href=\"setup.html\">setup</a>, which explains how the tool reads its configuration file and which options it accepts.</p></div>":                         false,
	}
	for src, want := range tests {
		doc, err := html.Parse(strings.NewReader(src))
		if err != nil {
			t.Fatal(err)
		}
		// The element under test is the first element in the body, or the
		// one carrying the id or class when it is nested.
		var n *html.Node
		var find func(*html.Node)
		find = func(c *html.Node) {
			for ; c != nil && n == nil; c = c.NextSibling {
				if c.Type == html.ElementNode && tagOf(c) != atom.Html && tagOf(c) != atom.Head && tagOf(c) != atom.Body &&
					tagOf(c) != atom.P && tagOf(c) != atom.Dl && (attr(c, "id") != "" || attr(c, "class") != "") {
					n = c
					return
				}
				find(c.FirstChild)
			}
		}
		find(doc)
		if n == nil {
			t.Fatalf("no element with an id or class in %s", src)
		}
		if got := isBoilerplate(n); got != want {
			t.Errorf("isBoilerplate(<%s id=%q class=%q>) = %v, want %v", n.Data, attr(n, "id"), attr(n, "class"), got, want)
		}
	}
}

// TestExtractPrunesReadabilitySidebar: on a short page readability takes
// the element holding both the text and the sidebar column; the sidebar must
// not come through.
func TestExtractPrunesReadabilitySidebar(t *testing.T) {
	page := `<html><head><title>Widgetry 2.0.3 release notes</title></head><body><div id="doc"><div id="bd">` +
		`<div id="main"><div class="col"><div class="inner"><div class="section" id="s-widgetry-2-0-3-release-notes"><h1>Widgetry 2.0.3 release notes</h1>` +
		`<p><em>March 3, 2026</em></p><p>Widgetry 2.0.3 fixes two bugs in 2.0.2.</p><div class="section" id="s-bugfixes"><h2>Bugfixes</h2>` +
		`<ul><li>Fixed a crash of <code>Gear.check()</code> for a gear without teeth (<a href="https://bugs.example.com/1">#1</a>).</li>` +
		`<li>Fixed the ratio of compound gears with an idler (<a href="https://bugs.example.com/2">#2</a>).</li></ul></div></div></div></div></div>` +
		`<div class="col" id="sidebar"><div class="toc-box" role="navigation"><div><h3><a href="../contents.html">Table of Contents</a></h3>` +
		`<ul><li><a href="#">Widgetry 2.0.3 release notes</a><ul><li><a href="#bugfixes">Bugfixes</a></li></ul></li></ul></div>` +
		`<div><h4>Previous topic</h4><p class="topless"><a href="2.0.4.html">Widgetry 2.0.4 release notes</a></p></div></div>` +
		`<h3>Last update:</h3><p class="topless">Nov 1, 2026</p></div>` +
		`</div></div></body></html>`
	p, err := Extract([]byte(page), mustURL(t, "http://example.com/releases/2.0.3.html"), "text/html", nil)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, p)
	if !strings.Contains(p.Text, "Fixed the ratio of compound gears with an idler (#2).") {
		t.Errorf("text lacks the release notes:\n%s", p.Text)
	}
	for _, s := range []string{"Table of Contents", "Previous topic", "Last update", "Nov 1, 2026"} {
		if strings.Contains(p.Text, s) {
			t.Errorf("text contains sidebar text %q (extractor %s):\n%s", s, p.Extractor, p.Text)
		}
	}
}

// TestExtractKeepsSectionsNamedLikeLayout: documentation names sections
// after their headings, and readability reads words such as "comments" or
// "header" in ids as layout; such sections must stay in the text.
func TestExtractKeepsSectionsNamedLikeLayout(t *testing.T) {
	para := func(topic string) string {
		return "<p>" + topic + " are described here in detail, with the rules the tokenizer follows, the exceptions it allows, and the errors it reports.</p>"
	}
	page := `<html><head><title>Lexical rules — Widgetry manual</title></head><body><div class="document"><div class="body">` +
		`<section id="lexical-rules"><h1>Lexical rules</h1>` + para("Tokens") + para("Lines") +
		`<section id="comments"><h2>Comments</h2><p>A comment starts with a semicolon and ends at the end of the physical line.</p></section>` +
		`<section id="header-lines"><h2>Header lines</h2><p>A header line names the file's encoding, and must be the first or second line.</p></section>` +
		`<section id="identifiers"><h2>Identifiers</h2>` + para("Identifiers") + para("Keywords") + strings.Repeat(para("Names"), 12) + para("Reserved names") + `</section>` +
		`</section></div></div></body></html>`
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	restore := hideHeadingIDs(doc)
	if s := findFirst(doc, atom.Section); attr(s, "id") != "" {
		t.Errorf("id %q not hidden", attr(s, "id"))
	}
	restore()
	if s := findFirst(doc, atom.Section); attr(s, "id") != "lexical-rules" {
		t.Errorf("id = %q after restore, want lexical-rules", attr(s, "id"))
	}

	p, err := Extract([]byte(page), mustURL(t, "http://example.com/manual/lexical.html"), "text/html", nil)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, p)
	textHas(t, p, "Comments\n\nA comment starts with a semicolon", "Header lines\n\nA header line names", "Reserved names are described")
}

// TestContentContainerTextBesideCore: when sections beside the core hold a
// text of their own, keeping only the core is a fragment; a title and a
// short introduction beside it are not.
func TestContentContainerTextBesideCore(t *testing.T) {
	api := `<div class="api"><h2>API</h2>` + strings.Repeat("<p>Each method of the gear class is listed here with its arguments and what it returns to the caller.</p>", 80) + `</div>`
	for _, tt := range []struct {
		name     string
		intro    string
		fragment bool
	}{
		{"long introduction", `<div class="intro"><h2>When gears turn</h2>` + strings.Repeat("<p>Gears turn when the shaft turns, and not before that; the manual explains the exceptions.</p>", 14) + `</div>`, true},
		{"title and one paragraph", `<h1>Gears</h1><p>This page lists the gear API.</p>`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			page := `<html><body><div id="top"><a href="/">Home</a></div><div id="c">` + tt.intro + api + `</div></body></html>`
			doc, err := html.Parse(strings.NewReader(page))
			if err != nil {
				t.Fatal(err)
			}
			c, need := contentContainer(findFirst(doc, atom.Body), false)
			if c == nil || attr(c, "id") != "c" {
				t.Fatalf("container = %v, want div#c", c)
			}
			var core *html.Node
			for n := c.FirstChild; n != nil; n = n.NextSibling {
				if attr(n, "class") == "api" {
					core = n
				}
			}
			if got := textLen(core) < need; got != tt.fragment {
				t.Errorf("core alone (%d bytes) counts as a fragment = %v (need %d), want %v", textLen(core), got, need, tt.fragment)
			}
		})
	}
}

func TestNamedForHeading(t *testing.T) {
	tests := map[string]bool{
		`<section id="comments"><h3>2.1.3. Comments</h3><p>A comment starts with a hash.</p></section>`:               true,
		`<div class="section" id="s-host-header-poisoning"><span id="x"></span><h3>Host header poisoning¶</h3></div>`: true,
		`<div id="comments"><h3>14 comments</h3><p>Nice post!</p></div>`:                                              false,
		`<div id="header"><p>Site name</p></div>`:                                                                     false,
	}
	for src, want := range tests {
		doc, err := html.Parse(strings.NewReader(src))
		if err != nil {
			t.Fatal(err)
		}
		body := findFirst(doc, atom.Body)
		if got := namedForHeading(body.FirstChild); got != want {
			t.Errorf("namedForHeading(%s) = %v, want %v", src, got, want)
		}
	}
}
