package htmltext

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// titleHeading returns the page's own top heading, which readability drops
// when it repeats the title: the first h1 of the main landmark (of the body
// when there is none) that is not the site's name, else the first h2 whose
// text the title holds (DocBook titles a section page with an h2). Headings
// in navigation, banners and sidebars do not count. It returns nil when
// there is none.
func titleHeading(doc *html.Node, title string) *html.Node {
	root := mainLandmark(doc)
	if root == nil {
		if root = findFirst(doc, atom.Body); root == nil {
			return nil
		}
	}
	title = strings.ToLower(collapse(title))
	var h1, h2 *html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		for c := n.FirstChild; c != nil && h1 == nil; c = c.NextSibling {
			if c.Type != html.ElementNode || passedOver(c) {
				continue
			}
			switch tagOf(c) {
			case atom.H1:
				if !isSiteTitle(c) {
					h1 = c
				}
			case atom.H2:
				text := strings.ToLower(headingText(c))
				if h2 == nil && text != "" && strings.Contains(title, text) {
					h2 = c
				}
			default:
				walk(c)
			}
		}
	}
	walk(root)
	if h1 != nil {
		return h1
	}
	return h2
}

// hasHeadingText reports whether n holds a heading whose text is text.
func hasHeadingText(n *html.Node, text string) bool {
	if n.Type == html.ElementNode && headingLevel(tagOf(n)) > 0 && headingText(n) == text {
		return true
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if hasHeadingText(c, text) {
			return true
		}
	}
	return false
}

// headingText returns the text of heading h without permalink markers
// (Sphinx's ¶, DocBook's and many themes' #), whitespace collapsed.
func headingText(h *html.Node) string {
	var sb strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			switch {
			case c.Type == html.TextNode:
				sb.WriteString(c.Data)
			case c.Type != html.ElementNode || skipped[tagOf(c)]:
			case tagOf(c) == atom.A && isPermalink(c):
			default:
				walk(c)
			}
		}
	}
	walk(h)
	return trimPilcrow(collapse(sb.String()))
}
