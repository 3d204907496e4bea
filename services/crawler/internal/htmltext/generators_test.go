package htmltext

import (
	"fmt"
	"strings"
	"testing"

	"github.com/go-shiori/dom"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// firstElement parses fragment and returns its first element.
func firstElement(t *testing.T, fragment string) *html.Node {
	t.Helper()
	doc, err := html.Parse(strings.NewReader("<html><body>" + fragment + "</body></html>"))
	if err != nil {
		t.Fatal(err)
	}
	n := findFirst(doc, atom.Body).FirstChild
	for n != nil && n.Type != html.ElementNode {
		n = n.NextSibling
	}
	if n == nil {
		t.Fatalf("no element in %q", fragment)
	}
	return n
}

// extractPage extracts page, served at pageURL, and checks the invariants.
func extractPage(t *testing.T, page, pageURL string) *Page {
	t.Helper()
	p, err := Extract([]byte(page), mustURL(t, pageURL), "text/html", nil)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, p)
	return p
}

// TestExtractCodeLinesSplitByBreakElements covers highlighted code written
// with <br> between lines and two in a row for an empty line (TypeDoc):
// readability turns two br into a paragraph break, which inside pre glued
// the lines around the empty one together.
func TestExtractCodeLinesSplitByBreakElements(t *testing.T) {
	prose := strings.Repeat("The gadget reads its settings once at start and keeps them for the whole run. ", 6)
	page := `<html><head><title>Quick start</title></head><body><div class="page"><h1>Quick start</h1><p>` + prose + `</p>` +
		`<pre><code><span>const</span> g = <span>require</span>(<span>'gadget'</span>);<br/><br/><span>g</span><br/>  .<span>option</span>(<span>'--fast'</span>);<br/><span>g</span>.<span>run</span>();</code></pre>` +
		`<p>` + prose + `</p></div></body></html>`
	p := extractPage(t, page, "http://example.com/gadget/index.html")
	if want := "const g = require('gadget');\n\ng\n  .option('--fast');\ng.run();"; !strings.Contains(p.Text, want) {
		t.Errorf("text lacks the listing %q (extractor %s):\n%s", want, p.Extractor, p.Text)
	}
}

// TestExtractShortPageSkipsSidebarOutline covers a short API index page
// (TypeDoc's module page): a heading and three lists of links in the content
// column, and an "On this page" outline of the same names in a column named
// sidebar, its links laid out as blocks by style only. Readability, given
// the whole page, kept the outline, whose names then ran together.
func TestExtractShortPageSkipsSidebarOutline(t *testing.T) {
	groups := map[string][]string{
		"Classes":    {"Argument", "Command", "CommandError", "Help", "Option"},
		"Interfaces": {"HelpContext", "OutputConfiguration", "ParseOptions", "ParseOptionsResult"},
		"Functions":  {"createArgument", "createCommand", "createOption"},
	}
	var content, outline strings.Builder
	for _, g := range []string{"Classes", "Interfaces", "Functions"} {
		fmt.Fprintf(&content, `<section><h2 id="%s">%s</h2><dl>`, strings.ToLower(g), g)
		fmt.Fprintf(&outline, `<details open><summary>%s</summary><div>`, g)
		for _, name := range groups[g] {
			fmt.Fprintf(&content, `<dt><span><a href="%[1]s.html">%[1]s</a></span></dt><dd></dd>`, name)
			fmt.Fprintf(&outline, `<a href="#%s"><svg viewBox="0 0 24 24"></svg><span>%s</span></a>`, strings.ToLower(name), name)
		}
		content.WriteString(`</dl></section>`)
		outline.WriteString(`</div></details>`)
	}
	page := `<html><head><title>gadget</title></head><body><header class="toolbar"><a href="index.html">gadget</a></header>` +
		`<div class="container"><div class="col-content"><div class="page-title"><h1>gadget</h1></div>` + content.String() + `</div>` +
		`<div class="col-sidebar"><div class="page-menu"><details open><summary><h3>On This Page</h3></summary><div>` + outline.String() +
		`</div></details></div></div></div></body></html>`
	p := extractPage(t, page, "http://example.com/gadget/modules.html")
	if strings.Contains(p.Text, "ArgumentCommand") || strings.Contains(p.Text, "On This Page") {
		t.Errorf("text holds the sidebar outline (extractor %s):\n%s", p.Extractor, p.Text)
	}
	if want := []string{"gadget", "Classes", "Interfaces", "Functions"}; strings.Join(headingTexts(p), "|") != strings.Join(want, "|") {
		t.Errorf("headings = %q, want %q", headingTexts(p), want)
	}
	textHas(t, p, "OutputConfiguration\n", "createOption")
}

// TestExtractShortPageDropsCopyrightFooter covers a short reference entry
// (BoostBook's macro and function pages): a name, a one-line synopsis and a
// sentence, then a layout table whose cell holds a div classed
// copyright-footer. Readability kept the footer and nothing else.
func TestExtractShortPageDropsCopyrightFooter(t *testing.T) {
	page := `<html><head><title>Macro GADGET_DISABLE_IF</title></head><body>` +
		`<table width="100%"><tr><td><img alt="Gadget" src="gadget.png"></td><td><a href="../index.html">Home</a></td><td><a href="libs.html">Libraries</a></td></tr></table><hr>` +
		`<div class="refentry"><div class="refnamediv"><h2><span class="refentrytitle">Macro GADGET_DISABLE_IF</span></h2><p>GADGET_DISABLE_IF</p></div>` +
		`<h2 class="refsynopsisdiv-title">Synopsis</h2><div class="refsynopsisdiv"><pre class="synopsis">// In header: &lt;gadget/config.hpp&gt;

GADGET_DISABLE_IF(T)</pre></div>` +
		`<div class="refsect1"><h2>Description</h2><p>Turns the overload off for const types.</p></div></div>` +
		`<table width="100%"><tr><td align="left"></td><td align="right"><div class="copyright-footer">Copyright © 2005, 2006 A. Maker<p>Distributed under the Gadget Software License, Version 1.0. (See the accompanying file LICENSE_1_0.txt or the copy on the project's site.)</p></div></td></tr></table>` +
		`</body></html>`
	p := extractPage(t, page, "http://example.com/gadget/GADGET_DISABLE_IF.html")
	textHas(t, p, "GADGET_DISABLE_IF(T)", "Turns the overload off for const types.")
	if strings.Contains(p.Text, "Distributed under") || strings.Contains(p.Text, "Copyright") {
		t.Errorf("text holds the footer (extractor %s):\n%s", p.Extractor, p.Text)
	}
}

// TestExtractKeepsListingBlocksNamedLikeBoilerplate covers a highlighted
// module source (Sphinx's viewcode): each function's lines sit in a div
// inside pre whose id is the function's name. A name holding "cookie" or
// "nav" is code, not a banner or a navigation bar.
func TestExtractKeepsListingBlocksNamedLikeBoilerplate(t *testing.T) {
	prose := strings.Repeat("This page shows the source of the module, one function after another. ", 5)
	page := `<html><head><title>gadget.http.request</title></head><body><div class="section"><h1>Source code for gadget.http.request</h1><p>` + prose + `</p>` +
		`<div class="highlight"><pre><span class="kn">import</span> <span class="nn">signing</span>
<div class="viewcode-block" id="Request.get_signed_cookie"><a class="viewcode-back" href="../ref.html">[docs]</a>    <span class="k">def</span> <span class="nf">get_signed_cookie</span>(self, key):
        <span class="sd">"""Return the signed cookie named key, or raise."""</span>
        <span class="k">return</span> signing.loads(self.cookies[key])</div>
<div class="viewcode-block" id="nav_links"><a class="viewcode-back" href="../ref.html">[docs]</a><span class="k">def</span> <span class="nf">nav_links</span>(page):
    <span class="k">return</span> [page.prev, page.next]</div>
</pre></div></div></body></html>`
	p := extractPage(t, page, "http://example.com/_modules/gadget/http/request.html")
	textHas(t, p, "def get_signed_cookie(self, key):", "Return the signed cookie named key", "def nav_links(page):", "return [page.prev, page.next]")
}

// TestHyphenatedNavigationIsBoilerplate covers a bar of links in a site
// header named global-nav: navigation too, though "nav" does not start its
// name; a block of prose named so stays.
func TestHyphenatedNavigationIsBoilerplate(t *testing.T) {
	for _, tc := range []struct {
		html string
		want bool
	}{
		{`<div id="global-nav"><a href="../index.html">Home</a> | <a href="../contents.html">Table of contents</a> | <a href="../genindex.html">Index</a></div>`, true},
		{`<div class="site_nav"><a href="a.html">Guide</a> <a href="b.html">Reference</a></div>`, true},
		{`<div id="global-nav"><p>The global navigation bar of the gadget's screen shows the current mode, the battery level and the time of day, and it can be hidden.</p></div>`, false},
		{`<div class="canvas-area"><a href="a.html">Guide</a></div>`, false},
	} {
		if got := isBoilerplate(firstElement(t, tc.html)); got != tc.want {
			t.Errorf("isBoilerplate(%s) = %v, want %v", tc.html, got, tc.want)
		}
	}
}

// TestExtractContentCoreOverSidebarContents covers a texinfo node page with
// a frame-like table of contents (LilyPond's manuals): the node's text is a
// table of names and abbreviations, without a paragraph, in div#main; the
// whole manual's contents, all links, sit in a div beside it. Readability
// took the contents; the core, which holds the page's prose, wins.
func TestExtractContentCoreOverSidebarContents(t *testing.T) {
	var rows, toc strings.Builder
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&rows, "<tr><td>drumsound%d</td><td>ds%d</td><td>altsound%d</td><td>as%d</td></tr>", i, i, i, i)
	}
	for i := 1; i <= 120; i++ {
		fmt.Fprintf(&toc, `<div class="toc-entry"><a href="node-%d.html">%d.%d A section of the gadget manual, on drums, cymbals, and bells</a></div>`, i, i/10+1, i%10)
	}
	page := `<html><head><title>Gadget Reference: Percussion notes</title></head><body>` +
		`<div id="main"><table class="nav_table"><tr><td><a href="prev.html" rel="prev">&lt;</a></td><td><a href="up.html" rel="up">Up</a></td></tr></table>` +
		`<h4 class="appendixsubsec">Percussion notes</h4><table class="multitable"><tbody>` + rows.String() + `</tbody></table>` +
		`<div id="footer"><p>Other languages: <a href="de.html">Deutsch</a></p></div></div>` +
		`<div id="tocframe"><p><a href="../index.html">&lt;&lt; Back to the documentation index</a></p><div class="contents">` + toc.String() + `</div></div>` +
		`</body></html>`
	p := extractPage(t, page, "http://example.com/gadget/percussion-notes.html")
	textHas(t, p, "drumsound1 | ds1 | altsound1 | as1", "drumsound40 | ds40")
	if strings.Contains(p.Text, "A section of the gadget manual") || strings.Contains(p.Text, "Back to the documentation index") {
		t.Errorf("text holds the contents frame (extractor %s):\n%s", p.Extractor, p.Text)
	}
	// Had readability chosen the contents frame, the core wins.
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	frame := findNode(doc, func(n *html.Node) bool { return attr(n, "id") == "tocframe" })
	body := findFirst(doc, atom.Body)
	c := containerOver(dom.Clone(frame, true), textLen(frame), body, false)
	if c == nil {
		t.Fatal("containerOver = nil, want div#main")
	}
	if text := collapse(textOf(c)); !strings.Contains(text, "drumsound40") || strings.Contains(text, "A section of the gadget manual") {
		t.Errorf("containerOver text = %.200q, want the table without the contents", text)
	}
}

// TestFooterWordIsBoilerplate covers footers named by a class with the word
// "footer" in it (site-footer, copyright-footer, td-footer): boilerplate when
// a footer's length; a long block so named (a layout wrapper "has-footer")
// is not.
func TestFooterWordIsBoilerplate(t *testing.T) {
	long := strings.Repeat("<p>The gadget's manual explains every setting in turn, with an example for each.</p>", 25)
	for _, tc := range []struct {
		html string
		want bool
	}{
		{`<div class="copyright-footer">Copyright © 2005 A. Maker<p>Distributed under the Gadget License.</p></div>`, true},
		{`<div class="td-footer row">Made with a theme. <a href="/privacy">Privacy</a></div>`, true},
		{`<div class="page has-footer">` + long + `</div>`, false},
		{`<div class="footnotes"><p>1. A footnote of the page.</p></div>`, false},
	} {
		if got := isBoilerplate(firstElement(t, tc.html)); got != tc.want {
			t.Errorf("isBoilerplate(%.80s) = %v, want %v", tc.html, got, tc.want)
		}
	}
}

// TestExtractKeepsHeadingsBesideSelfLinks covers headings each wrapped in a
// div with a link to itself after it, whose text is for screen readers only
// (Starlight's "Section titled …"). Readability took every wrapper for a
// list of links and dropped it, so no section kept its heading; the link is
// a permalink and stays out of the text.
func TestExtractKeepsHeadingsBesideSelfLinks(t *testing.T) {
	var body strings.Builder
	for _, h := range []string{"Why", "Goals", "How", "Alternatives"} {
		id := strings.ToLower(h)
		fmt.Fprintf(&body, `<div class="heading-wrapper level-h2"><h2 id="%s">%s</h2><a class="anchor-link" href="#%s"><span aria-hidden="true"><svg width="16" height="16"></svg></span><span class="sr-only">Section titled “%s”</span></a></div>`, id, h, id, h)
		fmt.Fprintf(&body, `<p>The %s part of this decision explains, in a few sentences, what the gadget does and why it does it that way.</p>`, id)
	}
	page := `<html><head><title>Gadget decisions | Docs</title></head><body><main><div class="content-panel"><h1 id="_top">Gadget decisions</h1></div>` +
		`<div class="content-panel"><div class="markdown-content">` + body.String() + `</div></div></main></body></html>`
	p := extractPage(t, page, "http://example.com/docs/decisions/")
	if want := []string{"Gadget decisions", "Why", "Goals", "How", "Alternatives"}; strings.Join(headingTexts(p), "|") != strings.Join(want, "|") {
		t.Errorf("headings = %q, want %q (extractor %s)", headingTexts(p), want, p.Extractor)
	}
	if strings.Contains(p.Text, "Section titled") {
		t.Errorf("text holds the permalinks:\n%s", p.Text)
	}
}

// TestIsSelfLink covers links to the heading they sit in or follow.
func TestIsSelfLink(t *testing.T) {
	for _, tc := range []struct {
		html, link string
		want       bool
	}{
		{`<div><h2 id="goals">Goals</h2> <a href="#goals">Section titled Goals</a></div>`, "#goals", true},
		{`<h3 id="run">run()<a href="#run" aria-label="Permalink">link</a></h3>`, "#run", true},
		{`<h2 id="intro"><a class="header" href="#intro">Introduction</a></h2>`, "#intro", false},
		{`<div><h2 id="goals">Goals</h2><a href="#why">see Why</a></div>`, "#why", false},
		{`<div><h2 id="goals">Goals</h2> and <a href="#goals">back</a></div>`, "#goals", false},
	} {
		doc, err := html.Parse(strings.NewReader("<html><body>" + tc.html + "</body></html>"))
		if err != nil {
			t.Fatal(err)
		}
		a := findNode(doc, func(n *html.Node) bool { return tagOf(n) == atom.A && attr(n, "href") == tc.link })
		if got := isSelfLink(a); got != tc.want {
			t.Errorf("isSelfLink in %s = %v, want %v", tc.html, got, tc.want)
		}
	}
}

// TestUtilityClassesNameNothing covers utility classes with arbitrary
// values (Tailwind): a page wrapper styled min-h-[calc(100vh-var(--navbar-height))]
// is no navigation bar, and the page's only heading stays.
func TestUtilityClassesNameNothing(t *testing.T) {
	wrapper := `<article class="w-full flex min-h-[calc(100vh-var(--navbar-height))] print:block"><main class="w-full px-6"><div class="content"><h1>services</h1></div></main></article>`
	if isBoilerplate(firstElement(t, wrapper)) {
		t.Errorf("isBoilerplate(%s) = true, want false", wrapper)
	}
	if !isBoilerplate(firstElement(t, `<div class="sidebar-container md:w-64 print:hidden"><a href="a.html">Guide</a></div>`)) {
		t.Error("a sidebar with utility classes is no longer boilerplate")
	}
	page := `<html><head><title>services – Docs</title></head><body><div class="mx-auto flex">` +
		`<aside class="sidebar-container"><ul><li><a href="/docs/">Docs</a></li><li><a href="/docs/services/">services</a></li><li><a href="/docs/pkg/">pkg</a></li></ul></aside>` +
		wrapper + `</div></body></html>`
	p := extractPage(t, page, "http://example.com/docs/services/")
	if p.Text != "services" {
		t.Errorf("text = %q, want %q (extractor %s)", p.Text, "services", p.Extractor)
	}
}

// TestExtractDropsSearchResultsPanel covers a book theme (HonKit's) whose
// content column holds an empty live-search panel, filled by a script, with
// "results matching" and "No results matching" headings.
func TestExtractDropsSearchResultsPanel(t *testing.T) {
	prose := strings.Repeat("The gadget keeps its settings in one file, read once at start. ", 8)
	page := `<html><head><title>Settings · Gadget Book</title></head><body><div class="book"><div class="book-summary"><nav role="navigation"><ul><li><a href="index.html">Introduction</a></li><li><a href="settings.html">Settings</a></li></ul></nav></div>` +
		`<div class="book-body"><div class="body-inner"><div class="page-wrapper" role="main"><div class="page-inner"><div id="book-search-results"><div class="search-noresults">` +
		`<section class="normal markdown-section"><h1 id="settings">Settings</h1><p>` + prose + `</p><h2 id="file">File</h2><p>` + prose + `</p></section></div>` +
		`<div class="search-results"><div class="has-results"><h1 class="search-results-title"><span class="search-results-count"></span> results matching "<span class="search-query"></span>"</h1><ul class="search-results-list"></ul></div>` +
		`<div class="no-results"><h1 class="search-results-title">No results matching "<span class="search-query"></span>"</h1></div></div></div></div></div></div></div></div></body></html>`
	p := extractPage(t, page, "http://example.com/book/settings.html")
	if strings.Contains(p.Text, "results matching") {
		t.Errorf("text holds the search panel (extractor %s):\n%s", p.Extractor, p.Text)
	}
	if want := []string{"Settings", "File"}; strings.Join(headingTexts(p), "|") != strings.Join(want, "|") {
		t.Errorf("headings = %q, want %q", headingTexts(p), want)
	}
}

// tocFrame returns a table of contents of a whole manual, all links, in a
// div of its own beside the page (LilyPond's texinfo manuals).
func tocFrame() string {
	var toc strings.Builder
	toc.WriteString(`<div id="tocframe"><p class="toc_uplink"><a href="../index.html">&lt;&lt; Back to the documentation index</a></p><h4 class="toc_header"><a href="index.html">The Gadget Manual v2.4</a></h4><div class="contents"><ul>`)
	for i := 1; i <= 12; i++ {
		fmt.Fprintf(&toc, `<li><a href="ch%d.html">%d. Chapter about gadgets, part %d</a><ul>`, i, i, i)
		for j := 1; j <= 8; j++ {
			fmt.Fprintf(&toc, `<li><a href="ch%d-%d.html">%d.%d Working with the gadget's part number %d</a></li>`, i, j, i, j, j)
		}
		toc.WriteString(`</ul></li>`)
	}
	toc.WriteString(`</ul></div></div>`)
	return toc.String()
}

// TestExtractShortChapterBesideContentsFrame covers a short chapter page of
// a manual with its table of contents in a frame of its own: a heading, a
// sentence and a menu of the chapter's sections in div#main, the whole
// manual's contents beside it. Readability kept the contents (thousands of
// bytes of links); the block holding the chapter's heading is the page.
func TestExtractShortChapterBesideContentsFrame(t *testing.T) {
	page := `<html><head><title>The Gadget Manual: 5.6 Collisions of parts</title></head><body>` +
		`<div id="main"><table class="nav_table"><tr><td><a href="ch5-5.html" rel="prev">&lt;</a></td><td><a href="ch5.html" rel="up">Up</a></td><td><a href="ch5-7.html" rel="next">&gt;</a></td></tr></table>` +
		`<h3 class="section">5.6 Collisions of parts</h3><p>When two parts of the gadget meet, one of them moves.</p>` +
		`<table class="menu"><tr><td><a href="ch5-6-1.html">5.6.1 Moving parts</a></td></tr><tr><td><a href="ch5-6-2.html">5.6.2 Fixed parts</a></td></tr></table>` +
		`<div id="footer"><p>Other languages: <a href="de.html">Deutsch</a></p></div></div>` + tocFrame() + `</body></html>`
	p := extractPage(t, page, "http://example.com/gadget/ch5-6.html")
	textHas(t, p, "5.6 Collisions of parts", "When two parts of the gadget meet, one of them moves.")
	if strings.Contains(p.Text, "Working with the gadget") || strings.Contains(p.Text, "Back to the documentation index") {
		t.Errorf("text holds the contents frame (extractor %s):\n%s", p.Extractor, p.Text)
	}
}

// TestExtractCategoryPageKeepsCards covers a category page (Docusaurus's):
// a heading and a sentence in a header, then cards, each a link holding a
// title and a description, in the same article. The cards are the page's
// content, not a table of contents beside it.
func TestExtractCategoryPageKeepsCards(t *testing.T) {
	var cards strings.Builder
	for i, name := range []string{"Create a page", "Create a document", "Create a post", "Deploy the site"} {
		fmt.Fprintf(&cards, `<article class="col"><a class="card" href="/docs/basics/step-%d"><h2 class="cardTitle">%s</h2><p class="cardDescription">How to %s with the gadget, step by step.</p></a></article>`, i, name, strings.ToLower(name))
	}
	page := `<html><head><title>Basics | Gadget</title></head><body><nav class="navbar"><a href="/">Gadget</a> <a href="/docs">Docs</a></nav>` +
		`<div class="main-wrapper"><aside class="sidebar"><ul><li><a href="/docs/intro">Intro</a></li><li><a href="/docs/basics">Basics</a></li></ul></aside>` +
		`<main><div class="container"><article><header><h1>Basics</h1><p>Five minutes to learn the most important concepts.</p></header>` +
		`<section class="row">` + cards.String() + `</section></article></div></main></div>` + tocFrame() + `</body></html>`
	p := extractPage(t, page, "http://example.com/docs/category/basics/")
	textHas(t, p, "Five minutes to learn", "How to create a document with the gadget", "Deploy the site")
}

// TestExtractFlatPageKeepsHeadings covers a page whose content lies flat in
// the body (pod2html): headings, paragraphs, code and one long definition
// list, all children of body. Readability picks the list and keeps the
// paragraphs beside it, but not the headings between them.
func TestExtractFlatPageKeepsHeadings(t *testing.T) {
	var b strings.Builder
	b.WriteString(`<html><head><title>gadgetfunc</title></head><body><ul id="index"><li><a href="#NAME">NAME</a></li><li><a href="#DESCRIPTION">DESCRIPTION</a></li></ul>`)
	b.WriteString(`<h1 id="NAME">NAME</h1><p>gadgetfunc - the gadget's built-in functions</p><h1 id="DESCRIPTION">DESCRIPTION</h1>`)
	for i := 1; i <= 3; i++ {
		fmt.Fprintf(&b, `<h2 id="Part-%d">Functions of part %d</h2><p>The functions of part %d take a gadget and return a new one; none of them changes the gadget it is given, so a caller may keep the old one.</p><pre>    gadget_part%d($g);</pre>`, i, i, i, i)
	}
	b.WriteString(`<h2 id="Alphabetical">Alphabetical listing</h2><dl>`)
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&b, `<dt id="fn%d">fn%d EXPR</dt><dd><p>Function number %d turns the gadget's dial by one step, then returns the dial's new position, or undef when the dial is at its end.</p></dd>`, i, i, i)
	}
	b.WriteString(`</dl></body></html>`)
	p := extractPage(t, b.String(), "http://example.com/pod/gadgetfunc.html")
	want := []string{"NAME", "DESCRIPTION", "Functions of part 1", "Functions of part 2", "Functions of part 3", "Alphabetical listing"}
	if got := headingTexts(p); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("headings = %q, want %q (extractor %s)", got, want, p.Extractor)
	}
	textHas(t, p, "gadget_part2($g);", "Function number 30 turns")
}

// TestExtractClassPageKeepsSmallMemberGroups covers an API class page
// (TypeDoc's): a title, an index of links to every member, then one group
// per kind of member, each under its heading; the methods outweigh the
// rest. The content core is the methods group, and the index of links
// beside it made its siblings look like a link list, so the constructor and
// the properties were dropped.
func TestExtractClassPageKeepsSmallMemberGroups(t *testing.T) {
	var index, methods strings.Builder
	for i := 1; i <= 14; i++ {
		fmt.Fprintf(&index, `<a href="#method%d">formatTheGadgetHelpMethodNumber%d</a> `, i, i)
		fmt.Fprintf(&methods, `<section class="member"><h3 id="method%d">method%d</h3><div class="signature">method%d(gadget: Gadget, width: number): string</div><p>Formats part %d of the gadget's help text to the given width, wrapping long lines at spaces.</p><h4>Returns string</h4></section>`, i, i, i, i)
	}
	page := `<html><head><title>Formatter | gadget</title></head><body><header class="toolbar"><a href="../index.html">gadget</a></header>` +
		`<div class="container"><div class="col-content"><div class="page-title"><h1>Class Formatter</h1></div>` +
		`<section class="index-group"><details class="index-content" open><summary><h5>Index</h5></summary><div>` + index.String() + `</div></details></section>` +
		`<details class="member-group" open><summary><h2>Constructors</h2></summary><section class="member"><h3 id="constructor">constructor</h3><div class="signature">new Formatter(): Formatter</div></section></details>` +
		`<details class="member-group" open><summary><h2>Properties</h2></summary><section class="member"><h3 id="helpwidth">helpWidth</h3><div class="signature">helpWidth?: number</div></section>` +
		`<section class="member"><h3 id="sortoptions">sortOptions</h3><div class="signature">sortOptions: boolean</div></section></details>` +
		`<details class="member-group" open><summary><h2>Methods</h2></summary>` + methods.String() + `</details></div>` +
		`<div class="col-sidebar"><nav><a href="../modules.html">gadget</a></nav></div></div></body></html>`
	p := extractPage(t, page, "http://example.com/gadget/classes/Formatter.html")
	textHas(t, p, "new Formatter(): Formatter", "helpWidth?: number", "sortOptions: boolean", "method14(gadget: Gadget, width: number): string")
	// The content container holds every group, not the methods alone
	// (readability keeps the methods only on TypeDoc's real pages).
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	c, _ := contentContainer(findFirst(doc, atom.Body), false)
	if c == nil {
		t.Fatal("contentContainer = nil")
	}
	if text := collapse(textOf(c)); !strings.Contains(text, "new Formatter(): Formatter") || !strings.Contains(text, "helpWidth?: number") {
		t.Errorf("content container <%s class=%q> lacks the constructor or the properties", c.Data, attr(c, "class"))
	}
}

// TestRendererDropsRepeatedText covers trafilatura's habit of adding a
// short page's whole text once more as one paragraph.
func TestRendererDropsRepeatedText(t *testing.T) {
	for _, tc := range []struct {
		html, want string
	}{
		{`<h3>8. Issues</h3><p>This chapter deals with defects and requests.</p><p>8. Issues This chapter deals with defects and requests.</p>`,
			"8. Issues\n\nThis chapter deals with defects and requests."},
		{`<h3>Steps</h3><ul><li>Open the lid.</li><li>Turn the dial.</li></ul><p>Steps Open the lid. Turn the dial.</p>`,
			"Steps\n\n- Open the lid.\n- Turn the dial."},
		{`<h3>Echo</h3><p>Say it.</p><p>Say it again.</p>`, "Echo\n\nSay it.\n\nSay it again."},
	} {
		doc, err := html.Parse(strings.NewReader("<html><body>" + tc.html + "</body></html>"))
		if err != nil {
			t.Fatal(err)
		}
		r := newRenderer()
		r.render(findFirst(doc, atom.Body))
		var p Page
		r.finish(&p)
		if p.Text != tc.want {
			t.Errorf("text of %s = %q, want %q", tc.html, p.Text, tc.want)
		}
	}
}
