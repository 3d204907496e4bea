package htmltext

import (
	"fmt"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// headingTexts returns the texts of p's headings in order.
func headingTexts(p *Page) []string {
	var hs []string
	for _, h := range p.Headings {
		hs = append(hs, h.Text)
	}
	return hs
}

// TestExtractAsciiDocManPage covers the AsciiDoc layout (git's manual,
// Asciidoctor's default too): the title block sits in div#header next to
// div#content, whose sections are mostly definition lists. Readability keeps
// the biggest list only; the content core must come through, every section
// with its heading, without the footer.
func TestExtractAsciiDocManPage(t *testing.T) {
	p := extractFile(t, "asciidoc-manpage.html", "http://example.com/frob/frob-mend.html", nil)
	if p.Extractor != ExtractorContainer {
		t.Errorf("Extractor = %q, want %q", p.Extractor, ExtractorContainer)
	}
	want := []string{"frob-mend(1) Manual Page", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "OUTPUT FORMATS", "CONFIGURATION", "SEE ALSO"}
	if got := headingTexts(p); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("headings = %q, want %q", got, want)
	}
	textHas(t, p, "frob mend [--dry-run]", "The description part 2 explains", "--option-14", "format-8", "mend.setting-6")
	if strings.Contains(p.Text, "Last updated") {
		t.Errorf("text holds the footer:\n%s", p.Text)
	}
}

// TestExtractShortPageKeepsLandmark covers a book chapter's title page
// (mdBook layout): a heading and one sentence in <main>, a long table of
// contents in the sidebar. Readability finds little, and trafilatura would
// take the sidebar; the page's own landmark is its content (readability,
// given only the landmark, finds the same text).
func TestExtractShortPageKeepsLandmark(t *testing.T) {
	p := extractFile(t, "mdbook-short.html", "http://example.com/handbook/ch13.html", nil)
	if p.Extractor != ExtractorLandmark && p.Extractor != ExtractorReadability {
		t.Errorf("Extractor = %q, want %q or %q", p.Extractor, ExtractorLandmark, ExtractorReadability)
	}
	if want := "Appendix\n\nThe following sections hold reference material for owners of the gadget."; p.Text != want {
		t.Errorf("text = %q, want %q", p.Text, want)
	}
}

// TestExtractBookChapterHeadings covers an mdBook chapter: the book's name
// is an h1 in the title bar above <main>, the chapter's own h1 opens
// <main>. Readability drops the chapter's h1 (it repeats the title) and,
// given the whole page, takes the title bar along; the chapter must start
// with its own heading and the book's name stay out.
func TestExtractBookChapterHeadings(t *testing.T) {
	p := extractFile(t, "mdbook-chapter.html", "http://example.com/handbook/ch03.html", nil)
	want := []string{"Wiring the sensors", "Choosing the cables", "Connecting the sensors", "Testing the wiring"}
	if got := headingTexts(p); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("headings = %q, want %q", got, want)
	}
	textLacks(t, p, "The Gadget Handbook", "Getting started", "Previous", "Print")
}

// TestExtractDocBookSectionTitle covers a DocBook section page: no h1, the
// section's h2 repeats the title, and readability drops it. It must come
// back as the top heading.
func TestExtractDocBookSectionTitle(t *testing.T) {
	p := extractFile(t, "docbook-section.html", "http://example.com/handbook/wiring.html", nil)
	want := []string{"3.2. Wiring the Sensors", "3.2.1. Choosing the Cables", "3.2.2. Connecting the Plugs", "3.2.3. Testing the Wiring"}
	if got := headingTexts(p); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("headings = %q, want %q", got, want)
	}
	if !strings.HasPrefix(p.Text, "3.2. Wiring the Sensors\n\nFor wiring, step 1 connects") {
		t.Errorf("text starts %q", p.Text[:min(80, len(p.Text))])
	}
}

// TestExtractKeepsHeadingsWithBoilerplateIDs covers generators that put the
// anchor id on the heading itself (mdBook, MkDocs, Hugo): readability drops
// a heading whose id holds "comment" and weighs down one holding "tool", so
// the sections would lose their headings.
func TestExtractKeepsHeadingsWithBoilerplateIDs(t *testing.T) {
	var b strings.Builder
	b.WriteString(`<html><head><title>Comments - The Gadget Handbook</title></head><body>` +
		`<nav class="sidebar"><ol><li><a href="a.html">Setup</a></li><li><a href="b.html">Comments</a></li></ol></nav><main>` +
		`<h1 id="comments"><a class="header" href="#comments">Comments</a></h1>`)
	for _, sec := range []string{"Line comments", "Doc comments", "Useful tools", "Shared headers"} {
		id := strings.ToLower(strings.ReplaceAll(sec, " ", "-"))
		b.WriteString(`<h2 id="` + id + `"><a class="header" href="#` + id + `">` + sec + `</a></h2>`)
		for i := 0; i < 3; i++ {
			b.WriteString(`<p>The part on ` + strings.ToLower(sec) + ` says how a gadget script marks text the gadget must skip, and how the skipped text still documents the script for its readers.</p>`)
		}
	}
	b.WriteString(`</main></body></html>`)
	p, err := Extract([]byte(b.String()), mustURL(t, "http://example.com/handbook/comments.html"), "text/html", nil)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, p)
	want := []string{"Comments", "Line comments", "Doc comments", "Useful tools", "Shared headers"}
	if got := headingTexts(p); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("headings = %q, want %q\n%s", got, want, p.Text)
	}
}

// TestExtractRustdocTraitKeepsDescription covers a rustdoc trait page: a
// one-line description and an example, then a long list of implementors
// that are mostly links. The list outweighs the description in bytes and
// readability keeps only it; the page's content (description first) must
// come through whole.
func TestExtractRustdocTraitKeepsDescription(t *testing.T) {
	p := extractFile(t, "rustdoc-trait.html", "http://example.com/gadget/ops/trait.Tighten.html", nil)
	if p.Extractor != ExtractorContainer {
		t.Errorf("Extractor = %q, want %q", p.Extractor, ExtractorContainer)
	}
	textHas(t, p, "The bolt tightening operator +~.", "bolt.tighten(2);", "Turns the bolt further by rhs.", "impl Tighten<&mut isize> for Checked<isize>")
	want := []string{"Trait gadget::ops::Tighten", "Examples", "Required Methods", "fn tighten(&mut self, rhs: Rhs)", "Implementors"}
	if got := headingTexts(p); len(got) < len(want) || strings.Join(got[:len(want)], "|") != strings.Join(want, "|") {
		t.Errorf("headings start %q, want %q", got[:min(len(got), len(want))], want)
	}
}

// TestExtractDoxygenSourceKeepsComments covers a Doxygen source listing: one
// div per line, comments marked span.comment outside any pre or code
// element. Readability drops elements whose class says "comment" (it reads
// them as reader comments), which left the line numbers and code of the
// listing without its documentation comments.
func TestExtractDoxygenSourceKeepsComments(t *testing.T) {
	p := extractFile(t, "doxygen-source.html", "http://example.com/gearbox/gearbox_8h_source.html", nil)
	textHas(t, p, "Functions to build gear trains and compute their ratios.",
		"Append a gear with the given number of teeth to a train.",
		"#define GEARBOX_MAX_GEARS 16",
		"extern double gearbox_ratio(const gear_train *train);")
	textLacks(t, p, "Generated by", "Gearbox 1.4")
}

// TestExtractTexinfoNodeHeading covers a node of a texinfo manual split into
// pages: the section heading (an h3, numbered) above a long definition list.
// Readability keeps the list only; the page's heading must be put back in
// front although it is neither an h1 nor an h2, and the title holds it
// without its number.
func TestExtractTexinfoNodeHeading(t *testing.T) {
	p := extractFile(t, "texinfo-node.html", "http://example.com/gadget/Tightening-bolts.html", nil)
	if got := headingTexts(p); len(got) == 0 || got[0] != "4.2 Tightening bolts" {
		t.Errorf("headings = %q, want 4.2 Tightening bolts first", got)
	}
	textHas(t, p, "GADGET_BOLT_HEXAGON3", "A flange bolt.", "GADGET_NUT_M16", "The value always tests false.")
	if strings.Contains(p.Text, "Next:") {
		t.Errorf("text holds the navigation bar:\n%s", p.Text)
	}
}

// TestExtractDropsPagerBar covers a short node of a texinfo manual: a bar of
// links to the next, previous and parent pages (rel="next", "prev", "up")
// above the heading. On a short page readability keeps everything; the bar
// is navigation.
func TestExtractDropsPagerBar(t *testing.T) {
	page := `<html><head><title>Bolt sizes (The Gadget Manual)</title></head><body lang="en">` +
		`<div class="section" id="Bolt-sizes"><div class="header"><p>Next: <a href="Nuts.html" accesskey="n" rel="next">Nuts</a>, ` +
		`Previous: <a href="Tightening-bolts.html" accesskey="p" rel="prev">Tightening bolts</a>, Up: <a href="Fasteners.html" accesskey="u" rel="up">Fasteners</a> ` +
		`&nbsp; [<a href="index.html#SEC_Contents" rel="contents">Contents</a>][<a href="Index.html" rel="index">Index</a>]</p></div><hr>` +
		`<h3 class="section">4.3 Bolt sizes</h3><p>The gadget uses metric bolts from three to sixteen millimetres; the kit holds two of each size.</p>` +
		`</div></body></html>`
	p, err := Extract([]byte(page), mustURL(t, "http://example.com/gadget/Bolt-sizes.html"), "text/html", nil)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, p)
	want := "4.3 Bolt sizes\n\nThe gadget uses metric bolts from three to sixteen millimetres; the kit holds two of each size."
	if p.Text != want {
		t.Errorf("text = %q, want %q", p.Text, want)
	}
}

// TestExtractDropsNamedNavigationOnShortPage covers a short reference page
// whose previous/up/next bar is a div named "nav" around the text: on a
// short page readability keeps the bar, and it drops the classes of what it
// keeps unless told not to, so the bar was not recognised afterwards.
func TestExtractDropsNamedNavigationOnShortPage(t *testing.T) {
	bar := `<div class="nav"><a href="shortcuts.html">« previous</a> | <a href="index.html">up</a> | <a href="middleware.html">next »</a></div>`
	page := `<html><head><title>Generic gadgets | Gadget 2.1 documentation</title></head><body><div id="container"><div id="bd"><div id="yui-main"><div class="yui-b"><div class="yui-g">` +
		bar + `<div class="section" id="generic-gadgets"><h1>Generic gadgets</h1><p>See the reference of the built-in gadget classes.</p></div>` + bar +
		`</div></div></div></div></div></body></html>`
	p, err := Extract([]byte(page), mustURL(t, "http://example.com/topics/generic-gadgets.html"), "text/html", nil)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, p)
	if want := "Generic gadgets\n\nSee the reference of the built-in gadget classes."; p.Text != want {
		t.Errorf("text = %q, want %q (extractor %s)", p.Text, want, p.Extractor)
	}
}

// TestExtractChapterPageKeepsTableOfContents covers a chapter page of a
// texinfo manual: a pager bar, the chapter heading and a list of links to
// its sections. Readability finds nothing but the bar; trafilatura, given
// the whole page, took the bar for the text.
func TestExtractChapterPageKeepsTableOfContents(t *testing.T) {
	page := `<html><head><title>Fasteners (The Gadget Manual)</title></head><body lang="en">` +
		`<div class="chapter" id="Fasteners"><div class="header"><p>Next: <a href="Gears.html" accesskey="n" rel="next">Gears and gear trains</a>, ` +
		`Previous: <a href="Frame.html" accesskey="p" rel="prev">Assembling the frame</a>, Up: <a href="index.html" accesskey="u" rel="up">The Gadget Manual</a> ` +
		`&nbsp; [<a href="index.html#SEC_Contents" rel="contents">Contents</a>][<a href="Index.html" rel="index">Index</a>]</p></div><hr>` +
		`<h2 class="chapter">4 Fasteners</h2><ul class="section-toc"><li><a href="Choosing-bolts.html" accesskey="1">Choosing bolts</a></li>` +
		`<li><a href="Tightening-bolts.html" accesskey="2">Tightening bolts</a></li><li><a href="Bolt-sizes.html" accesskey="3">Bolt sizes</a></li></ul>` +
		`</div></body></html>`
	p, err := Extract([]byte(page), mustURL(t, "http://example.com/gadget/Fasteners.html"), "text/html", nil)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, p)
	textHas(t, p, "4 Fasteners", "Choosing bolts", "Tightening bolts", "Bolt sizes")
	textLacks(t, p, "Next:", "Gears and gear trains", "Assembling the frame")
}

// TestExtractKeepsHeadingLikeTitle covers a short book page whose own
// heading is an h2 that the title repeats in other words ("Appendix F:
// Spare Parts of the Gadget" under "F - Spare Parts of the Gadget - The
// Gadget Book"): readability drops it as a repeat of the title, and the
// title does not hold it word for word; it must be put back.
func TestExtractKeepsHeadingLikeTitle(t *testing.T) {
	page := `<html><head><title>F - Spare Parts of the Gadget - The Gadget Book</title></head><body>` +
		`<nav class="sidebar"><ol><li><a href="ch01.html">Getting started</a></li><li><a href="ch02.html">Assembly</a></li><li><a href="appendix-06.html">F - Spare Parts of the Gadget</a></li></ol></nav>` +
		`<div class="page"><main><h2 id="appendix-f-spare-parts-of-the-gadget"><a class="header" href="#appendix-f-spare-parts-of-the-gadget">Appendix F: Spare Parts of the Gadget</a></h2>` +
		`<p>Spare parts are sold by the dealers listed below; most keep the common bolts and gears in stock and order the rest within a week.</p>` +
		`<ul><li><a href="https://example.com/north">Northern dealer</a></li><li><a href="https://example.com/south">Southern dealer</a></li></ul></main>` +
		`<nav class="nav-wrapper"><a rel="prev" href="appendix-05.html">Previous</a><a rel="next" href="appendix-07.html">Next</a></nav></div></body></html>`
	p, err := Extract([]byte(page), mustURL(t, "http://example.com/book/appendix-06.html"), "text/html", nil)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, p)
	if got := headingTexts(p); len(got) == 0 || got[0] != "Appendix F: Spare Parts of the Gadget" {
		t.Errorf("headings = %q, want Appendix F: Spare Parts of the Gadget first (extractor %s)", got, p.Extractor)
	}
	if !strings.Contains(p.Text, "Spare parts are sold by the dealers") || strings.Contains(p.Text, "Getting started") {
		t.Errorf("text = %q", p.Text)
	}
}

// TestExtractChapterTitlePageHeading covers a DocBook chapter page: a
// navigation header, the chapter's title, its table of contents and one
// sentence. Readability finds too little and trafilatura, which drops the
// title, takes over; the chapter's heading must still open the text, and
// the navigation header stay out.
func TestExtractChapterTitlePageHeading(t *testing.T) {
	page := `<html><head><title>Chapter 29. Watching Gear Wear</title></head><body id="docContent" class="container-fluid col-10"><div class="navheader"><table width="100%" summary="Navigation header">` +
		`<tr><th colspan="5" align="center">Chapter 29. Watching Gear Wear</th></tr><tr><td width="10%" align="left"><a accesskey="p" href="lube.html" title="28.5. Lubrication">Prev</a> </td>` +
		`<td width="10%" align="left"><a accesskey="u" href="care.html" title="Part III. Caring for the Gadget">Up</a></td><th width="60%" align="center">Part III. Caring for the Gadget</th>` +
		`<td width="10%" align="right"><a accesskey="h" href="index.html" title="Gadget Manual">Home</a></td><td width="10%" align="right"> <a accesskey="n" href="wear-measure.html" title="29.1. Measuring Tooth Wear">Next</a></td></tr></table><hr /></div>` +
		`<div class="chapter" id="WEAR"><div class="titlepage"><div><div><h2 class="title">Chapter 29. Watching Gear Wear</h2></div></div></div>` +
		`<div class="toc"><p><strong>Table of Contents</strong></p><dl class="toc"><dt><span class="sect1"><a href="wear-measure.html">29.1. Measuring Tooth Wear</a></span></dt>` +
		`<dt><span class="sect1"><a href="wear-replace.html">29.2. Replacing Worn Gears</a></span></dt></dl></div><p>
  This chapter discusses how to watch the wear of the gears of a
  <span class="productname">Gadget</span> machine.
 </p></div>` +
		`<div class="navfooter"><hr /><table width="100%" summary="Navigation footer"><tr><td width="40%" align="left"><a accesskey="p" href="lube.html">Prev</a> </td>` +
		`<td width="20%" align="center"><a accesskey="u" href="care.html">Up</a></td><td width="40%" align="right"> <a accesskey="n" href="wear-measure.html">Next</a></td></tr>` +
		`<tr><td width="40%" align="left" valign="top">28.5. Lubrication </td><td width="20%" align="center"><a accesskey="h" href="index.html">Home</a></td>` +
		`<td width="40%" align="right" valign="top"> 29.1. Measuring Tooth Wear</td></tr></table></div></body></html>`
	p, err := Extract([]byte(page), mustURL(t, "http://example.com/manual/wear.html"), "text/html", nil)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, p)
	if got := headingTexts(p); len(got) == 0 || got[0] != "Chapter 29. Watching Gear Wear" {
		t.Errorf("headings = %q, want the chapter title first (extractor %s): %q", got, p.Extractor, p.Text)
	}
	if !strings.Contains(p.Text, "This chapter discusses how to watch the wear") || strings.Contains(p.Text, "Prev") {
		t.Errorf("text = %q (extractor %s)", p.Text, p.Extractor)
	}
}

// TestExtractSectionHeaderKeepsHeading covers a gi-docgen property page:
// the page's h1 sits in a header inside section#main beside a sidebar nav,
// and the text is a declaration, one short sentence and two small tables
// of links. The header is the section's title block, not the page's
// banner, so its h1 must stay; readability drops the tables of links
// (mostly link text on a short page), which the content core keeps.
func TestExtractSectionHeaderKeepsHeading(t *testing.T) {
	p := extractFile(t, "gidocgen-property.html", "http://example.com/gadget/property.Bolt.torque.html", nil)
	want := []string{"Property", "GadgetBolt:torque", "Declaration", "Description", "Flags"}
	if got := headingTexts(p); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("headings = %q, want %q\n%s", got, want, p.Text)
	}
	textHas(t, p, "property torque: gdouble [ read, write ]", "The GadgetTorque the bolt is set to.",
		"Type: | gdouble", "Getter method | gadget_bolt_get_torque()", "Setter method | gadget_bolt_set_torque()", "Writable | yes")
	textLacks(t, p, "clearance", "Library Version", "Generated by")
}

// TestExtractArticleHeaderIsNotBanner covers a page whose title block is a
// header inside the article (Docusaurus, blog themes): only a header
// outside article, aside, main, nav and section is the page's banner.
func TestExtractArticleHeaderIsNotBanner(t *testing.T) {
	page := `<html><head><title>Oiling the gears | Gadget Docs</title></head><body>` +
		`<header class="site"><a href="/">Gadget Docs</a><nav><a href="/guide/">Guide</a> <a href="/api/">API</a></nav></header>` +
		`<main><article><header><h1>Oiling the gears</h1><p>Updated for release 2.4</p></header>` +
		`<p>Gears need a drop of light machine oil every two hundred hours of running; more oil only gathers dust.</p>` +
		`<h2>Which oil</h2><p>Use a light oil without solvents, and never grease, which stiffens in the cold and stops the small gears.</p>` +
		`</article></main><footer><p>Copyright the gadget makers</p></footer></body></html>`
	p, err := Extract([]byte(page), mustURL(t, "http://example.com/guide/oiling/"), "text/html", nil)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, p)
	want := []string{"Oiling the gears", "Which oil"}
	if got := headingTexts(p); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("headings = %q, want %q (extractor %s)\n%s", got, want, p.Extractor, p.Text)
	}
	textHas(t, p, "Updated for release 2.4", "every two hundred hours")
	textLacks(t, p, "Gadget Docs", "Guide", "Copyright")
}

// TestExtractGTKDocRefentryTitle covers a GTK-Doc reference page: the
// entry's name is an h2 in a one-row layout table (DocBook's refnamediv)
// beside an empty cell. Rendered as a table row, the heading turned into
// the text "GadgetGear GadgetGear — Gear object |" and the page lost its
// top heading; a row holding a heading is layout, not data.
func TestExtractGTKDocRefentryTitle(t *testing.T) {
	p := extractFile(t, "gtkdoc-refentry.html", "http://example.com/gadget/GadgetGear.html", nil)
	want := []string{"GadgetGear", "Functions", "Object Hierarchy", "Description", "Functions", "gadget_gear_new ()", "gadget_gear_get_teeth ()", "gadget_gear_ratio ()"}
	if got := headingTexts(p); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("headings = %q, want %q\n%s", got, want, p.Text)
	}
	if !strings.HasPrefix(p.Text, "GadgetGear\n\nGadgetGear — Gear object\n\nFunctions\n\nGadgetGear * | gadget_gear_new ()\nguint | gadget_gear_get_teeth ()") {
		t.Errorf("text starts %q", p.Text[:min(120, len(p.Text))])
	}
	textHas(t, p, "refuses to mesh with a gear of another module", "the driven gear's teeth divided by this gear's")
	textLacks(t, p, "Object Hierarchy |", "Generated by", "Top")
}

// TestExtractTableHeadingRow covers tables whose rows carry a group's
// heading (Doxygen's member tables: a row whose one cell holds an h2 above
// the rows of declarations): the heading must stay a heading and cut the
// sections, the other rows stay rows.
func TestExtractTableHeadingRow(t *testing.T) {
	page := `<html><head><title>Gearbox: gearbox.h File Reference</title></head><body><div class="contents">` +
		`<p>Functions to build gear trains and compute the ratio between their first and last gear, for gearboxes of up to sixteen gears.</p>` +
		`<table class="memberdecls"><tr class="heading"><td colspan="2"><h2 class="groupheader"><a id="func-members" name="func-members"></a>Functions</h2></td></tr>` +
		`<tr class="memitem"><td class="memItemLeft">gear_train *</td><td class="memItemRight"><a href="#a1">gearbox_train_new</a> (void)</td></tr>` +
		`<tr class="memdesc"><td class="mdescLeft">&#160;</td><td class="mdescRight">Make an empty train of gears that drives nothing yet.</td></tr>` +
		`<tr class="memitem"><td class="memItemLeft">double</td><td class="memItemRight"><a href="#a2">gearbox_ratio</a> (const gear_train *train)</td></tr>` +
		`<tr class="memdesc"><td class="mdescLeft">&#160;</td><td class="mdescRight">Compute the ratio between the first and the last gear of a train.</td></tr>` +
		`</table></div></body></html>`
	p, err := Extract([]byte(page), mustURL(t, "http://example.com/gearbox/gearbox_8h.html"), "text/html", nil)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, p)
	if got := headingTexts(p); len(got) == 0 || got[len(got)-1] != "Functions" {
		t.Errorf("headings = %q, want Functions last (extractor %s)\n%s", got, p.Extractor, p.Text)
	}
	textHas(t, p, "Functions\n\ngear_train * | gearbox_train_new (void)", "double | gearbox_ratio (const gear_train *train)")
}

// TestExtractDropsNamedPagerLinks covers a short page of a pydata-sphinx-
// theme site: below the text sits a bar of links to the previous and next
// pages, named by class and id (a.left-prev#prev-link, a.right-next)
// instead of rel; on a short page it was kept as text.
func TestExtractDropsNamedPagerLinks(t *testing.T) {
	page := `<html><head><title>2.4. Spare gears — Gadget 3.1 documentation</title></head><body>` +
		`<nav class="navbar bd-navbar" id="navbar-main"><a class="navbar-brand" href="../index.html">Gadget</a></nav>` +
		`<div class="container-xl"><div class="row"><div class="col-12 col-md-3 bd-sidebar"><nav class="bd-links"><ul><li><a href="gears.html">2.3. Gears</a></li><li><a href="spare.html">2.4. Spare gears</a></li></ul></nav></div>` +
		`<div class="d-none d-xl-block col-xl-2 bd-toc"><div class="toc-item"><div class="tocsection onthispage"><i class="fas fa-list"></i> On this page</div><nav id="bd-toc-nav"><ul><li><a href="#sizes">Sizes</a></li></ul></nav></div>` +
		`<div class="toc-item"><div class="tocsection editthispage"><a href="https://example.org/gadget/edit/main/docs/spare.rst"><i class="fas fa-pencil-alt"></i> Edit this page</a></div></div></div>` +
		`<main class="col-12 col-md-9 bd-content" role="main"><div><section id="spare-gears"><h1><span class="section-number">2.4. </span>Spare gears<a class="headerlink" href="#spare-gears">¶</a></h1>` +
		`<p>Every kit holds two spare gears of each size; order more from the dealer.</p></section></div>` +
		`<div class='prev-next-area'><a class='left-prev' id="prev-link" href="gears.html" title="previous page"><div class="prev-next-info"><p class="prev-next-subtitle">previous</p><p class="prev-next-title"><span class="section-number">2.3. </span>Gears</p></div></a>` +
		`<a class='right-next' id="next-link" href="../bolts.html" title="next page"><div class="prev-next-info"><p class="prev-next-subtitle">next</p><p class="prev-next-title"><span class="section-number">3. </span>Bolts</p></div></a></div>` +
		`</main></div></div></body></html>`
	p, err := Extract([]byte(page), mustURL(t, "http://example.com/gadget/spare.html"), "text/html", nil)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, p)
	if want := "2.4. Spare gears\n\nEvery kit holds two spare gears of each size; order more from the dealer."; p.Text != want {
		t.Errorf("text = %q, want %q (extractor %s)", p.Text, want, p.Extractor)
	}
}

// TestExtractDropsPrintOnlyBlock covers a sphinx-book-theme page: a block
// shown only in print (div.onlyprint) repeats the title and holds the
// page's table of contents under an h2 "Contents"; it is hidden on screen
// and must not give the page a "Contents" heading.
func TestExtractDropsPrintOnlyBlock(t *testing.T) {
	var b strings.Builder
	b.WriteString(`<html><head><title>Lubrication — Gadget documentation</title></head><body><div class="bd-container">` +
		`<div id="pst-primary-sidebar" class="bd-sidebar-primary bd-sidebar"><nav class="bd-links" aria-label="Main"><ul><li><a href="gears.html">Gears</a></li><li><a href="lubrication.html">Lubrication</a></li></ul></nav></div>` +
		`<main id="main-content" class="bd-main" role="main"><div class="bd-content"><div class="bd-article-container">` +
		`<div class="bd-header-article d-print-none"><div class="article-header-buttons"><a href="_sources/lubrication.rst" class="btn" title="Download source file"><span class="btn__text-container">.rst</span></a></div></div>` +
		`<div id="jb-print-docs-body" class="onlyprint"><h1>Lubrication</h1><div id="print-main-content"><div id="jb-print-toc"><div><h2> Contents </h2></div>` +
		`<nav aria-label="Page"><ul class="nav section-nav"><li class="toc-h2"><a class="nav-link" href="#oils">Oils</a></li><li class="toc-h2"><a class="nav-link" href="#intervals">Intervals</a></li></ul></nav></div></div></div>` +
		`<article class="bd-article"><section id="lubrication"><h1>Lubrication<a class="headerlink" href="#lubrication">#</a></h1>`)
	for _, sec := range []string{"Oils", "Intervals"} {
		b.WriteString(`<section id="` + strings.ToLower(sec) + `"><h2>` + sec + `</h2>`)
		for i := 0; i < 3; i++ {
			b.WriteString(`<p>The part on ` + strings.ToLower(sec) + ` says which oil keeps the gears of the gadget turning freely, and how often the gadget needs a drop of it.</p>`)
		}
		b.WriteString(`</section>`)
	}
	b.WriteString(`</section></article></div></div></main></div></body></html>`)
	p, err := Extract([]byte(b.String()), mustURL(t, "http://example.com/gadget/lubrication.html"), "text/html", nil)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, p)
	want := []string{"Lubrication", "Oils", "Intervals"}
	if got := headingTexts(p); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("headings = %q, want %q (extractor %s)\n%s", got, want, p.Extractor, p.Text)
	}
}

// TestPrintOnly covers the class names of print-only blocks.
func TestPrintOnly(t *testing.T) {
	for class, want := range map[string]bool{
		"onlyprint":                       true,
		"note print-only":                 true,
		"d-none d-print-block":            true,
		"d-none d-md-block d-print-block": false,
		"d-none":                          false,
		"printing-guide":                  false,
	} {
		n := &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div, Attr: []html.Attribute{{Key: "class", Val: class}}}
		if got := printOnly(n); got != want {
			t.Errorf("printOnly(class=%q) = %v, want %v", class, got, want)
		}
	}
}

// haddockModulePage builds a Haddock module page: a package header, then
// div#content holding the module's info table, its description, a long
// synopsis (all links but the keywords) and the documentation
// (div#interface): two documented types and ten undocumented ones whose
// instance tables list method signatures.
func haddockModulePage() string {
	var b strings.Builder
	w := func(s ...string) {
		for _, x := range s {
			b.WriteString(x)
		}
		b.WriteByte('\n')
	}
	documented := []struct{ name, doc, field, typ string }{
		{"Gear", "A toothed wheel: its count of teeth and the module of its teeth.", "teeth", "Int"},
		{"Train", "Gears in mesh, from the driving gear to the driven one.", "gears", "[Gear]"},
	}
	others := []string{"Mesh", "Axle", "Spring", "Lever", "Cam", "Pulley", "Belt", "Clutch", "Brake", "Crank"}
	fields := func(name string, def bool) string {
		var f strings.Builder
		for i := 0; i < 8; i++ {
			id := fmt.Sprintf("%s%d", strings.ToLower(name), i)
			label := fmt.Sprintf("%sField%d", strings.ToLower(name), i)
			if def {
				f.WriteString(`<li><dfn class="src"><a id="v:` + id + `" class="def">` + label + `</a>`)
			} else {
				f.WriteString(`<li><a href="#v:` + id + `">` + label + `</a>`)
			}
			f.WriteString(` :: <a href="P.html#t:Maybe">Maybe</a> <a href="#t:Gear">Gear</a> -&gt; <a href="#t:Train">Train</a>`)
			if def {
				f.WriteString(`</dfn><div class="doc empty">&nbsp;</div>`)
			}
			f.WriteString(`</li>`)
		}
		return f.String()
	}
	constructors := func(name, list string) string {
		return `<div class="subs constructors"><p class="caption">Constructors</p><table><tr><td class="src"><a id="v:` + name + `" class="def">` + name +
			`</a></td><td class="doc empty">&nbsp;</td></tr><tr><td colspan="2"><div class="subs fields"><p class="caption">Fields</p><ul>` + list + `</ul></div></td></tr></table></div>`
	}
	instance := func(name, head, methods string) string {
		return `<tr><td class="src clearfix"><span class="inst-left">` + head + `</span> <a href="src/T.html#l40" class="link">Source</a> <a href="#t:` + name + `" class="selflink">#</a></td><td class="doc empty">&nbsp;</td></tr>` +
			`<tr><td colspan="2"><details><summary class="hide-when-js-enabled">Instance details</summary><p>Defined in <a href="T.html">Gadget.Gears.Types</a></p> <div class="subs methods"><p class="caption">Methods</p>` + methods + `</div></details></td></tr>`
	}
	w(`<!DOCTYPE html><html xmlns="http://www.w3.org/1999/xhtml"><head><meta http-equiv="Content-Type" content="text/html; charset=UTF-8" /><title>Gadget.Gears.Types</title><script src="haddock-bundle.min.js" async="async"></script></head><body>`)
	w(`<div id="package-header"><span class="caption">gadget-gears-0.3.1: Gears, trains and ratios for the gadget.</span><ul class="links" id="page-menu"><li><a href="src/T.html">Source</a></li><li><a href="index.html">Contents</a></li><li><a href="doc-index.html">Index</a></li></ul></div>`)
	w(`<div id="content"><div id="module-header"><table class="info"><tr><th valign="top">Copyright</th><td>(c) The gadget makers 2019-2024</td></tr><tr><th>License</th><td>BSD-3-Clause</td></tr>`,
		`<tr><th>Maintainer</th><td>gears@gadget.example</td></tr><tr><th>Stability</th><td>experimental</td></tr></table><p class="caption">Gadget.Gears.Types</p></div>`)
	w(`<div id="description"><p class="caption">Description</p><div class="doc"><p>The types the gear modules share.</p></div></div>`)
	w(`<div id="synopsis"><details id="syn"><summary>Synopsis</summary><ul class="details-toggle">`)
	for _, d := range documented {
		w(`<li class="src short"><span class="keyword">data</span> <a href="#t:`, d.name, `">`, d.name, `</a> = <a href="#v:`, d.name, `">`, d.name, `</a> {<ul class="subs"><li><a href="#v:`, d.field, `">`, d.field, `</a> :: <a href="P.html#t:`, d.typ, `">`, d.typ, `</a></li></ul>}</li>`)
	}
	for _, name := range others {
		w(`<li class="src short"><span class="keyword">data</span> <a href="#t:`, name, `">`, name, `</a> m t = <a href="#v:`, name, `">`, name, `</a> {<ul class="subs">`, fields(name, false), `</ul>}</li>`)
	}
	w(`</ul></details></div>`)
	w(`<div id="interface"><h1>Documentation</h1>`)
	for _, d := range documented {
		w(`<div class="top"><p class="src"><span class="keyword">data</span> <a id="t:`, d.name, `" class="def">`, d.name, `</a> <a href="src/T.html#`, d.name, `" class="link">Source</a> <a href="#t:`, d.name, `" class="selflink">#</a></p>`)
		w(`<div class="doc"><p>`, d.doc, ` Values of this type are plain data: they compare, order and print as their fields do, and a new one is made with the record syntax or with the smart constructor of the module that owns it.</p>`,
			`<p>Most functions of the gear modules take a `, d.name, ` by value and give back a new one; none of them changes a `, d.name, ` in place.</p></div>`)
		w(constructors(d.name, `<li><dfn class="src"><a id="v:`+d.field+`" class="def">`+d.field+`</a> :: <a href="P.html#t:`+d.typ+`">`+d.typ+`</a></dfn><div class="doc empty">&nbsp;</div></li>`))
		w(`<div class="subs instances"><h4 class="instances details-toggle-control details-toggle">Instances</h4><details open="open"><summary class="hide-when-js-enabled">Instances details</summary><table>`,
			instance(d.name, `<a href="P.html#t:Eq">Eq</a> <a href="T.html#t:`+d.name+`">`+d.name+`</a>`,
				`<p class="src"><a href="#v:op">(==)</a> :: <a href="T.html#t:`+d.name+`">`+d.name+`</a> -&gt; <a href="T.html#t:`+d.name+`">`+d.name+`</a> -&gt; <a href="P.html#t:Bool">Bool</a> <a href="#v:op" class="selflink">#</a></p>`),
			`</table></details></div></div>`)
	}
	signatures := [][2]string{{"foldr", "(a -&gt; b -&gt; b) -&gt; b -&gt; %s a -&gt; b"}, {"foldl", "(b -&gt; a -&gt; b) -&gt; b -&gt; %s a -&gt; b"}, {"foldMap", "m =&gt; (a -&gt; m) -&gt; %s a -&gt; m"}}
	for _, name := range others {
		w(`<div class="top"><p class="src"><span class="keyword">data</span> <a id="t:`, name, `" class="def">`, name, `</a> m t <a href="src/T.html#`, name, `" class="link">Source</a> <a href="#t:`, name, `" class="selflink">#</a></p>`)
		w(constructors(name, fields(name, true)))
		w(`<div class="subs instances"><h4 class="instances details-toggle-control details-toggle">Instances</h4><details open="open"><summary class="hide-when-js-enabled">Instances details</summary><table>`)
		for _, class := range []string{"Foldable", "Traversable", "Functor"} {
			var m strings.Builder
			for _, s := range signatures {
				m.WriteString(`<p class="src"><a href="#v:` + s[0] + `">` + s[0] + `</a> :: ` + fmt.Sprintf(s[1], `<a href="#t:`+name+`">`+name+`</a>`) + ` <a href="#v:` + s[0] + `" class="selflink">#</a></p>`)
			}
			w(instance(name, `<a href="P.html#t:`+class+`">`+class+`</a> (<a href="#t:`+name+`">`+name+`</a> m)`, m.String()))
		}
		w(`</table></details></div></div>`)
	}
	w(`</div></div><div id="footer"><p>Produced by <a href="https://www.haskell.org/haddock/">Haddock</a> version 2.26.0</p></div></body></html>`)
	return b.String()
}

// TestExtractHaddockModuleKeepsInterface covers a Haddock module page:
// readability keeps the description and the synopsis, which sit beside the
// documentation (the content core) in div#content under styled paragraphs
// rather than headings, and drops the documentation itself. The element
// holding both, div#content, is the page's content.
func TestExtractHaddockModuleKeepsInterface(t *testing.T) {
	p, err := Extract([]byte(haddockModulePage()), mustURL(t, "http://example.com/gadget-gears/Gadget-Gears-Types.html"), "text/html", nil)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, p)
	if p.Extractor != ExtractorContainer {
		t.Errorf("Extractor = %q, want %q", p.Extractor, ExtractorContainer)
	}
	textHas(t, p, "The types the gear modules share.", "Values of this type are plain data", "none of them changes a Train in place.",
		"foldMap :: m => (a -> m) -> Crank a -> m", "License | BSD-3-Clause")
	textLacks(t, p, "Produced by", "gadget-gears-0.3.1")
	if got := headingTexts(p); len(got) == 0 || got[0] != "Documentation" {
		t.Errorf("headings = %q, want Documentation first", got)
	}
}

// TestExtractTableEmptyCells covers tables with empty cells (an enum's
// members whose description column holds only a picture, a blank first
// column under a row's name): a row must neither start nor end with a
// separator, while an empty cell between two texts keeps its column.
func TestExtractTableEmptyCells(t *testing.T) {
	page := `<html><head><title>Gadget.Layout</title></head><body><main><h1>Layout</h1>` +
		`<p>The ways the gadget lays out its gears on the frame, as shown by the pictures of the manual.</p>` +
		`<table><tr><th>Name</th><th>Description</th><th>Since</th></tr>` +
		`<tr><td><code>GADGET_LAYOUT_ROW</code></td><td><img src="row.png" alt=""></td><td></td></tr>` +
		`<tr><td></td><td><a href="https://example.com/columns">Browse the column layouts</a></td><td>2.4</td></tr>` +
		`<tr><td><code>GADGET_LAYOUT_GRID</code></td><td>&nbsp;</td><td>2.6</td></tr></table></main></body></html>`
	p, err := Extract([]byte(page), mustURL(t, "http://example.com/gadget/enum.Layout.html"), "text/html", nil)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, p)
	textHas(t, p, "Name | Description | Since\nGADGET_LAYOUT_ROW\nBrowse the column layouts | 2.4\nGADGET_LAYOUT_GRID | | 2.6")
}

// TestExtractStubPageLeavesTitleOut covers a stub page of an API reference
// (a module without a docstring under pdoc; a "TODO" page): the only text
// outside navigation is the heading. Trafilatura, the last resort, falls
// back to the whole document's text when it finds no block, and took the
// <title> and a style sheet kept in noscript along.
func TestExtractStubPageLeavesTitleOut(t *testing.T) {
	page := `<html><head><title>gadget.tools API documentation</title><noscript><style>.js-only { display: none !important; }</style></noscript></head><body>` +
		`<nav class="pdoc"><a href="../index.html">Module Index</a><h2>Submodules</h2><ul><li><a href="tools/wrench.html">wrench</a></li><li><a href="tools/gauge.html">gauge</a></li><li><a href="tools/press.html">press</a></li></ul></nav>` +
		`<main class="pdoc"><section class="module-info"><h1 class="modulename"><a href="./../gadget.html">gadget</a><wbr>.tools</h1></section></main></body></html>`
	p, err := Extract([]byte(page), mustURL(t, "http://example.com/api/gadget/tools.html"), "text/html", nil)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, p)
	textLacks(t, p, "API documentation", "display", "wrench")
	textHas(t, p, "gadget.tools")
}

// TestExtractDocusaurusHeadings covers a Docusaurus doc page: the h1 sits
// in a header inside the article's markdown block, and each h2 ends with a
// hash link whose text is a zero-width space. The headings must read as
// written, without the invisible character, and the breadcrumbs, the
// edit link and the pager stay out.
func TestExtractDocusaurusHeadings(t *testing.T) {
	h2 := func(id, text string) string {
		return `<h2 class="anchor anchorWithStickyNavbar" id="` + id + `">` + text + `<a href="#` + id + `" class="hash-link" aria-label="Direct link to ` + text + `" title="Direct link to ` + text + `">&#8203;</a></h2>`
	}
	page := `<html><head><title>Mounting the frame | Gadget Docs</title></head><body><div id="__docusaurus">` +
		`<nav aria-label="Main" class="navbar"><a class="navbar__brand" href="/">Gadget Docs</a></nav><div class="main-wrapper"><div class="docRoot">` +
		`<aside class="theme-doc-sidebar-container"><nav aria-label="Docs sidebar" class="menu"><ul><li><a href="/docs/intro">Intro</a></li><li><a href="/docs/frame">Mounting the frame</a></li></ul></nav></aside>` +
		`<main class="docMainContainer"><div class="container"><div class="row"><div class="col docItemCol"><div class="docItemContainer"><article>` +
		`<nav class="theme-doc-breadcrumbs" aria-label="Breadcrumbs"><ul class="breadcrumbs"><li><a href="/">Home</a></li><li>Mounting the frame</li></ul></nav>` +
		`<div class="theme-doc-markdown markdown"><header><h1>Mounting the frame</h1></header>` +
		`<p>The frame carries every axle of the gadget; mount it before the gears, on a flat and dry bench.</p>` +
		h2("tools", "Tools you need") + `<p>A 10 mm wrench, a level and the four frame bolts that came in the small bag.</p>` +
		h2("steps", "Steps") + `<p>Set the frame on its feet, level it, then tighten the bolts crosswise to the torque the manual gives.</p></div>` +
		`<footer class="theme-doc-footer"><div class="row"><div class="col"><a href="https://example.com/edit/docs/frame.md" class="theme-edit-this-page">Edit this page</a></div></div></footer></article>` +
		`<nav class="pagination-nav" aria-label="Docs pages"><a class="pagination-nav__link" href="/docs/intro"><div class="pagination-nav__sublabel">Previous</div><div class="pagination-nav__label">Intro</div></a></nav>` +
		`</div></div></div></div></main></div></div></div></body></html>`
	p, err := Extract([]byte(page), mustURL(t, "http://example.com/docs/frame"), "text/html", nil)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, p)
	want := []string{"Mounting the frame", "Tools you need", "Steps"}
	if got := headingTexts(p); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("headings = %q, want %q (extractor %s)\n%s", got, want, p.Extractor, p.Text)
	}
	textLacks(t, p, "\u200b", "Home", "Edit this page", "Previous", "Intro")
}

// TestExtractCodeLineNumbers covers code listings with line numbers:
// Pygments writes them as span.linenos inside the pre (Sphinx, MkDocs,
// pdoc), Rouge as a gutter cell beside the code (Jekyll). The numbers are
// not code: kept, they glued a number to every line ("2import gears").
func TestExtractCodeLineNumbers(t *testing.T) {
	page := `<html><head><title>Counting teeth — Gadget documentation</title></head><body><main><h1>Counting teeth</h1>` +
		`<p>The script below counts the teeth of every gear of a train and prints the ratio of the train, from the first gear to the last.</p>` +
		`<div class="highlight"><pre><span></span><span class="linenos">1</span><span class="kn">import</span> <span class="nn">gears</span>` + "\n" +
		`<span class="linenos">2</span><span class="n">train</span> <span class="o">=</span> <span class="n">gears</span><span class="o">.</span><span class="n">load</span><span class="p">()</span>` + "\n" +
		`<span class="linenos">3</span><span class="nb">print</span><span class="p">(</span><span class="n">train</span><span class="o">.</span><span class="n">ratio</span><span class="p">())</span>` + "\n</pre></div>" +
		`<p>The same in the gadget's own shell:</p>` +
		`<table class="rouge-table"><tbody><tr><td class="rouge-gutter gl"><pre class="lineno">1` + "\n" + `2` + "\n" + `</pre></td>` +
		`<td class="rouge-code"><pre>load train` + "\n" + `ratio train` + "\n" + `</pre></td></tr></tbody></table>` +
		`<p class="lineno-note">Line numbers start at 1 on every listing.</p></main></body></html>`
	p, err := Extract([]byte(page), mustURL(t, "http://example.com/gadget/teeth.html"), "text/html", nil)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, p)
	textHas(t, p, "import gears\ntrain = gears.load()\nprint(train.ratio())", "load train\nratio train", "Line numbers start at 1 on every listing.")
	textLacks(t, p, "1import", "2train", "1\n2")
}
