package htmltext

import (
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// textMemo remembers the text measures the boilerplate rules take of
// elements (textLen, linkShare, hasProseBlock), so that a pass asking them
// of nested elements (blocks named navigation inside blocks so named) walks
// each subtree once, not once per enclosing element. A memo is valid while
// the tree below the elements it measured does not change: use one per
// pass, and in a pass that removes elements (prune) only when it measures
// an element before anything below it is removed. A nil memo measures
// anew each time.
type textMemo struct {
	text   map[*html.Node]int
	linked map[*html.Node]int
	prose  map[*html.Node]bool
}

func newTextMemo() *textMemo {
	return &textMemo{text: map[*html.Node]int{}, linked: map[*html.Node]int{}, prose: map[*html.Node]bool{}}
}

// textLen is the package's textLen, remembered.
func (m *textMemo) textLen(n *html.Node) int {
	if m == nil {
		return textLen(n)
	}
	if v, ok := m.text[n]; ok {
		return v
	}
	v := 0
	switch n.Type {
	case html.TextNode:
		v = textLen(n)
	case html.ElementNode, html.DocumentNode:
		if n.Type == html.ElementNode && skipped[tagOf(n)] && tagOf(n) != atom.Nav {
			break
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			v += m.textLen(c)
		}
	}
	m.text[n] = v
	return v
}

// linkedLen is the text of n inside links, as linkShare counts it.
func (m *textMemo) linkedLen(n *html.Node) int {
	if v, ok := m.linked[n]; ok {
		return v
	}
	v := 0
	if n.Type == html.ElementNode && tagOf(n) == atom.A {
		v = m.textLen(n)
	} else {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			v += m.linkedLen(c)
		}
	}
	m.linked[n] = v
	return v
}

// linkShare is the package's linkShare, remembered.
func (m *textMemo) linkShare(n *html.Node) float64 {
	if m == nil {
		return linkShare(n)
	}
	all := m.textLen(n)
	if all == 0 {
		return 1
	}
	return float64(m.linkedLen(n)) / float64(all)
}

// hasProseBlock is the package's hasProseBlock, remembered.
func (m *textMemo) hasProseBlock(n *html.Node) bool {
	if m == nil {
		return hasProseBlock(n)
	}
	if v, ok := m.prose[n]; ok {
		return v
	}
	v := false
	for c := n.FirstChild; c != nil && !v; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		switch tagOf(c) {
		case atom.P, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Pre, atom.Dl, atom.Blockquote:
			v = true
		default:
			v = m.hasProseBlock(c)
		}
	}
	m.prose[n] = v
	return v
}
