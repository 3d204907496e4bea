package htmltext

import (
	"strings"
	"testing"
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
	for _, s := range []string{"frob mend [--dry-run]", "The description part 2 explains", "--option-14", "format-8", "mend.setting-6"} {
		if !strings.Contains(p.Text, s) {
			t.Errorf("text lacks %q", s)
		}
	}
	if strings.Contains(p.Text, "Last updated") {
		t.Errorf("text holds the footer:\n%s", p.Text)
	}
}

// TestExtractShortPageKeepsLandmark covers a book chapter's title page
// (mdBook layout): a heading and one sentence in <main>, a long table of
// contents in the sidebar. Readability finds little, and trafilatura would
// take the sidebar; the page's own landmark is its content.
func TestExtractShortPageKeepsLandmark(t *testing.T) {
	p := extractFile(t, "mdbook-short.html", "http://example.com/handbook/ch13.html", nil)
	if p.Extractor != ExtractorLandmark {
		t.Errorf("Extractor = %q, want %q", p.Extractor, ExtractorLandmark)
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
	for _, s := range []string{"The Gadget Handbook", "Getting started", "Previous", "Print"} {
		if strings.Contains(p.Text, s) {
			t.Errorf("text contains %q:\n%s", s, p.Text)
		}
	}
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
	for _, s := range []string{"The bolt tightening operator +~.", "bolt.tighten(2);", "Turns the bolt further by rhs.", "impl Tighten<&mut isize> for Checked<isize>"} {
		if !strings.Contains(p.Text, s) {
			t.Errorf("text lacks %q", s)
		}
	}
	want := []string{"Trait gadget::ops::Tighten", "Examples", "Required Methods", "fn tighten(&mut self, rhs: Rhs)", "Implementors"}
	if got := headingTexts(p); len(got) < len(want) || strings.Join(got[:len(want)], "|") != strings.Join(want, "|") {
		t.Errorf("headings start %q, want %q", got[:min(len(got), len(want))], want)
	}
}
