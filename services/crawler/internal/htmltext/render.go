package htmltext

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

type blockKind int

const (
	kindPara blockKind = iota
	kindHeading
	kindPre
	kindItem // list item, table row, definition term or description
)

type block struct {
	kind  blockKind
	level int
	text  string
}

// renderer turns a content tree into blocks of text.
type renderer struct {
	blocks []block
	cur    strings.Builder
	kind   blockKind
	inCell int
	inCode int
	code   []string
	seen   map[string]bool
	prefix string
	// spaceInline separates adjacent inline elements with a space; needed
	// for trafilatura output, which drops the whitespace between them.
	spaceInline bool
}

func newRenderer() *renderer {
	return &renderer{seen: map[string]bool{}}
}

// skipped elements never contribute text.
var skipped = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true,
	atom.Svg: true, atom.Math: false, atom.Canvas: true, atom.Iframe: true, atom.Object: true,
	atom.Embed: true, atom.Button: true, atom.Input: true, atom.Select: true,
	atom.Textarea: true, atom.Head: true, atom.Title: true, atom.Meta: true,
	atom.Link: true, atom.Img: true, atom.Picture: true, atom.Video: true,
	atom.Audio: true, atom.Source: true, atom.Nav: true, atom.Dialog: true,
}

// blockElems start and end a block.
var blockElems = map[atom.Atom]bool{
	atom.P: true, atom.Div: true, atom.Section: true, atom.Article: true,
	atom.Main: true, atom.Blockquote: true, atom.Figure: true, atom.Figcaption: true,
	atom.Header: true, atom.Footer: true, atom.Address: true, atom.Details: true,
	atom.Summary: true, atom.Center: true, atom.Fieldset: true, atom.Table: true,
	atom.Thead: true, atom.Tbody: true, atom.Tfoot: true, atom.Ul: true, atom.Ol: true,
	atom.Dl: true, atom.Hr: true, atom.Caption: true, atom.Form: true, atom.Aside: true,
	atom.Body: true, atom.Html: true, atom.Menu: true, atom.Hgroup: true,
}

func headingLevel(a atom.Atom) int {
	switch a {
	case atom.H1:
		return 1
	case atom.H2:
		return 2
	case atom.H3:
		return 3
	case atom.H4:
		return 4
	case atom.H5:
		return 5
	case atom.H6:
		return 6
	}
	return 0
}

func (r *renderer) render(n *html.Node) {
	if n == nil {
		return
	}
	switch n.Type {
	case html.DocumentNode:
		r.children(n)
		return
	case html.TextNode:
		r.text(n.Data)
		return
	case html.ElementNode:
	default:
		return
	}
	a := tagOf(n)
	if skipped[a] || isHidden(n) || isLineNumbers(n) {
		return
	}
	if lvl := headingLevel(a); lvl > 0 && r.inCell == 0 {
		r.heading(n, lvl)
		return
	}
	switch a {
	case atom.Pre:
		r.flush()
		r.kind = kindPre
		r.pre(n)
		r.flush()
		return
	case atom.Br:
		r.cur.WriteByte('\n')
		return
	case atom.Li, atom.Dt, atom.Dd:
		if r.inCell > 0 {
			r.space()
			r.children(n)
			return
		}
		r.flush()
		r.kind = kindItem
		if a == atom.Li {
			r.prefix = "- "
		}
		r.children(n)
		r.flush()
		return
	case atom.Tr:
		if r.inCell == 0 && rowHoldsHeading(n) {
			// A row holding a heading lays out a title block (GTK-Doc's
			// refnamediv, Doxygen's group header rows), not data: its
			// cells are blocks, so that the heading stays a heading.
			r.flush()
			r.children(n)
			r.flush()
			return
		}
		r.flush()
		r.kind = kindItem
		r.inCell++
		tail := -1 // where the row's trailing empty cells start
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode && (tagOf(c) == atom.Td || tagOf(c) == atom.Th) {
				tail = r.cell(c, tail)
				continue
			}
			r.render(c)
		}
		if s := r.cur.String(); tail >= 0 && tail <= len(s) && strings.Trim(s[tail:], " |") == "" {
			r.cur.Reset()
			r.cur.WriteString(s[:tail])
		}
		r.inCell--
		r.flush()
		return
	case atom.A:
		if isPermalink(n) || isSelfLink(n) {
			return
		}
		if r.spaceInline {
			r.space()
			r.children(n)
			r.space()
			return
		}
	case atom.Code, atom.Kbd, atom.Samp, atom.Tt:
		if r.inCode == 0 {
			r.addCode(n)
		}
		r.inCode++
		r.children(n)
		r.inCode--
		return
	}
	if blockElems[a] || a == atom.Td || a == atom.Th {
		if r.inCell > 0 {
			r.space()
			r.children(n)
			r.space()
			return
		}
		r.flush()
		r.children(n)
		r.flush()
		return
	}
	r.children(n)
}

// cell renders table cell c of the current row, after a " | " when the row
// already holds text, and returns where the row's trailing empty cells
// start (-1 when c holds text; tail is the value for the cells before c).
// Empty cells before the first text add nothing and trailing ones are cut
// at the row's end, so that a row never starts or ends with a separator;
// empty cells between two texts keep their separators (a table of which
// database supports which lookup is read by column).
func (r *renderer) cell(c *html.Node, tail int) int {
	r.trimSpace()
	mark := r.cur.Len()
	if mark > 0 {
		r.cur.WriteString(" | ")
	}
	r.render(c)
	s := r.cur.String()
	if len(s) < mark || strings.TrimSpace(strings.TrimPrefix(s[mark:], " | ")) != "" {
		return -1
	}
	if mark == 0 {
		r.cur.Reset()
		return tail
	}
	if tail < 0 {
		return mark
	}
	return tail
}

// lineNumberClasses name the line-number gutter of a code listing:
// Pygments' (Sphinx, MkDocs, pdoc), Doxygen's, Rouge's and Chroma's (Hugo).
var lineNumberClasses = map[string]bool{
	"linenos": true, "lineno": true, "linenodiv": true, "line-number": true, "line-numbers": true,
	"rouge-gutter": true, "lnt": true, "ln": true,
}

// isLineNumbers reports whether n is a code listing's line numbers: named
// so by a class and holding only digits. Kept, they glue a number to the
// start of every line ("12from os import path").
func isLineNumbers(n *html.Node) bool {
	class := strings.ToLower(attr(n, "class"))
	if !strings.Contains(class, "lineno") && !strings.Contains(class, "line-number") &&
		!strings.Contains(class, "gutter") && !strings.Contains(class, "ln") {
		return false
	}
	named := false
	for _, c := range strings.Fields(class) {
		if lineNumberClasses[c] {
			named = true
			break
		}
	}
	if !named {
		return false
	}
	return strings.TrimFunc(textOf(n), func(r rune) bool { return unicode.IsDigit(r) || unicode.IsSpace(r) }) == ""
}

// rowHoldsHeading reports whether table row n has a heading in one of its
// cells.
func rowHoldsHeading(n *html.Node) bool {
	return findNode(n, func(x *html.Node) bool {
		return x.Type == html.ElementNode && headingLevel(tagOf(x)) > 0
	}) != nil
}

func (r *renderer) children(n *html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		r.render(c)
	}
}

// heading renders n as a heading block of the given level.
func (r *renderer) heading(n *html.Node, level int) {
	r.flush()
	sub := newRenderer()
	sub.inCell = 1 // keep everything on one line
	sub.children(n)
	text := trimPilcrow(collapse(sub.cur.String()))
	for _, c := range sub.code {
		r.addCodeText(c)
	}
	if text != "" {
		r.blocks = append(r.blocks, block{kind: kindHeading, level: level, text: text})
	}
}

func (r *renderer) pre(n *html.Node) {
	var sb strings.Builder
	var walk func(*html.Node)
	walk = func(c *html.Node) {
		switch c.Type {
		case html.TextNode:
			sb.WriteString(c.Data)
		case html.ElementNode:
			if tagOf(c) == atom.Br {
				sb.WriteByte('\n')
				return
			}
			if skipped[tagOf(c)] || isLineNumbers(c) {
				return
			}
			for cc := c.FirstChild; cc != nil; cc = cc.NextSibling {
				walk(cc)
			}
		}
	}
	walk(n)
	text := strings.ReplaceAll(sb.String(), "\r\n", "\n")
	text = strings.TrimLeft(text, "\n")
	text = strings.TrimRightFunc(text, unicode.IsSpace)
	// Drop trailing spaces on every line; they carry no meaning.
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRightFunc(l, unicode.IsSpace)
	}
	r.cur.WriteString(strings.Join(lines, "\n"))
}

func (r *renderer) text(s string) {
	if s == "" {
		return
	}
	// Collapse whitespace runs to one space, keeping explicit <br> newlines.
	for _, rn := range s {
		if unicode.IsSpace(rn) || rn == '\u00a0' {
			r.space()
			continue
		}
		if rn == utf8.RuneError || rn == 0 {
			rn = '\uFFFD'
		}
		r.cur.WriteRune(rn)
	}
}

// space writes one space unless the buffer is empty or already ends in
// whitespace.
func (r *renderer) space() {
	if r.cur.Len() == 0 {
		return
	}
	s := r.cur.String()
	if last := s[len(s)-1]; last == ' ' || last == '\n' {
		return
	}
	r.cur.WriteByte(' ')
}

func (r *renderer) trimSpace() {
	s := r.cur.String()
	t := strings.TrimRight(s, " ")
	if len(t) != len(s) {
		r.cur.Reset()
		r.cur.WriteString(t)
	}
}

func (r *renderer) flush() {
	text := r.cur.String()
	r.cur.Reset()
	kind, prefix := r.kind, r.prefix
	r.kind, r.prefix = kindPara, ""
	if kind != kindPre {
		// Trim spaces around explicit line breaks and drop empty lines.
		lines := strings.Split(text, "\n")
		out := lines[:0]
		for _, l := range lines {
			if l = strings.TrimSpace(l); l != "" {
				out = append(out, l)
			}
		}
		text = strings.Join(out, "\n")
	}
	if kind == kindItem {
		text = trimPilcrow(text)
	}
	if strings.TrimSpace(text) == "" {
		return
	}
	r.blocks = append(r.blocks, block{kind: kind, text: prefix + text})
}

func (r *renderer) addCode(n *html.Node) {
	sub := newRenderer()
	sub.inCell = 1
	sub.inCode = 1
	sub.children(n)
	r.addCodeText(collapse(sub.cur.String()))
}

func (r *renderer) addCodeText(s string) {
	if s == "" || len(s) > 200 || r.seen[s] {
		return
	}
	r.seen[s] = true
	r.code = append(r.code, s)
}

// finish joins the blocks into p.Text and fills Headings, Sections and Code.
func (r *renderer) finish(p *Page) {
	r.flush()
	r.dropRepeatedText()
	var sb strings.Builder
	var stack []Heading // open headings, outermost first
	sectionStart := 0
	var sectionPath []string
	for i, b := range r.blocks {
		if i > 0 {
			prev := r.blocks[i-1]
			if b.kind == kindItem && prev.kind == kindItem {
				sb.WriteByte('\n')
			} else {
				sb.WriteString("\n\n")
			}
		}
		if b.kind == kindHeading {
			start := sb.Len()
			if start > sectionStart {
				p.Sections = append(p.Sections, Section{HeadingPath: sectionPath, Start: sectionStart, End: start})
			}
			for len(stack) > 0 && stack[len(stack)-1].Level >= b.level {
				stack = stack[:len(stack)-1]
			}
			h := Heading{Level: b.level, Text: b.text, Start: start, End: start + len(b.text)}
			stack = append(stack, h)
			p.Headings = append(p.Headings, h)
			sectionStart = start
			sectionPath = make([]string, len(stack))
			for j, s := range stack {
				sectionPath[j] = s.Text
			}
		}
		sb.WriteString(b.text)
	}
	p.Text = sb.String()
	if len(p.Text) > sectionStart {
		p.Sections = append(p.Sections, Section{HeadingPath: sectionPath, Start: sectionStart, End: len(p.Text)})
	}
	p.Code = r.code
}

// dropRepeatedText drops a last paragraph that repeats all the text before
// it (two blocks or more), spaces aside: trafilatura adds a short page's
// whole text once more as one paragraph ("8. Issues This chapter deals
// with …" after the heading and the sentence).
func (r *renderer) dropRepeatedText() {
	n := len(r.blocks)
	if n < 3 || r.blocks[n-1].kind != kindPara {
		return
	}
	last := strings.Join(strings.Fields(r.blocks[n-1].text), "")
	if len(last) > maxRepeatedText {
		return
	}
	var before strings.Builder
	for _, b := range r.blocks[:n-1] {
		for _, f := range strings.Fields(strings.TrimPrefix(b.text, "- ")) {
			before.WriteString(f)
		}
	}
	if before.String() == last {
		r.blocks = r.blocks[:n-1]
	}
}

// maxRepeatedText is the longest repeated text (non-space bytes) that
// dropRepeatedText looks at: trafilatura repeats only short pages.
const maxRepeatedText = 2000

// collapse trims s and turns every whitespace run into one space.
func collapse(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// isPermalink reports whether a is a heading permalink such as Sphinx's ¶.
func isPermalink(a *html.Node) bool {
	href := attr(a, "href")
	if !strings.HasPrefix(href, "#") {
		return false
	}
	// Docusaurus's hash-link holds a zero-width space (a format character,
	// which TrimSpace keeps).
	switch strings.TrimFunc(textOf(a), func(r rune) bool { return unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) }) {
	case "¶", "#", "§", "🔗", "":
		return true
	}
	return hasToken(attr(a, "class"), "headerlink") || hasToken(attr(a, "class"), "anchor")
}

// isSelfLink reports whether a links to the heading it sits in or directly
// follows: a permalink whatever its text (Starlight's, beside the heading,
// reads "Section titled …" to screen readers). A link holding all of its
// heading's text is the heading's title and no permalink (mdBook's).
func isSelfLink(a *html.Node) bool {
	frag, ok := strings.CutPrefix(attr(a, "href"), "#")
	if !ok || frag == "" {
		return false
	}
	p := a.Parent
	for range 3 {
		if p == nil || p.Type != html.ElementNode {
			break
		}
		if headingLevel(tagOf(p)) > 0 {
			return attr(p, "id") == frag && textLen(p) > textLen(a)
		}
		p = p.Parent
	}
	return followsHeading(a, frag)
}

// followsHeading reports whether the element before a, text between them
// being space only, is a heading whose id is frag.
func followsHeading(a *html.Node, frag string) bool {
	prev := a.PrevSibling
	for prev != nil && prev.Type != html.ElementNode {
		if prev.Type == html.TextNode && strings.TrimSpace(prev.Data) != "" {
			return false
		}
		prev = prev.PrevSibling
	}
	return prev != nil && headingLevel(tagOf(prev)) > 0 && attr(prev, "id") == frag
}

// dropSelfLinksBesideHeadings removes the links below n that follow the
// heading they link to (see isSelfLink). Readability counts their text as
// link text: the block holding the heading and such a link looks like a
// list of links and goes, heading and all.
func dropSelfLinksBesideHeadings(n *html.Node) {
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		if c.Type == html.ElementNode && headingLevel(tagOf(c)) == 0 {
			if frag, ok := strings.CutPrefix(attr(c, "href"), "#"); ok && tagOf(c) == atom.A && frag != "" && followsHeading(c, frag) {
				n.RemoveChild(c)
			} else {
				dropSelfLinksBesideHeadings(c)
			}
		}
		c = next
	}
}

func isHidden(n *html.Node) bool {
	if _, ok := attrOK(n, "hidden"); ok {
		return true
	}
	if attr(n, "aria-hidden") == "true" && tagOf(n) != atom.Span {
		return true
	}
	style := strings.ReplaceAll(strings.ToLower(attr(n, "style")), " ", "")
	return strings.Contains(style, "display:none") || strings.Contains(style, "visibility:hidden") || printOnly(n)
}

// printOnlyClasses name blocks shown only when the page is printed.
var printOnlyClasses = map[string]bool{
	"onlyprint": true, "only-print": true, "print-only": true, "printonly": true,
	"visible-print-block": true, "visible-print-inline": true, "visible-print-inline-block": true,
}

// printOnly reports whether n's classes show it only in print: a
// print-only class (sphinx-book-theme repeats the title and the page's
// table of contents in div.onlyprint), or Bootstrap's d-none with a
// d-print-* display and no display for a screen size.
func printOnly(n *html.Node) bool {
	class := strings.ToLower(attr(n, "class"))
	if !strings.Contains(class, "print") {
		return false
	}
	none, shown := false, false
	for _, c := range strings.Fields(class) {
		switch {
		case printOnlyClasses[c]:
			return true
		case c == "d-none":
			none = true
		case strings.HasPrefix(c, "d-print-"):
			shown = true
		case strings.HasPrefix(c, "d-sm-"), strings.HasPrefix(c, "d-md-"), strings.HasPrefix(c, "d-lg-"),
			strings.HasPrefix(c, "d-xl-"), strings.HasPrefix(c, "d-xxl-"):
			return false
		}
	}
	return none && shown
}

// textLen counts the non-space bytes of visible text under n.
func textLen(n *html.Node) int {
	if n == nil {
		return 0
	}
	total := 0
	var walk func(*html.Node)
	walk = func(c *html.Node) {
		switch c.Type {
		case html.TextNode:
			for _, r := range c.Data {
				if !unicode.IsSpace(r) {
					total += utf8.RuneLen(r)
				}
			}
		case html.ElementNode, html.DocumentNode:
			if c.Type == html.ElementNode && skipped[tagOf(c)] && tagOf(c) != atom.Nav {
				return
			}
			for cc := c.FirstChild; cc != nil; cc = cc.NextSibling {
				walk(cc)
			}
		}
	}
	walk(n)
	return total
}

// contentTextLen counts the non-space bytes of text under n outside
// skipped, hidden and boilerplate elements (0 for nil).
func contentTextLen(n *html.Node) int { return contentTextLenIn(n, nil) }

// contentTextLenIn is contentTextLen measuring boilerplate with m (nil:
// walking anew).
func contentTextLenIn(n *html.Node, m *textMemo) int {
	if n == nil {
		return 0
	}
	total := 0
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		switch {
		case c.Type == html.TextNode:
			for _, r := range c.Data {
				if !unicode.IsSpace(r) {
					total += utf8.RuneLen(r)
				}
			}
		case c.Type == html.ElementNode && !passedOverIn(c, m):
			total += contentTextLenIn(c, m)
		}
	}
	return total
}

// strippedBody returns the body with navigation landmarks and cookie
// banners removed, the last resort when no extractor found main content.
func strippedBody(doc *html.Node) *html.Node {
	body := findFirst(doc, atom.Body)
	if body == nil {
		return doc
	}
	return pruneBoilerplate(body)
}

// mainLandmark returns the document's <main> element or its element with
// role="main", nil when there is none.
func mainLandmark(doc *html.Node) *html.Node {
	if m := findFirst(doc, atom.Main); m != nil {
		return m
	}
	var found *html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		for c := n.FirstChild; c != nil && found == nil; c = c.NextSibling {
			if c.Type == html.ElementNode && attr(c, "role") == "main" {
				found = c
				return
			}
			walk(c)
		}
	}
	walk(doc)
	return found
}

// pruneBoilerplate removes navigation, banners, sidebars and cookie notices
// below n (in place) and returns n.
func pruneBoilerplate(n *html.Node) *html.Node { return prune(n, isBoilerplate) }

// prune removes the elements below n (in place) for which drop is true and
// returns n. A code listing is never pruned inside: its blocks are code,
// named after what they show (Sphinx's viewcode wraps each function in a
// div whose id is the function's name, get_signed_cookie among them).
func prune(n *html.Node, drop func(*html.Node) bool) *html.Node {
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		switch {
		case c.Type != html.ElementNode:
		case drop(c):
			n.RemoveChild(c)
		case tagOf(c) != atom.Pre:
			prune(c, drop)
		}
		c = next
	}
	return n
}

// passedOver reports whether element n holds no text worth reading: a
// skipped tag (script, style, …), hidden, or boilerplate.
func passedOver(n *html.Node) bool { return passedOverIn(n, nil) }

// passedOverIn is passedOver measuring text with m (nil: walking anew).
func passedOverIn(n *html.Node, m *textMemo) bool {
	return skipped[tagOf(n)] || isHidden(n) || boilerplateIn(n, m)
}

func isBoilerplate(n *html.Node) bool { return boilerplateIn(n, nil) }

// boilerplateIn is isBoilerplate measuring text with m (nil: walking anew).
func boilerplateIn(n *html.Node, m *textMemo) bool {
	switch tagOf(n) {
	case atom.Nav, atom.Footer, atom.Aside:
		return true
	case atom.Header:
		if !inSectioningContent(n) {
			// The page's banner; a header inside an article or section
			// is that part's own title block (gi-docgen and Docusaurus
			// put the page's h1 there).
			return true
		}
	}
	switch attr(n, "role") {
	case "navigation", "banner", "contentinfo", "complementary", "search", "dialog", "alertdialog":
		return true
	}
	if contentTags[tagOf(n)] || namedForHeading(n) {
		// Documentation names entries and sections after what they
		// describe (HttpRequest.COOKIES, "Menus", CSRF_COOKIE_AGE).
		return false
	}
	idc := strings.ToLower(attr(n, "id") + " " + nameClasses(n))
	for _, w := range []string{"cookie", "consent", "gdpr"} {
		if strings.Contains(idc, w) {
			// A banner is short; a long block is a text about cookies.
			return m.textLen(n) < maxBannerText
		}
	}
	for _, w := range []string{"sidebar", "breadcrumb", "navbar"} {
		if strings.Contains(idc, w) {
			return true
		}
	}
	if strings.Contains(idc, "search") && strings.Contains(idc, "result") {
		// The theme's live search panel, empty until a script fills it
		// (HonKit's "No results matching" heading is there before any
		// search); HonKit wraps the page's content in one so named too.
		return m.textLen(n) <= maxNavBarText
	}
	if namedFooter(n, m) {
		// The page's footer (Doxygen's "Generated by" line).
		return true
	}
	if strings.Contains(idc, "menu") || isPager(n, m) {
		// A menu is mostly links; prose is content (a text on menus).
		return m.linkShare(n) >= minNavLinkShare
	}
	if namedNavigation(n) {
		// DocBook's navheader is a table of the chapter's and part's
		// titles around four short links: short, and without prose.
		return m.linkShare(n) >= minNavLinkShare || m.textLen(n) <= maxNavBarText && !m.hasProseBlock(n)
	}
	return false
}

// nameClasses returns n's classes that name it: utility classes holding a
// variant or an arbitrary value ("print:hidden",
// "min-h-[calc(100vh-var(--navbar-height))]", Tailwind's) describe its
// style and may hold any word.
func nameClasses(n *html.Node) string {
	class := attr(n, "class")
	if !strings.ContainsAny(class, ":[(") {
		return class
	}
	var kept []string
	for _, c := range strings.Fields(class) {
		if !strings.ContainsAny(c, ":[(") {
			kept = append(kept, c)
		}
	}
	return strings.Join(kept, " ")
}

// inSectioningContent reports whether n lies inside an article, aside,
// main, nav or section element or an element whose role is one of theirs:
// a header there is not the page's banner (HTML-AAM maps header to the
// banner role only outside them). Ancestors cut off by cloning do not count.
func inSectioningContent(n *html.Node) bool {
	for p := n.Parent; p != nil; p = p.Parent {
		if p.Type != html.ElementNode {
			continue
		}
		switch tagOf(p) {
		case atom.Article, atom.Aside, atom.Main, atom.Nav, atom.Section:
			return true
		}
		switch attr(p, "role") {
		case "article", "complementary", "main", "navigation", "region":
			return true
		}
	}
	return false
}

// maxNavBarText is the most text (non-space bytes) of an element named
// navigation that is not mostly links: a bar of titles and a few links,
// never a sentence or two of its own.
const maxNavBarText = 160

// hasProseBlock reports whether n holds a paragraph, heading, code block,
// definition list or quotation.
func hasProseBlock(n *html.Node) bool {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		switch tagOf(c) {
		case atom.P, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Pre, atom.Dl, atom.Blockquote:
			return true
		}
		if hasProseBlock(c) {
			return true
		}
	}
	return false
}

// namedFooter reports whether n's id is "footer" or one of its classes is,
// or, for an element of a footer's length (see maxBannerText), one of its
// classes has the word "footer" (site-footer, copyright-footer, td-footer,
// footer__links).
func namedFooter(n *html.Node, m *textMemo) bool {
	if strings.EqualFold(attr(n, "id"), "footer") || hasToken(attr(n, "class"), "footer") {
		return true
	}
	class := strings.ToLower(nameClasses(n))
	if !strings.Contains(class, "footer") {
		return false
	}
	for _, w := range strings.FieldsFunc(class, isNameSeparator) {
		if w == "footer" {
			return m.textLen(n) < maxBannerText
		}
	}
	return false
}

// namedNavigation reports whether a word of n's id or classes (split at
// spaces, hyphens and underscores) starts with "nav" (nav, navigation,
// navpath, nav-panel, navheader, navfooter, global-nav, site_nav).
func namedNavigation(n *html.Node) bool {
	names := strings.ToLower(nameClasses(n) + " " + attr(n, "id"))
	if !strings.Contains(names, "nav") {
		return false
	}
	for _, w := range strings.FieldsFunc(names, isNameSeparator) {
		if strings.HasPrefix(w, "nav") {
			return true
		}
	}
	return false
}

// isNameSeparator reports whether r separates the words of an id or class
// attribute.
func isNameSeparator(r rune) bool {
	return r == ' ' || r == '-' || r == '_' || r == '\t' || r == '\n'
}

// maxPagerText is the most text (non-space bytes) of a bar of links to the
// next, previous and parent pages.
const maxPagerText = 400

// isPager reports whether n is a short bar with a link to the next,
// previous or parent page (rel="next", "prev", "previous" or "up") among
// its children: texinfo's "Next: … Previous: … Up: …" line. Only children
// count: a short page's wrapper holds such links deeper down.
func isPager(n *html.Node, m *textMemo) bool {
	switch tagOf(n) {
	case atom.Div, atom.P, atom.Ul, atom.Ol, atom.Section:
	default:
		return false
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if pagerLink(c) {
			return m.textLen(n) <= maxPagerText
		}
	}
	return false
}

// pagerLink reports whether n is a link to the next, previous or parent page.
func pagerLink(n *html.Node) bool {
	if n.Type != html.ElementNode || tagOf(n) != atom.A {
		return false
	}
	rel := attr(n, "rel")
	if hasToken(rel, "next") || hasToken(rel, "prev") || hasToken(rel, "previous") || hasToken(rel, "up") {
		return true
	}
	// Themes without rel name the links instead (pydata-sphinx-theme's
	// and sphinx-book-theme's a.left-prev#prev-link, a.right-next).
	return namedPager(attr(n, "class")) || namedPager(attr(n, "id"))
}

// namedPager reports whether names, a class or id attribute, holds the word
// prev, previous or next (words split at spaces, hyphens and underscores).
func namedPager(names string) bool {
	names = strings.ToLower(names)
	if !strings.Contains(names, "prev") && !strings.Contains(names, "next") {
		return false
	}
	for _, w := range strings.FieldsFunc(names, isNameSeparator) {
		if w == "prev" || w == "previous" || w == "next" {
			return true
		}
	}
	return false
}

// maxBannerText is the most text (non-space bytes) a cookie or consent
// banner holds.
const maxBannerText = 1500

// minNavLinkShare is the least part of its text in links for an element
// named menu to count as navigation.
const minNavLinkShare = 0.4

// linkShare returns the part of n's visible text inside links (1 for an
// element without text).
func linkShare(n *html.Node) float64 {
	all := textLen(n)
	if all == 0 {
		return 1
	}
	linked := 0
	var walk func(*html.Node)
	walk = func(c *html.Node) {
		if c.Type == html.ElementNode && tagOf(c) == atom.A {
			linked += textLen(c)
			return
		}
		for cc := c.FirstChild; cc != nil; cc = cc.NextSibling {
			walk(cc)
		}
	}
	walk(n)
	return float64(linked) / float64(all)
}

// contentTags are never boilerplate because of their id or class: inline
// text, headings, definition lists, list items, table cells and code.
var contentTags = map[atom.Atom]bool{
	atom.Span: true, atom.A: true, atom.Code: true, atom.Em: true, atom.Strong: true,
	atom.B: true, atom.I: true, atom.Kbd: true, atom.Dl: true, atom.Dt: true, atom.Dd: true,
	atom.Pre: true, atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true,
	atom.H5: true, atom.H6: true, atom.Li: true, atom.Tr: true, atom.Td: true, atom.Th: true,
}

// namedForHeading reports whether n's id is derived from the heading it
// starts with, as documentation generators name sections ("Cookie
// management" → id="cookie-management", Django's id="s-cookie-management").
func namedForHeading(n *html.Node) bool {
	id := strings.TrimPrefix(strings.ToLower(attr(n, "id")), "s-")
	if id == "" {
		return false
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		if headingLevel(tagOf(c)) > 0 {
			return headingSlug(c) == id
		}
		if tagOf(c) != atom.Span && tagOf(c) != atom.A {
			return false
		}
	}
	return false
}

// headingSlug returns the slug of heading h without its section number
// ("2.1.3. Comments" → "comments"; "14 comments" keeps its count).
func headingSlug(h *html.Node) string {
	text := headingText(h)
	if num, rest, ok := strings.Cut(text, " "); ok && strings.Contains(num, ".") && strings.Trim(num, "0123456789.") == "" {
		text = rest
	}
	return slug(text)
}

// slug lower-cases s and joins its runs of letters and digits with hyphens.
func slug(s string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}), "-")
}

func findFirst(n *html.Node, a atom.Atom) *html.Node {
	return findNode(n, func(x *html.Node) bool { return x.Type == html.ElementNode && tagOf(x) == a })
}

// findNode returns the first node under n, n included, in document order that
// match reports, or nil.
func findNode(n *html.Node, match func(*html.Node) bool) *html.Node {
	if match(n) {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if f := findNode(c, match); f != nil {
			return f
		}
	}
	return nil
}

func attr(n *html.Node, key string) string {
	v, _ := attrOK(n, key)
	return v
}

func attrOK(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Namespace == "" && strings.EqualFold(a.Key, key) {
			return a.Val, true
		}
	}
	return "", false
}

func textOf(n *html.Node) string {
	var sb strings.Builder
	var walk func(*html.Node)
	walk = func(c *html.Node) {
		if c.Type == html.TextNode {
			sb.WriteString(c.Data)
			return
		}
		if c != n && c.Type == html.ElementNode && skipped[tagOf(c)] {
			return
		}
		for cc := c.FirstChild; cc != nil; cc = cc.NextSibling {
			walk(cc)
		}
	}
	walk(n)
	return sb.String()
}

func hasToken(list, token string) bool {
	for _, f := range strings.FieldsFunc(strings.ToLower(list), func(r rune) bool { return r == ' ' || r == ',' || r == '\t' }) {
		if f == token {
			return true
		}
	}
	return false
}

// tagOf returns the element's atom; nodes built by extraction libraries do
// not always set DataAtom.
func tagOf(n *html.Node) atom.Atom {
	if n.DataAtom != 0 || n.Type != html.ElementNode {
		return n.DataAtom
	}
	return atom.Lookup([]byte(strings.ToLower(n.Data)))
}

// trimPilcrow removes a permalink sign left at the end of a heading or term
// when an extractor dropped its link.
func trimPilcrow(s string) string {
	return strings.TrimRightFunc(strings.TrimSuffix(strings.TrimRightFunc(s, unicode.IsSpace), "¶"), unicode.IsSpace)
}
