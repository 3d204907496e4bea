package htmltext

import (
	"bytes"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"
)

// Client-rendered pages. Some sites send an empty shell and build every
// page in the browser: Docsify (a <div id="app"> and a script that fetches
// the Markdown), single-page applications built with React, Vue, Svelte or
// Angular without server rendering (<div id="root">, <div id="__next">,
// <app-root>), often with a <noscript> asking the reader to enable
// JavaScript. The crawler does not run scripts, so such a page has no text
// to index. DetectShell tells these pages apart from pages that are merely
// short, so that the crawler can say why it found nothing.
//
// A page is a shell when all of these hold:
//
//   - it has at least one executable script (a <script> without a type, of
//     type module, or of a JavaScript type; JSON data blocks do not count);
//   - its body holds at most ShellMaxText bytes of text (not counting
//     spaces) outside scripts, styles, <noscript>, <template>, hidden
//     elements and boilerplate (navigation, the page's banner and footer,
//     sidebars): what a shell shows before its script runs ("Loading…", the
//     site's name);
//   - no paragraph, list item, definition, preformatted block, quotation,
//     table cell or caption holds text, outside navigation, banners and
//     footers marked by their tag or role (words there are content the
//     server rendered: the page is short, not empty; blocks merely named
//     like navigation are searched, as themes name content wrappers so);
//   - and one of:
//     (a) a mount point: a div, main, section or article with an id, or a
//     custom element (a tag with a hyphen), outside boilerplate, holding no
//     image, video, audio, iframe, object or embed, no heading with text and
//     at most ShellMaxText bytes of text (a loading placeholder), while the
//     page holds at most shellBesideMount bytes of text beside it (a title
//     at most: a short real page whose few words lie beside an empty widget
//     is not a shell);
//     (b) a <noscript> whose text mentions JavaScript;
//     (c) a body with no text at all (navigation included) and no media,
//     and an external or module script (a page that a script builds from
//     nothing; an inline script alone is more often a redirect).
//
// The rule looks at structure, not at generator names; known mount ids
// (app, root, __next, __nuxt, ___gatsby, svelte) only decide which of
// several mount points the evidence names.

// ShellMaxText is the most text, in bytes without spaces, that a page
// shell shows outside its scripts: a loading placeholder or the site's
// name. A page whose extracted text is longer is not checked for a shell.
const ShellMaxText = 64

// shellBesideMount is the most text a shell holds beside its mount point.
const shellBesideMount = 32

// Shell describes a page whose content is rendered by scripts in the browser.
type Shell struct {
	// Mount is the start tag of the empty element the scripts render into,
	// as `<div id="app">` or `<app-root>`; "" when the page has none.
	Mount string
	// Placeholder is the mount's text while the page loads ("Loading ..."),
	// "" when it is empty.
	Placeholder string
	// Noscript is the page's <noscript> message about JavaScript, whitespace
	// collapsed and cut to 120 bytes; "" when there is none.
	Noscript string
	// Scripts counts the page's executable script elements.
	Scripts int
}

// Evidence says in a few words what shows that the page is a shell, for
// reports: `an empty <div id="app">`, `<div id="app"> holding only
// "Loading ..."`, `a <noscript> saying "You need to enable JavaScript"`, or
// `a body with nothing but scripts`.
func (s *Shell) Evidence() string {
	switch {
	case s.Mount != "" && s.Placeholder != "":
		return fmt.Sprintf("%s holding only %q", s.Mount, s.Placeholder)
	case s.Mount != "":
		return "an empty " + s.Mount
	case s.Noscript != "":
		return fmt.Sprintf("a <noscript> saying %q", s.Noscript)
	}
	return "a body with nothing but scripts"
}

// knownMounts are the ids that frameworks and generators mount into; they
// rank mount points, they are not required.
var knownMounts = map[string]bool{"app": true, "root": true, "__next": true, "__nuxt": true, "___gatsby": true, "svelte": true}

// mediaTags hold content that is not text: a page made of them is not empty.
var mediaTags = map[atom.Atom]bool{
	atom.Img: true, atom.Picture: true, atom.Video: true, atom.Audio: true,
	atom.Iframe: true, atom.Object: true, atom.Embed: true,
}

// DetectShell reports whether an HTML document, fetched with the given
// Content-Type, is a page shell whose content scripts render in the
// browser (see the rule above), and what shows it; nil when it is not.
func DetectShell(body []byte, contentType string) *Shell {
	r, err := charset.NewReader(bytes.NewReader(body), contentType)
	if err != nil {
		r = bytes.NewReader(body)
	}
	// Without scripting, <noscript> content is parsed as elements, as a
	// reader without JavaScript sees it.
	doc, err := html.ParseWithOptions(r, html.ParseOptionEnableScripting(false))
	if err != nil {
		return nil
	}
	return shellOf(doc)
}

func shellOf(doc *html.Node) *Shell {
	sh := &Shell{}
	external := false
	walkElements(doc, func(n *html.Node) bool {
		switch tagOf(n) {
		case atom.Script:
			if executable(n) {
				sh.Scripts++
				_, src := attrOK(n, "src")
				external = external || src || strings.EqualFold(strings.TrimSpace(attr(n, "type")), "module")
			}
		case atom.Noscript:
			if sh.Noscript == "" {
				if msg := collapse(textOf(n)); strings.Contains(strings.ToLower(msg), "javascript") {
					sh.Noscript = clipText(msg, 120)
				}
			}
		}
		return true
	})
	body := findFirst(doc, atom.Body)
	if sh.Scripts == 0 || body == nil {
		return nil
	}
	// The tree does not change here: one memo serves every rule.
	memo := newTextMemo()
	text := contentTextLenIn(body, memo)
	if text > ShellMaxText || hasProse(body, memo) {
		return nil
	}
	if m := mountPoint(body, text, memo); m != nil {
		sh.Mount = startTag(m)
		sh.Placeholder = clipText(collapse(contentText(m, memo)), 60)
		return sh
	}
	if sh.Noscript != "" {
		return sh
	}
	if textLen(body) == 0 && external && findNode(body, func(n *html.Node) bool { return mediaTags[tagOf(n)] }) == nil {
		return sh
	}
	return nil
}

// mountPoint returns the element of body that scripts render the page
// into, nil when there is none; total is the content text of body. One
// pass measures every element's text and media bottom-up.
func mountPoint(body *html.Node, total int, memo *textMemo) *html.Node {
	m := &mountScan{total: total, memo: memo}
	m.measure(body)
	return m.best
}

// mountScan finds the mount point: of the elements that qualify, the one
// with a known mount id, else one without content elements inside (the
// element the script fills), else the first in document order.
type mountScan struct {
	total    int
	memo     *textMemo
	order    int // pre-order index of the element being measured
	best     *html.Node
	bestRank int
	bestAt   int
}

// measure returns the content text bytes under n (not counting spaces),
// whether n holds media and whether it holds a heading with text (rendered
// content, not a placeholder), and considers n as a mount point.
func (m *mountScan) measure(n *html.Node) (text int, media, heading bool) {
	at := m.order
	m.order++
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		switch {
		case c.Type == html.TextNode:
			for _, r := range c.Data {
				if !unicode.IsSpace(r) {
					text += utf8.RuneLen(r)
				}
			}
		case c.Type != html.ElementNode:
		case mediaTags[tagOf(c)]:
			media = true
		case passedOverIn(c, m.memo):
		default:
			t, md, hd := m.measure(c)
			text += t
			media = media || md
			heading = heading || hd || t > 0 && headingLevel(tagOf(c)) > 0
		}
	}
	if n.Type == html.ElementNode && tagOf(n) != atom.Body && mountLike(n) && !media && !heading &&
		text <= ShellMaxText && m.total-text <= shellBesideMount {
		rank := 1
		switch {
		case knownMounts[attr(n, "id")]:
			rank = 3
		case !hasContentChild(n, m.memo):
			rank = 2
		}
		if m.best == nil || rank > m.bestRank || rank == m.bestRank && at < m.bestAt {
			m.best, m.bestRank, m.bestAt = n, rank, at
		}
	}
	return text, media, heading
}

// proseTags hold text the server rendered as content: a page with words
// in one of them is short, not empty.
var proseTags = map[atom.Atom]bool{
	atom.P: true, atom.Li: true, atom.Dd: true, atom.Pre: true, atom.Blockquote: true,
	atom.Td: true, atom.Th: true, atom.Figcaption: true,
}

// hasProse reports whether a prose element under n holds text, outside
// scripts and the like, hidden elements, and navigation, banners and footers
// marked as such by their tag or role. Blocks only named like navigation
// are searched: a theme may name its content wrapper so
// (sphinx_rtd_theme's section.wy-nav-content-wrap).
func hasProse(n *html.Node, memo *textMemo) bool {
	found := false
	// Prose blocks nest (lists in list items): remembering which elements
	// hold text keeps this one pass over the document, not one per block.
	holds := map[*html.Node]bool{}
	walkElements(n, func(c *html.Node) bool {
		if found || skipped[tagOf(c)] || isHidden(c) || markedBoilerplate(c) {
			return false
		}
		if proseTags[tagOf(c)] && holdsContentText(c, holds, memo) {
			found = true
			return false
		}
		return true
	})
	return found
}

// holdsContentText reports whether contentTextLen(n) > 0, recording the
// answer for n and the elements it looked into in holds; memo measures
// boilerplate (nil: walking anew).
func holdsContentText(n *html.Node, holds map[*html.Node]bool, memo *textMemo) bool {
	if v, ok := holds[n]; ok {
		return v
	}
	v := false
	for c := n.FirstChild; c != nil && !v; c = c.NextSibling {
		switch {
		case c.Type == html.TextNode:
			v = strings.TrimFunc(c.Data, unicode.IsSpace) != ""
		case c.Type == html.ElementNode && !passedOverIn(c, memo):
			v = holdsContentText(c, holds, memo)
		}
	}
	holds[n] = v
	return v
}

// markedBoilerplate reports whether n is navigation, a banner or a footer by
// its tag or role.
func markedBoilerplate(n *html.Node) bool {
	switch tagOf(n) {
	case atom.Nav, atom.Footer, atom.Aside:
		return true
	case atom.Header:
		return !inSectioningContent(n)
	}
	switch attr(n, "role") {
	case "navigation", "banner", "contentinfo", "complementary", "search":
		return true
	}
	return false
}

// mountLike reports whether n can be a mount point: a div, main, section
// or article with an id, or a custom element.
func mountLike(n *html.Node) bool {
	if strings.Contains(n.Data, "-") {
		return true // a custom element: <app-root>, <my-app>
	}
	switch tagOf(n) {
	case atom.Div, atom.Main, atom.Section, atom.Article:
		return strings.TrimSpace(attr(n, "id")) != ""
	}
	return false
}

// hasContentChild reports whether n has a child element that is not passed
// over (script, hidden, boilerplate).
func hasContentChild(n *html.Node, memo *textMemo) bool {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && !passedOverIn(c, memo) {
			return true
		}
	}
	return false
}

// executable reports whether a script element holds or loads JavaScript.
func executable(n *html.Node) bool {
	t := strings.ToLower(strings.TrimSpace(attr(n, "type")))
	if i := strings.IndexByte(t, ';'); i >= 0 {
		t = strings.TrimSpace(t[:i])
	}
	return t == "" || t == "module" || strings.Contains(t, "javascript") || strings.Contains(t, "ecmascript")
}

// startTag renders n's start tag with its id (or, without one, its tag
// alone): `<div id="app">`.
func startTag(n *html.Node) string {
	if id := strings.TrimSpace(attr(n, "id")); id != "" {
		return fmt.Sprintf("<%s id=%q>", n.Data, clipText(id, 60))
	}
	return "<" + n.Data + ">"
}

// contentText is the text under n outside passed-over elements.
func contentText(n *html.Node, memo *textMemo) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(c *html.Node) {
		for cc := c.FirstChild; cc != nil; cc = cc.NextSibling {
			switch {
			case cc.Type == html.TextNode:
				b.WriteString(cc.Data)
			case cc.Type == html.ElementNode && !passedOverIn(cc, memo):
				walk(cc)
				b.WriteByte(' ')
			}
		}
	}
	walk(n)
	return b.String()
}

// walkElements calls visit for every element under n in document order; it
// does not descend into an element for which visit returns false.
func walkElements(n *html.Node, visit func(*html.Node) bool) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		if visit(c) {
			walkElements(c, visit)
		}
	}
}

// clipText cuts s to at most n bytes on a rune boundary, marking the cut.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return strings.TrimSpace(s[:n]) + "…"
}
