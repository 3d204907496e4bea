package ranker

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// Generated is the kind of page a documentation generator writes by itself, beside
// the pages people wrote: a listing of the project's source code or an index of
// names. Neither answers a question in its own words, yet both repeat the names and
// identifiers of every page they point to, so text and vector retrieval both find
// them: on the Django documentation crawled with default settings the source
// listings were 153 of 691 pages and took 125 of the full pipeline's 670 top-10
// places (docs/adr/0012-generated-pages.md).
type Generated uint8

const (
	// NotGenerated is a page people wrote.
	NotGenerated Generated = iota
	// SourceListing is a page of highlighted source code: Sphinx viewcode's
	// _modules/ pages, rustdoc's src/ pages, Doxygen's *_8*_source.html, javadoc's
	// src-html/.
	SourceListing
	// GeneratedIndex is an index of names or a whole-site table of contents: Sphinx's
	// genindex and module indexes, DocBook's bookindex, javadoc's index-all, a
	// texinfo "Concept Index" node, a "documentation contents" page.
	GeneratedIndex
)

// String names the kind as explain and the API do.
func (g Generated) String() string {
	switch g {
	case SourceListing:
		return "source listing"
	case GeneratedIndex:
		return "generated index"
	default:
		return ""
	}
}

// DefaultGeneratedFactor multiplies the final score of a source listing unless the
// query asks about source code, and of a generated index always. Measured on three
// corpora crawled as users crawl them, one of them judged with every page class in
// view: 0.7 and 0.5 tie on the mean, 0.7 is the milder (docs/adr/0012-generated-pages.md).
const DefaultGeneratedFactor = 0.7

// sourceSegment matches a URL path segment that holds source listings: Sphinx
// viewcode writes them under _modules/, javadoc under src-html/.
var sourceSegment = regexp.MustCompile(`(?i)^(?:_modules|src-html)$`)

// sourceTitle matches the titles generators give source listings: "Source code for
// django.views.generic.dates" (Sphinx viewcode's heading, the title of some themes),
// rustdoc's "lib.rs - source", Doxygen's "libfoo: src/foo.c Source File".
var sourceTitle = regexp.MustCompile(`(?i)(^\s*source\s+code\s+for\s|\.\w{1,5}\s+-\s+source\b|\.\w{1,5}\s+source\s+file\s*$)`)

// indexFile matches the last segment of a generated index: Sphinx's genindex.html,
// genindex-A.html, genindex-all.html, py-modindex.html (any domain's module index),
// DocBook's bookindex.html, javadoc's index-all.html and allclasses-index.html
// (javadoc's index split by letter lies under index-files/, which PageGenerated
// checks as a directory).
var indexFile = regexp.MustCompile(`(?i)^(?:genindex(?:-[^/.]+)?|[a-z]+-modindex|bookindex|index-all|all(?:classes|packages)-index)\.html?$`)

// indexTitle matches the titles of generated indexes and whole-site tables of
// contents: "Index — Python 3.11 documentation", "Python Module Index", "Concept
// Index (GNU Octave)", the other texinfo indexes ("Command Index", "Key Index",
// "Type Index", "Option Index"…), rustdoc's "List of all items in this crate",
// "Django documentation contents", "Table of Contents". An
// index word must end the title or come before the site's name after a separator,
// so "Index Expressions", "Indexing Cell Arrays" and "Partial Indexes" are not.
// "Table of Contents" counts only alone: with a site's name after it, it is the
// title of the page that documents a table-of-contents feature (Hugo's "Table of
// contents | Hugo", Python-Markdown's toc extension, Asciidoctor's "Table of
// Contents (ToC)").
var indexTitle = regexp.MustCompile(`(?i)^\s*(?:(?:general|concept|function|variable|module|[a-z]+\s+module|class|operator|keyword|program|command|key|keystroke|type|data\s+type|option|macro)\s+)?index\s*(?:$|[—–|:(-])|^\s*list\s+of\s+all\s+items\b|^\s*(?:[\w.+-]+\s+){0,3}documentation\s+contents\s*(?:$|[—–|:(-])|^\s*table\s+of\s+contents\s*$`)

// doxygenSource matches the last segment of a Doxygen source listing: the file's
// name with "_" doubled and "." written "_8", then "_source.html"
// (foo_8c_source.html, my__file_8hpp_source.html). A page people wrote whose
// name merely ends in "_source" (data_source.html) does not have the "_8".
var doxygenSource = regexp.MustCompile(`(?i)_8[a-z0-9+]+_source\.html?$`)

// PageGenerated reports whether a page is a source listing or a generated index,
// judged from its URL path and title.
func PageGenerated(rawURL, title string) Generated {
	if sourceTitle.MatchString(title) {
		return SourceListing
	}
	if indexTitle.MatchString(title) {
		return GeneratedIndex
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return NotGenerated
	}
	segs := strings.Split(strings.Trim(u.Path, "/"), "/")
	dirs, last := segs[:len(segs)-1], strings.ToLower(segs[len(segs)-1])
	for _, seg := range dirs {
		if sourceSegment.MatchString(seg) {
			return SourceListing
		}
	}
	if doxygenSource.MatchString(last) ||
		(strings.HasSuffix(last, ".rs.html") && slices.ContainsFunc(dirs, func(d string) bool { return strings.EqualFold(d, "src") })) {
		return SourceListing
	}
	if indexFile.MatchString(last) || slices.ContainsFunc(dirs, func(d string) bool { return strings.EqualFold(d, "index-files") }) {
		return GeneratedIndex
	}
	return NotGenerated
}

// sourceQuery matches a query that asks for source code, for which a source listing
// is what the user wants: "source code of the login view", "how is
// get_object_or_404 implemented", "show me the code of Signal", "what happens under
// the hood". Phrases that documentation answers in prose do not count: "how do I
// implement a custom backend" (what the user will write), "where are settings
// defined", "default implementation of a trait method", "source of truth".
var sourceQuery = regexp.MustCompile(`(?i)(\bsource\s+code\b|\bshow\s+(?:me\s+)?the\s+code\b|` +
	`\b(?:how|where)\s+(?:is|are|was|were)\b.*\bimplemented\b|\bunder\s+the\s+hood\b)`)

// AsksForSource reports whether a query asks for source code, so that source
// listings keep their full score.
func AsksForSource(query string) bool { return sourceQuery.MatchString(query) }
