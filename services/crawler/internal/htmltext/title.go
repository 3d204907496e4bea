package htmltext

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// titleHeading returns the page's own top heading, which readability drops
// when it repeats the title: the first h1 of the main landmark (of the body
// when there is none) that is not the site's name, else the first h2 whose
// text the title holds (DocBook titles a section page with an h2), else the
// first h3–h6 the title holds, section number aside (texinfo titles a
// section page "4.2 Name" with an h3, a subsection with an h4). Headings in
// navigation, banners and sidebars do not count. It returns nil when there
// is none.
func titleHeading(doc *html.Node, title string) *html.Node {
	root := mainLandmark(doc)
	if root == nil {
		if root = findFirst(doc, atom.Body); root == nil {
			return nil
		}
	}
	title = strings.ToLower(collapse(title))
	var h1, h2, lower *html.Node
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
				if h2 == nil && titleHolds(title, headingText(c)) {
					h2 = c
				}
			case atom.H3, atom.H4, atom.H5, atom.H6:
				if lower == nil && titleHolds(title, headingText(c)) {
					lower = c
				}
			default:
				walk(c)
			}
		}
	}
	walk(root)
	switch {
	case h1 != nil:
		return h1
	case h2 != nil:
		return h2
	}
	return lower
}

// titleHolds reports whether title (lower case) holds heading text, holds
// it without its leading section number ("4.2 Tightening bolts", "15
// Tools"), or holds at least minTitleWordShare of its words (readability
// drops such a heading as a repeat of the title: "Appendix F: Translations
// of the Book" under the title "F - Translations of the Book - ...").
func titleHolds(title, heading string) bool {
	heading = strings.ToLower(heading)
	if heading == "" {
		return false
	}
	if strings.Contains(title, heading) {
		return true
	}
	if num, rest, ok := strings.Cut(heading, " "); ok && num != "" && strings.Trim(num, "0123456789.") == "" &&
		utf8.RuneCountInString(rest) >= 3 && strings.Contains(title, rest) {
		return true
	}
	words := titleWords(heading)
	if len(words) < 3 {
		return false
	}
	inTitle := map[string]bool{}
	for _, w := range titleWords(title) {
		inTitle[w] = true
	}
	held := 0
	for _, w := range words {
		if inTitle[w] {
			held++
		}
	}
	return float64(held) >= minTitleWordShare*float64(len(words))
}

// minTitleWordShare is the least part of a heading's words the title must
// hold for the heading to repeat it.
const minTitleWordShare = 0.75

// titleWords splits s into its runs of letters and digits.
func titleWords(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// hasHeadingText reports whether n holds a heading whose text is text.
func hasHeadingText(n *html.Node, text string) bool {
	return findNode(n, func(x *html.Node) bool {
		return x.Type == html.ElementNode && headingLevel(tagOf(x)) > 0 && headingText(x) == text
	}) != nil
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
