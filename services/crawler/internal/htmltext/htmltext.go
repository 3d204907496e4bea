package htmltext

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/abadojack/whatlanggo"
	"github.com/go-shiori/dom"
	"github.com/go-shiori/go-readability"
	"github.com/markusmobius/go-trafilatura"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"
)

// ErrUnsupportedType is returned for content types that are neither HTML nor
// plain text (PDF, images, ...). The crawler counts these as skipped.
var ErrUnsupportedType = errors.New("unsupported content type")

// Extractor names, as found in Page.Extractor.
const (
	ExtractorReadability = "readability"
	ExtractorTrafilatura = "trafilatura"
	ExtractorLandmark    = "landmark"
	ExtractorContainer   = "container"
	ExtractorBody        = "body"
	ExtractorSimple      = "simple"
	ExtractorPlain       = "plain"
)

// Page is the extracted content of one document.
type Page struct {
	// URL is the page URL the document was fetched from.
	URL string
	// Title is the document title, "" when none was found.
	Title string
	// Description is the meta or Open Graph description.
	Description string
	// Language is an ISO 639-1 code ("en"), "" when unknown.
	Language string
	// Published and Modified are zero when unknown.
	Published time.Time
	Modified  time.Time
	// Canonical is the absolute URL of <link rel=canonical>, "" when absent.
	Canonical string
	// Robots holds the page's own indexing directives.
	Robots Robots
	// Refresh is where a <meta http-equiv="refresh"> sends the reader within
	// MaxRefreshDelay seconds: a redirect written in HTML, so the page is a stub
	// to follow, not a document to store. "" when there is none.
	Refresh string
	// Text is the main text; see the package documentation for its layout.
	Text string
	// Headings lists the headings of the main text in document order.
	Headings []Heading
	// Sections cut Text into contiguous ranges, one per heading (plus one for
	// any text before the first heading); together they cover all of Text.
	Sections []Section
	// Links are the page's outgoing http(s) links, fragments removed, each URL
	// once, in document order.
	Links []Link
	// Code holds the distinct texts of inline <code> elements of the main
	// text, in order of first appearance.
	Code []string
	// Extractor says which method produced Text (Extractor* constants).
	Extractor string
}

// Heading is one heading of the main text.
type Heading struct {
	Level      int // 1 for h1 ... 6 for h6
	Text       string
	Start, End int // Text == Page.Text[Start:End]
}

// Section is a range of Page.Text under one heading.
type Section struct {
	// HeadingPath holds the texts of the enclosing headings, outermost first;
	// empty for text before the first heading.
	HeadingPath []string
	Start, End  int
}

// Link is one outgoing link.
type Link struct {
	URL  string // absolute, without fragment
	Text string // anchor text (or title/alt), whitespace collapsed
	// Rel is the rel attribute as written ("nofollow", "next", ...).
	Rel string
	// InContent is true when the link appears in the main text.
	InContent bool
}

// NoFollow reports whether the link's rel attribute contains nofollow.
func (l Link) NoFollow() bool { return hasToken(l.Rel, "nofollow") }

// Robots holds indexing directives from <meta name=robots> and X-Robots-Tag.
type Robots struct {
	NoIndex  bool
	NoFollow bool
}

// minMainText is the length under which readability's result is suspicious
// when the page has much more text outside navigation.
const minMainText = 400

// minLandmarkText is the least text a main landmark must hold to be used.
const minLandmarkText = 40

// Extract extracts the main text and metadata from body, a document fetched
// from pageURL with the given Content-Type and response headers (hdr may be
// nil). An empty or unknown content type is sniffed.
func Extract(body []byte, pageURL *url.URL, contentType string, hdr http.Header) (*Page, error) {
	if pageURL == nil {
		return nil, errors.New("extract: page URL is nil")
	}
	if contentType == "" && hdr != nil {
		contentType = hdr.Get("Content-Type")
	}
	if contentType == "" {
		contentType = http.DetectContentType(body)
	}
	mediaType, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		mediaType = strings.ToLower(strings.TrimSpace(strings.Split(contentType, ";")[0]))
	}
	switch mediaType {
	case "text/html", "application/xhtml+xml":
		return extractHTML(body, pageURL, contentType, hdr)
	case "text/plain", "text/markdown", "text/x-markdown":
		return extractPlain(body, pageURL, params["charset"], hdr)
	default:
		return nil, fmt.Errorf("extract %s: %w: %q", pageURL.Redacted(), ErrUnsupportedType, mediaType)
	}
}

func extractHTML(body []byte, pageURL *url.URL, contentType string, hdr http.Header) (*Page, error) {
	r, err := charset.NewReader(bytes.NewReader(body), contentType)
	if err != nil {
		r = bytes.NewReader(body)
	}
	doc, err := html.Parse(r)
	if err != nil {
		return nil, fmt.Errorf("extract %s: parse html: %w", pageURL.Redacted(), err)
	}
	breaksInPre(doc)
	p := &Page{URL: pageURL.String()}
	m := readMeta(doc, pageURL)
	p.Title, p.Description, p.Canonical, p.Robots, p.Refresh = m.title, m.description, m.canonical, m.robots, m.refresh
	p.Published, p.Modified = m.published, m.modified
	p.Language = m.lang

	var content *html.Node
	var extractor string
	if nodes, work := documentSize(doc); nodes > MaxLibraryNodes || work > MaxLibraryWork {
		// Readability and trafilatura walk the subtree of every element
		// again and again: their time grows with the nodes times their
		// depth, and 1 MB of nested tables took them half a minute.
		content, extractor = simpleContent(doc), ExtractorSimple
	} else {
		content, extractor = mainContent(doc, pageURL, m.title)
	}
	rd := newRenderer()
	rd.spaceInline = extractor == ExtractorTrafilatura
	if extractor == ExtractorReadability || extractor == ExtractorContainer || extractor == ExtractorTrafilatura {
		// Readability drops the heading that repeats the title (and turns
		// h1 into h2), trafilatura often drops it too; it is the page's
		// top heading and belongs in the section paths.
		if h := titleHeading(doc, m.title); h != nil && !startsWithText(content, h) &&
			!hasHeadingText(content, headingText(h)) {
			rd.heading(h, headingLevel(tagOf(h)))
		}
	}
	rd.render(content)
	rd.finish(p)
	p.Extractor = extractor
	if p.Title == "" && len(p.Headings) > 0 {
		p.Title = p.Headings[0].Text
	}

	inContent := collectHrefs(content, pageURL)
	p.Links = m.links
	for i := range p.Links {
		p.Links[i].InContent = inContent[p.Links[i].URL]
	}

	applyHeaders(p, hdr)
	if p.Language == "" {
		p.Language = detectLanguage(p.Text)
	}
	return p, nil
}

// MaxLibraryNodes and MaxLibraryWork bound the documents given to the
// extraction libraries: at most MaxLibraryNodes element and text nodes, and
// at most MaxLibraryWork for the sum of the depths of those nodes (the
// work of walking every element's subtree once, which readability and
// trafilatura do several times over). A larger document gets the simple
// extraction (ExtractorSimple). The largest page of the local documentation
// sites, Node.js's single-page API reference (5.8 MB), has 278,000 nodes
// and a depth sum of 2.9 million; its extraction takes about 2 s of CPU,
// and at the bounds a hostile page takes at most a few seconds.
const (
	MaxLibraryNodes = 500_000
	MaxLibraryWork  = 5_000_000
)

// documentSize returns the number of element and text nodes of doc and the
// sum of their depths.
func documentSize(doc *html.Node) (nodes, work int) {
	var walk func(*html.Node, int)
	walk = func(n *html.Node, depth int) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode || c.Type == html.TextNode {
				nodes++
				work += depth
			}
			walk(c, depth+1)
		}
	}
	walk(doc, 1)
	return nodes, work
}

// simpleContent returns the main content of a document too large for the
// extraction libraries: its main landmark when that holds text, else its
// body, without navigation, banners and footers (pruned in place).
func simpleContent(doc *html.Node) *html.Node {
	// Pruning decides on an element before anything below it goes, so
	// one memo serves each pass.
	if declared := mainLandmark(doc); declared != nil {
		m := newTextMemo()
		l := prune(declared, func(c *html.Node) bool { return boilerplateIn(c, m) })
		if len(collapse(textOf(l))) >= minLandmarkText {
			return l
		}
	}
	body := findFirst(doc, atom.Body)
	if body == nil {
		return doc
	}
	m := newTextMemo()
	return prune(body, func(c *html.Node) bool { return boilerplateIn(c, m) })
}

// mainContent returns the node holding the main content of doc, whose title
// is title, and the name of the method that found it.
func mainContent(doc *html.Node, pageURL *url.URL, title string) (*html.Node, string) {
	// Text in navigation, banners and footers does not count: a short
	// page whose other text is its navigation bars is no reason to try
	// trafilatura, which takes them along.
	visible := contentTextLen(findFirst(doc, atom.Body))
	var landmark *html.Node
	landmarkText := ""
	declared := mainLandmark(doc)
	if declared != nil {
		landmark = pruneBoilerplate(dom.Clone(declared, true))
		landmarkText = collapse(textOf(landmark))
		if len(landmarkText) < minLandmarkText {
			landmark = nil
		}
	}
	parser := readability.NewParser()
	// Classes stay on readability's result so that pruning recognises footers
	// and navigation by them.
	parser.KeepClasses = true
	var rdoc *html.Node
	if landmark != nil {
		// Readability looks only where the page says its content is:
		// given the whole page it also takes the site's title bar above
		// the landmark along (mdBook's).
		rdoc = landmarkDocument(doc, landmark)
	} else {
		// Nor does it see the navigation, banners, sidebars and footers:
		// on a short page it may pick one of them (TypeDoc's "On this
		// page" list in the sidebar, BoostBook's copyright table), and
		// when it keeps the whole page it turns a footer div holding one
		// paragraph into that paragraph, class and all gone, so pruning
		// its result no longer finds the footer.
		rdoc = readabilityInput(doc)
		pruneLinkFrames(rdoc, title)
	}
	dropSelfLinksBesideHeadings(rdoc) // a clone
	restore := hideHeadingIDs(rdoc)
	article, err := parser.ParseDocument(rdoc, pageURL) // works on a clone
	restore()
	if landmark != nil {
		landmark.Parent.RemoveChild(landmark)
	}
	best, bestName, bestLen := (*html.Node)(nil), "", 0
	if err == nil && article.Node != nil {
		// On short pages readability takes the sidebar column along.
		node := pruneBoilerplate(article.Node)
		best, bestName, bestLen = node, ExtractorReadability, textLen(node)
	}
	// When the page declares its main content and readability's choice lies
	// outside it (on link-list pages readability tends to pick the footer),
	// the page's own landmark wins.
	if landmark != nil && best != nil && !sharesText(collapse(textOf(best)), landmarkText) {
		return landmark, ExtractorLandmark
	}
	if bestName == ExtractorReadability {
		// Readability may keep one part of a page whose content lives in
		// one container (see containerShare); the container then wins.
		root, keepRoot := findFirst(doc, atom.Body), false
		if landmark != nil {
			root, keepRoot = declared, true
		}
		if c := containerOver(best, bestLen, root, keepRoot); c != nil {
			return c, ExtractorContainer
		}
		if lostHeadings(best, bestLen, root) {
			// The content lies flat in the root (pod2html writes body >
			// h1, p, pre, dl): readability keeps the paragraphs around
			// its pick and drops the headings between them.
			return pruneContainer(dom.Clone(root, true)), ExtractorContainer
		}
	}
	if bestLen < minMainText && visible > 2*bestLen {
		// Readability found little on a page with much more text. A page
		// that declares its main content and holds little there is a short
		// page (a chapter's title page): the rest is its sidebar, which
		// trafilatura would take.
		if landmark != nil {
			return landmark, ExtractorLandmark
		}
		// Trafilatura reads the page without its navigation, banners and
		// footers: on a short page it takes them for the text. Nor does it
		// get the title, scripts and styles: when it finds no text block
		// it falls back to all of the document's text, title first (a
		// stub page would read "Name - Site documentation Name"), and
		// with the style sheets a theme puts in noscript.
		page := prune(dom.Clone(doc, true), func(n *html.Node) bool {
			switch tagOf(n) {
			case atom.Title, atom.Script, atom.Style, atom.Noscript, atom.Template:
				return true
			}
			return isBoilerplate(n)
		})
		pruneLinkFrames(page, title)
		res, err := trafilatura.ExtractDocument(page, trafilatura.Options{
			OriginalURL:     pageURL,
			Focus:           trafilatura.FavorRecall,
			ExcludeComments: true,
			HtmlDateMode:    trafilatura.Disabled,
		})
		if err == nil && res.ContentNode != nil {
			if n := textLen(res.ContentNode); n > bestLen {
				best, bestName, bestLen = res.ContentNode, ExtractorTrafilatura, n
			}
		}
	}
	if bestLen == 0 {
		return strippedBody(doc), ExtractorBody
	}
	return best, bestName
}

// minFrameLinkShare is the least part of its text in links for a block of
// the body to be a navigation frame (see pruneLinkFrames).
const minFrameLinkShare = 0.8

// pruneLinkFrames removes from doc (a clone) the children of the body that
// are lists of links beside the block holding the page's title heading
// (see titleHeading): a table of contents in a frame of its own (LilyPond's
// texinfo manuals put the whole manual's beside each page), which
// readability and trafilatura take for the text of a short page. It does
// nothing when the title heading is itself a child of the body (a directory
// listing: an h1 and a list of links, both children of the body).
func pruneLinkFrames(doc *html.Node, title string) {
	body := findFirst(doc, atom.Body)
	h := titleHeading(doc, title)
	if body == nil || h == nil {
		return
	}
	block := h
	for block.Parent != nil && block.Parent != body {
		block = block.Parent
	}
	if block.Parent != body || block == h {
		return
	}
	for c := body.FirstChild; c != nil; {
		next := c.NextSibling
		if c != block && c.Type == html.ElementNode && textLen(c) > 0 && linkShare(c) >= minFrameLinkShare {
			body.RemoveChild(c)
		}
		c = next
	}
}

// containerOver returns the content container below root (root too when
// keepRoot) when it is the page's content rather than best, readability's
// result of bestLen bytes, and nil otherwise: readability kept too little of
// it, missed its first paragraph, or chose a block outside it.
func containerOver(best *html.Node, bestLen int, root *html.Node, keepRoot bool) *html.Node {
	c, need := contentContainer(root, keepRoot)
	if c == nil {
		return nil
	}
	if bestLen < need || missesLead(best, c) {
		return holdingContainer(c, root, keepRoot, collapse(textOf(best)))
	}
	if linkShare(best) >= minListLinkShare && !sharesText(collapse(textOf(c)), collapse(textOf(best))) {
		// Readability chose a list of links outside the core, which
		// holds nearly all the prose: a table of contents beside a page
		// whose text is a table (the contents frame of LilyPond's
		// texinfo manuals).
		return pruneContainer(dom.Clone(c, true))
	}
	return nil
}

// minFlatHeadings is the least number of headings a page must have for
// lostHeadings to compare.
const minFlatHeadings = 4

// lostHeadings reports whether best, readability's result of bestLen bytes,
// holds most of the text of root outside boilerplate (at least
// containerShare) but under half of its headings.
func lostHeadings(best *html.Node, bestLen int, root *html.Node) bool {
	inBest := countHeadings(best, nil)
	// Counting every heading first is cheap; most pages stop here.
	if all := countHeadings(root, nil); all < minFlatHeadings || all <= 2*inBest {
		return false
	}
	inRoot := countHeadings(root, passedOver)
	return inRoot >= minFlatHeadings && 2*inBest < inRoot &&
		float64(bestLen) >= containerShare*float64(contentTextLen(root))
}

// countHeadings counts the h1–h6 elements below n, not looking inside the
// elements skip (nil: none) reports true for.
func countHeadings(n *html.Node, skip func(*html.Node) bool) int {
	count := 0
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode || (skip != nil && skip(c)) {
			continue
		}
		if headingLevel(tagOf(c)) > 0 {
			count++
			continue
		}
		count += countHeadings(c, skip)
	}
	return count
}

// minListLinkShare is the least part of its text in links for readability's
// result to be a list of links.
const minListLinkShare = 0.5

// holdingContainer returns a pruned clone of the content container c, or of
// its nearest ancestor below root (root too when keepRoot), that holds
// bestText, readability's fragment; nil when none does. Readability may
// keep a part of the content beside the core rather than inside it: on a
// Haddock module page it keeps the synopsis, which sits next to the
// documentation (the core) in div#content under headings that are styled
// paragraphs, not h1–h6.
func holdingContainer(c, root *html.Node, keepRoot bool, bestText string) *html.Node {
	for n := c; n != nil && (n != root || keepRoot); n = n.Parent {
		if n != c && !sharesText(bestText, collapse(textOf(n))) {
			// Pruning only removes text: a clone is worth making only
			// when the whole element holds the fragment.
			continue
		}
		if pc := pruneContainer(dom.Clone(n, true)); sharesText(bestText, collapse(textOf(pc))) {
			return pc
		}
		if n == root {
			break
		}
	}
	return nil
}

// readabilityInput returns a clone of doc without its boilerplate (see
// isBoilerplate). An element holding an h1 and half the body's text or more
// stays: a layout wrapper named for the sidebar it makes room for
// ("has-sidebar") holds the content too. A long footer on a short page
// (Qt's licence notice under an example's two sentences) goes.
func readabilityInput(doc *html.Node) *html.Node {
	clone := dom.Clone(doc, true)
	body := findFirst(clone, atom.Body)
	if body == nil {
		return clone
	}
	half := textLen(body) / 2
	prune(body, func(n *html.Node) bool {
		return isBoilerplate(n) && (textLen(n) < half || findFirst(n, atom.H1) == nil)
	})
	return clone
}

// breaksInPre replaces every br element inside a pre element below n with a
// newline, which it means there. Readability turns two br in a row into a
// paragraph break, which in a code listing glues lines together (TypeDoc
// writes its highlighted code with br between lines).
func breaksInPre(n *html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		if tagOf(c) == atom.Pre {
			brToNewline(c)
			continue
		}
		breaksInPre(c)
	}
}

func brToNewline(n *html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		if tagOf(c) == atom.Br {
			c.Type, c.Data, c.DataAtom, c.Attr = html.TextNode, "\n", 0, nil
			continue
		}
		brToNewline(c)
	}
}

// landmarkDocument returns a document with doc's head and a body holding
// only landmark, which it adopts (detach it after use).
func landmarkDocument(doc, landmark *html.Node) *html.Node {
	d := &html.Node{Type: html.DocumentNode}
	root := &html.Node{Type: html.ElementNode, Data: "html", DataAtom: atom.Html}
	if h := findFirst(doc, atom.Html); h != nil {
		root.Attr = h.Attr
	}
	d.AppendChild(root)
	if head := findFirst(doc, atom.Head); head != nil {
		root.AppendChild(dom.Clone(head, true))
	}
	body := &html.Node{Type: html.ElementNode, Data: "body", DataAtom: atom.Body}
	root.AppendChild(body)
	body.AppendChild(landmark)
	return d
}

// isSiteTitle reports whether all text of heading h lies in links to other
// pages (or elsewhere): a site name in the page header (Sphinx themes put it in an h1), not
// the page's own heading.
func isSiteTitle(h *html.Node) bool {
	linked := false
	var own strings.Builder
	var walk func(*html.Node, bool)
	walk = func(n *html.Node, inLink bool) {
		if n.Type == html.TextNode {
			if inLink {
				linked = linked || strings.TrimSpace(n.Data) != ""
			} else {
				own.WriteString(n.Data)
			}
			return
		}
		if n.Type == html.ElementNode && tagOf(n) == atom.A {
			if isPermalink(n) {
				return
			}
			// A link within the page (a back-reference to the table of
			// contents) keeps the heading the page's own.
			inLink = inLink || !strings.HasPrefix(attr(n, "href"), "#")
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, inLink)
		}
	}
	walk(h, false)
	return linked && trimPilcrow(collapse(own.String())) == ""
}

// hideHeadingIDs removes the ids that name sections after their headings
// (see namedForHeading), the ids of headings (mdBook, MkDocs and Hugo put
// the anchor on the heading itself) and the classes of code comments (see
// isCodeComment), and returns a function that puts them back.
// Readability takes words in ids and classes for layout hints and drops
// sections such as "Comments" (a language's comment syntax) or "Host header
// poisoning", and the comments of a code listing.
func hideHeadingIDs(doc *html.Node) (restore func()) {
	type saved struct {
		n    *html.Node
		attr []html.Attribute
	}
	var all []saved
	hide := func(n *html.Node, key string) {
		kept := make([]html.Attribute, 0, len(n.Attr))
		for _, a := range n.Attr {
			if a.Namespace != "" || !strings.EqualFold(a.Key, key) {
				kept = append(kept, a)
			}
		}
		all = append(all, saved{n, n.Attr})
		n.Attr = kept
	}
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch {
			case (tagOf(n) == atom.Div || tagOf(n) == atom.Section) && namedForHeading(n),
				headingLevel(tagOf(n)) > 0 && attr(n, "id") != "":
				hide(n, "id")
			case isCodeComment(n):
				hide(n, "class")
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return func() {
		for _, s := range all {
			s.n.Attr = s.attr
		}
	}
}

// isCodeComment reports whether n is a span whose class names it a comment:
// the comment of a highlighted code listing (Doxygen writes its listings as
// one div per line, outside pre and code, with span.comment), never a
// reader comment thread, which is a block.
func isCodeComment(n *html.Node) bool {
	if tagOf(n) != atom.Span {
		return false
	}
	for _, c := range strings.Fields(strings.ToLower(attr(n, "class"))) {
		if strings.Contains(c, "comment") {
			return true
		}
	}
	return false
}

// startsWithText reports whether content opens with a block holding just
// the text of heading (readability sometimes turns the h1 into an h2 or a
// paragraph). A first paragraph that merely starts with the same words ("The
// Python Package Index (PyPI) stores metadata ...") does not count.
func startsWithText(content, heading *html.Node) bool {
	h := headingText(heading)
	if h == "" {
		return true
	}
	return trimPilcrow(collapse(firstBlockText(content))) == h
}

// firstBlockText returns the text of the first heading, paragraph or other
// text block below n that holds text, "" when there is none.
func firstBlockText(n *html.Node) string {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.TextNode && strings.TrimSpace(c.Data) != "" {
			return c.Data
		}
		if c.Type != html.ElementNode || skipped[tagOf(c)] {
			continue
		}
		switch tagOf(c) {
		case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.P, atom.Dt, atom.Li, atom.Pre, atom.Th, atom.Td:
			if t := headingText(c); t != "" {
				return t
			}
			continue
		}
		if t := firstBlockText(c); t != "" {
			return t
		}
	}
	return ""
}

// sharesText reports whether some run of words of text (sampled at a
// quarter, half and three quarters of it) occurs in other.
func sharesText(text, other string) bool {
	words := strings.Fields(text)
	const run = 6
	if len(words) < run {
		return strings.Contains(other, strings.Join(words, " "))
	}
	for _, at := range []int{len(words) / 4, len(words) / 2, 3 * len(words) / 4} {
		at = min(at, len(words)-run)
		if strings.Contains(other, strings.Join(words[at:at+run], " ")) {
			return true
		}
	}
	return false
}

func extractPlain(body []byte, pageURL *url.URL, cs string, hdr http.Header) (*Page, error) {
	if cs != "" && !strings.EqualFold(cs, "utf-8") && !strings.EqualFold(cs, "utf8") {
		if r, err := charset.NewReaderLabel(cs, bytes.NewReader(body)); err == nil {
			if b, err := io.ReadAll(r); err == nil {
				body = b
			}
		}
	}
	text := strings.ToValidUTF8(string(body), "\uFFFD")
	text = strings.TrimPrefix(text, "\uFEFF")
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	text = strings.TrimSpace(text)
	p := &Page{URL: pageURL.String(), Text: text, Extractor: ExtractorPlain}
	if text != "" {
		p.Sections = []Section{{Start: 0, End: len(text)}}
	}
	first, _, _ := strings.Cut(text, "\n")
	if first = strings.TrimSpace(first); first != "" && utf8.RuneCountInString(first) <= 120 {
		p.Title = first
	} else if i := strings.LastIndexByte(pageURL.Path, '/'); i >= 0 && i < len(pageURL.Path)-1 {
		p.Title = pageURL.Path[i+1:]
	}
	applyHeaders(p, hdr)
	if p.Language == "" {
		p.Language = detectLanguage(text)
	}
	return p, nil
}

// applyHeaders fills what the response headers know and the document did
// not say.
func applyHeaders(p *Page, hdr http.Header) {
	if hdr == nil {
		return
	}
	if p.Modified.IsZero() {
		if t, err := http.ParseTime(hdr.Get("Last-Modified")); err == nil {
			p.Modified = t.UTC()
		}
	}
	if p.Language == "" {
		p.Language = primaryLang(hdr.Get("Content-Language"))
	}
	for _, v := range hdr.Values("X-Robots-Tag") {
		applyRobots(&p.Robots, v)
	}
}

func detectLanguage(text string) string {
	if len(text) < 40 {
		return ""
	}
	if len(text) > 4000 {
		text = strings.ToValidUTF8(text[:4000], "")
	}
	info := whatlanggo.Detect(text)
	if !info.IsReliable() {
		return ""
	}
	return info.Lang.Iso6391()
}
