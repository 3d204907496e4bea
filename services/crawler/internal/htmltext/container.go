package htmltext

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// containerShare is the least part of the body's prose (text outside links)
// the content container must hold. Readability scores paragraphs and credits
// only their nearest ancestors, so on reference pages whose sections nest
// several levels deep (Sphinx's div.section inside div.section) it picks one
// well-scored subsection and drops the rest. The element that holds nearly
// all of the page's prose is then the better choice.
const containerShare = 0.85

// containerRatio is the part of the container's text under which
// readability's result counts as a fragment of it.
const containerRatio = 0.9

// textStats holds the text measures of one subtree, boilerplate excluded.
type textStats struct {
	prose int // non-space bytes outside links
	all   int // non-space bytes
	head  int // non-space bytes of headings outside links
}

// contentContainer finds where the page's content lives below root. The
// core is the deepest element holding at least containerShare of root's
// prose. The returned container is the core or, when the core has siblings
// that are content too (a title and introduction above the sections), the
// element holding them all, unless that is root and not keepRoot; prune a
// clone of it with pruneContainer before use. need is the text length
// readability's result must reach not to count as a fragment:
// containerRatio of the core's, or, when what the container holds beside the
// core is a text of its own (at least minBesideProse bytes of prose: sections
// before or after the core, not a title, a byline or a sidebar box), the
// core's and half of that text, and at least containerRatio of the
// container's. It returns nil when root has no such element (root itself
// counts only when keepRoot) or the core holds too little prose.
func contentContainer(root *html.Node, keepRoot bool) (container *html.Node, need int) {
	if root == nil {
		return nil, 0
	}
	stats := map[*html.Node]textStats{}
	total := measureText(root, false, stats)
	if total.prose == 0 {
		return nil, 0
	}
	minProse := int(containerShare * float64(total.prose))
	core, outer := root, (*html.Node)(nil)
	for {
		next, contentSiblings := dominantChild(core, minProse, stats)
		if next == nil {
			break
		}
		if contentSiblings && outer == nil {
			outer = core
		}
		core = next
	}
	if outer == nil || (outer == root && !keepRoot) {
		// The body is no container: beside a title block it holds the
		// site's header and footer (AsciiDoc and Asciidoctor pages keep
		// the title in div#header next to div#content). The core alone is
		// the content; the page's h1 comes back as its top heading.
		outer = core
	}
	if (outer == root && !keepRoot) || !holdsEnough(stats[core], total) {
		return nil, 0
	}
	if stats[outer].prose-stats[core].prose >= minBesideProse {
		// Readability must keep the core and most of the text beside it.
		beside := stats[outer].all - stats[core].all
		return outer, max(stats[core].all+beside/2, int(containerRatio*float64(stats[outer].all)))
	}
	return outer, int(containerRatio * float64(stats[core].all))
}

// minShortCoreProse is the least prose (non-space bytes outside links) of
// a content core. A core under minMainText is a short page's text (a
// gi-docgen property page: a declaration, a sentence and two small tables
// of links, which readability drops); it must then also hold
// containerShare of all the text, links included: on a book's title page
// the prose is a legal notice beside a long table of contents.
const minShortCoreProse = 120

// holdsEnough reports whether core, with measures c, holds enough of the
// text of its root, with measures total, to be the page's content.
func holdsEnough(c, total textStats) bool {
	if c.prose >= minMainText {
		return true
	}
	return c.prose >= minShortCoreProse && float64(c.all) >= containerShare*float64(total.all)
}

// minBesideProse is the least prose (non-space bytes outside links) beside
// the core for the container's whole text to be what readability must keep.
const minBesideProse = 1000

// dominantChild returns the child of n holding at least need bytes of prose
// (nil when there is none) and whether its siblings are content too: they,
// or one of them, hold a heading outside links and are not mostly link text
// (a title and introduction, not a site header or a related-links list; a
// group of members beside an index of links to them, TypeDoc's).
func dominantChild(n *html.Node, need int, stats map[*html.Node]textStats) (*html.Node, bool) {
	var found *html.Node
	var rest textStats
	one := false
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		cs := stats[c]
		if found == nil && cs.prose >= need {
			found = c
			continue
		}
		rest.prose += cs.prose
		rest.all += cs.all
		rest.head += cs.head
		one = one || cs.head > 0 && 3*cs.prose > cs.all
	}
	return found, one || rest.head > 0 && 3*rest.prose > rest.all
}

// measureText fills stats for every element below n (inclusive) and returns
// n's measures. Skipped, hidden and boilerplate elements count nothing.
func measureText(n *html.Node, inLink bool, stats map[*html.Node]textStats) textStats {
	var s textStats
	switch n.Type {
	case html.TextNode:
		for _, r := range n.Data {
			if !unicode.IsSpace(r) {
				s.all += utf8.RuneLen(r)
			}
		}
		if !inLink {
			s.prose = s.all
		}
		return s
	case html.ElementNode:
		if passedOver(n) || isCommentThread(n) {
			return s
		}
		inLink = inLink || tagOf(n) == atom.A
	case html.DocumentNode:
	default:
		return s
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		cs := measureText(c, inLink, stats)
		s.prose += cs.prose
		s.all += cs.all
		s.head += cs.head
	}
	if n.Type == html.ElementNode && headingLevel(tagOf(n)) > 0 {
		s.head = s.prose
	}
	if n.Type == html.ElementNode {
		stats[n] = s
	}
	return s
}

// pruneContainer removes boilerplate and reader comment threads below n (in
// place) and returns n.
func pruneContainer(n *html.Node) *html.Node {
	return prune(n, func(c *html.Node) bool { return isBoilerplate(c) || isCommentThread(c) })
}

// commentClasses are class names of reader comment threads (WordPress,
// Disqus and common themes). Only whole class tokens count, and never ids:
// documentation derives ids from headings, so id="comments" is often the
// section about comments in a language.
var commentClasses = map[string]bool{
	"comments": true, "comment-list": true, "commentlist": true, "comments-area": true,
	"comment-section": true, "comments-section": true, "comment-respond": true,
	"comment-thread": true, "comments-list": true, "disqus_thread": true,
}

// isCommentThread reports whether n is a block of reader comments.
func isCommentThread(n *html.Node) bool {
	switch tagOf(n) {
	case atom.Div, atom.Section, atom.Ol, atom.Ul, atom.Aside:
	default:
		return false
	}
	if attr(n, "id") == "disqus_thread" {
		return true
	}
	for _, c := range strings.Fields(strings.ToLower(attr(n, "class"))) {
		if commentClasses[c] {
			return true
		}
	}
	return false
}

// minLeadText is the least prose (non-space bytes outside links) of the
// paragraph that opens a container's text.
const minLeadText = 24

// missesLead reports whether best, readability's result, lacks the first
// paragraph of container c: on a rustdoc trait page readability keeps the
// long list of implementors, which outweighs the description in bytes, and
// drops the description.
func missesLead(best, c *html.Node) bool {
	lead := leadParagraph(c)
	if lead == nil {
		return false
	}
	words := strings.Fields(textOf(lead))
	return !strings.Contains(collapse(textOf(best)), strings.Join(words[:min(len(words), 8)], " "))
}

// leadParagraph returns the first <p> below n holding minLeadText of prose,
// boilerplate and comment threads passed over.
func leadParagraph(n *html.Node) *html.Node {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode || passedOver(c) || isCommentThread(c) {
			continue
		}
		if tagOf(c) == atom.P {
			if measureText(c, false, map[*html.Node]textStats{}).prose >= minLeadText {
				return c
			}
			continue
		}
		if p := leadParagraph(c); p != nil {
			return p
		}
	}
	return nil
}
