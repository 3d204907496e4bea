package htmltext

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

type meta struct {
	title, description, canonical, lang string
	published, modified                 time.Time
	robots                              Robots
	refresh                             string
	firstH1                             *html.Node
	links                               []Link
}

// readMeta reads metadata and links from the whole (unmodified) document.
func readMeta(doc *html.Node, pageURL *url.URL) meta {
	r := &metaReader{base: pageURL, self: withoutFragment(pageURL), seenLink: map[string]int{}}
	if b := findFirst(doc, atom.Base); b != nil {
		if href := strings.TrimSpace(attr(b, "href")); href != "" {
			if bu, err := pageURL.Parse(href); err == nil {
				r.base = bu
			}
		}
	}
	if h := findFirst(doc, atom.Html); h != nil {
		r.m.lang = primaryLang(attr(h, "lang"))
		if r.m.lang == "" {
			r.m.lang = primaryLang(attr(h, "xml:lang"))
		}
	}
	r.walk(doc)
	return r.finish()
}

// metaReader collects a page's metadata in one walk over the tree; finish
// then picks each value from its sources in order of trust.
type metaReader struct {
	m        meta
	base     *url.URL // for relative links: the page URL or its <base href>
	self     string   // the page URL without fragment: links to it are dropped
	seenLink map[string]int

	ogTitle, ogLocale, contentLang, titleText string
	jsonLD, timeTags                          []string
}

func (r *metaReader) walk(n *html.Node) {
	if n.Type == html.ElementNode {
		r.visit(n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		r.walk(c)
	}
}

func (r *metaReader) visit(n *html.Node) {
	switch tagOf(n) {
	case atom.Title:
		if r.titleText == "" && n.Parent != nil && tagOf(n.Parent) != atom.Svg {
			r.titleText = collapse(textOf(n))
		}
	case atom.Meta:
		r.metaTag(n)
	case atom.Link:
		if hasToken(attr(n, "rel"), "canonical") && r.m.canonical == "" {
			if u, err := r.base.Parse(strings.TrimSpace(attr(n, "href"))); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
				r.m.canonical = withoutFragment(u)
			}
		}
	case atom.Script:
		if strings.Contains(strings.ToLower(attr(n, "type")), "ld+json") {
			r.jsonLD = append(r.jsonLD, textOf(n))
		}
	case atom.Time:
		if dt := attr(n, "datetime"); dt != "" {
			r.timeTags = append(r.timeTags, dt)
		}
	case atom.H1:
		if r.m.firstH1 == nil {
			r.m.firstH1 = n
		}
	case atom.A, atom.Area:
		r.addLink(n)
	}
}

// metaTag reads a <meta> element: titles, description, locale, robots and dates.
func (r *metaReader) metaTag(n *html.Node) {
	key := strings.ToLower(attr(n, "property"))
	if key == "" {
		key = strings.ToLower(attr(n, "name"))
	}
	if key == "" {
		key = strings.ToLower(attr(n, "itemprop"))
	}
	content := strings.TrimSpace(attr(n, "content"))
	switch strings.ToLower(attr(n, "http-equiv")) {
	case "content-language":
		r.contentLang = content
	case "refresh":
		if r.m.refresh == "" {
			r.m.refresh = r.refreshTarget(content)
		}
	}
	m := &r.m
	switch key {
	case "og:title", "twitter:title":
		if r.ogTitle == "" {
			r.ogTitle = content
		}
	case "description", "og:description", "twitter:description":
		if m.description == "" {
			m.description = collapse(content)
		}
	case "og:locale":
		r.ogLocale = content
	case "robots":
		applyRobots(&m.robots, content)
	case "article:published_time", "datepublished", "date", "dc.date", "dc.date.issued",
		"dcterms.created", "dcterms.issued", "publish-date", "pubdate", "publication_date",
		"sailthru.date", "parsely-pub-date":
		if m.published.IsZero() {
			m.published = parseDate(content)
		}
	case "article:modified_time", "og:updated_time", "datemodified", "dcterms.modified",
		"last-modified", "dc.date.modified", "revised":
		if m.modified.IsZero() {
			m.modified = parseDate(content)
		}
	}
}

// MaxRefreshDelay is the longest delay of a <meta http-equiv="refresh"> that
// is read as a redirect: a page that sends its reader elsewhere within a few
// seconds ("Redirecting…", "This page has moved") is a stub, not a document.
// A longer delay is a page that reloads itself now and then.
const MaxRefreshDelay = 5

// refreshTarget reads the content of a refresh meta element, "<delay>;
// url=<target>" (the separator may also be a comma, "url=" may be missing, the
// target may be quoted), and returns the absolute http(s) target without its
// fragment when the delay is at most MaxRefreshDelay seconds and the target is
// another page; otherwise "".
func (r *metaReader) refreshTarget(content string) string {
	delay, target, ok := strings.Cut(content, ";")
	if !ok {
		delay, target, ok = strings.Cut(content, ",")
	}
	if !ok {
		return "" // a delay alone reloads the page itself
	}
	d, err := strconv.ParseFloat(strings.TrimSpace(delay), 64)
	if err != nil || d < 0 || d > MaxRefreshDelay {
		return ""
	}
	target = strings.TrimSpace(target)
	if len(target) >= 4 && strings.EqualFold(target[:3], "url") {
		if rest := strings.TrimSpace(target[3:]); strings.HasPrefix(rest, "=") {
			target = strings.TrimSpace(rest[1:])
		}
	}
	target = strings.Trim(target, `"'`)
	if target == "" {
		return ""
	}
	u, err := r.base.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return ""
	}
	if t := withoutFragment(u); t != r.self {
		return t
	}
	return ""
}

// addLink keeps the first occurrence of each link target (with the first
// non-empty anchor text), except links to the page itself.
func (r *metaReader) addLink(n *html.Node) {
	l, ok := makeLink(n, r.base)
	if !ok || l.URL == r.self {
		return
	}
	if i, dup := r.seenLink[l.URL]; dup {
		if r.m.links[i].Text == "" {
			r.m.links[i].Text = l.Text
		}
		return
	}
	r.seenLink[l.URL] = len(r.m.links)
	r.m.links = append(r.m.links, l)
}

// finish picks dates, title and language from their sources in order.
func (r *metaReader) finish() meta {
	m := r.m
	for _, s := range r.jsonLD {
		var v any
		if json.Unmarshal([]byte(s), &v) != nil {
			continue
		}
		if m.published.IsZero() {
			m.published = parseDate(findJSONString(v, "datePublished", "dateCreated", "uploadDate"))
		}
		if m.modified.IsZero() {
			m.modified = parseDate(findJSONString(v, "dateModified"))
		}
	}
	if m.published.IsZero() && len(r.timeTags) > 0 {
		m.published = parseDate(r.timeTags[0])
	}
	m.title = r.titleText
	if m.title == "" {
		m.title = collapse(r.ogTitle)
	}
	if m.title == "" && m.firstH1 != nil {
		m.title = collapse(textOf(m.firstH1))
	}
	if m.lang == "" {
		m.lang = primaryLang(r.contentLang)
	}
	if m.lang == "" {
		m.lang = primaryLang(r.ogLocale)
	}
	return m
}

func makeLink(n *html.Node, base *url.URL) (Link, bool) {
	href := strings.TrimSpace(attr(n, "href"))
	if href == "" || strings.HasPrefix(href, "#") {
		return Link{}, false
	}
	u, err := base.Parse(href)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Link{}, false
	}
	text := collapse(textOf(n))
	if text == "" {
		text = collapse(attr(n, "title"))
	}
	if text == "" {
		text = collapse(attr(n, "aria-label"))
	}
	if text == "" {
		if img := findFirst(n, atom.Img); img != nil {
			text = collapse(attr(img, "alt"))
		}
	}
	if text == "" && tagOf(n) == atom.Area {
		text = collapse(attr(n, "alt"))
	}
	return Link{URL: withoutFragment(u), Text: text, Rel: strings.TrimSpace(attr(n, "rel"))}, true
}

// collectHrefs returns the absolute URLs (without fragment) linked from n.
func collectHrefs(n *html.Node, pageURL *url.URL) map[string]bool {
	out := map[string]bool{}
	var walk func(*html.Node)
	walk = func(c *html.Node) {
		if c.Type == html.ElementNode && tagOf(c) == atom.A {
			if l, ok := makeLink(c, pageURL); ok {
				out[l.URL] = true
			}
		}
		for cc := c.FirstChild; cc != nil; cc = cc.NextSibling {
			walk(cc)
		}
	}
	if n != nil {
		walk(n)
	}
	return out
}

func withoutFragment(u *url.URL) string {
	c := *u
	c.Fragment = ""
	c.RawFragment = ""
	return c.String()
}

// findJSONString returns the first string value under one of keys anywhere
// in v (JSON-LD nests objects in @graph arrays).
func findJSONString(v any, keys ...string) string {
	switch t := v.(type) {
	case map[string]any:
		for _, k := range keys {
			if s, ok := t[k].(string); ok && s != "" {
				return s
			}
		}
		for _, child := range t {
			if s := findJSONString(child, keys...); s != "" {
				return s
			}
		}
	case []any:
		for _, child := range t {
			if s := findJSONString(child, keys...); s != "" {
				return s
			}
		}
	}
	return ""
}

var dateLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05Z0700",
	"2006-01-02T15:04:05",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04",
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05 -0700",
	"2006-01-02 15:04:05",
	"2006-01-02",
	"2006/01/02",
	"20060102",
	time.RFC1123Z,
	time.RFC1123,
	time.RFC850,
	time.ANSIC,
	"January 2, 2006",
	"Jan 2, 2006",
	"2 January 2006",
}

// parseDate parses the date formats found in meta tags and JSON-LD; it
// returns the zero time when s is not a date it knows.
func parseDate(s string) time.Time {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}
	}
	for _, l := range dateLayouts {
		if t, err := time.Parse(l, s); err == nil {
			if t.Year() < 1990 || t.Year() > 2200 {
				return time.Time{}
			}
			return t.UTC()
		}
	}
	return time.Time{}
}

// primaryLang returns the lower-case primary subtag of a language tag
// ("en-US" → "en"), or "" when there is none.
func primaryLang(tag string) string {
	tag = strings.TrimSpace(tag)
	if i := strings.IndexAny(tag, ",;"); i >= 0 {
		tag = tag[:i]
	}
	if i := strings.IndexAny(tag, "-_"); i >= 0 {
		tag = tag[:i]
	}
	tag = strings.ToLower(tag)
	if len(tag) < 2 || len(tag) > 3 {
		return ""
	}
	for _, r := range tag {
		if r < 'a' || r > 'z' {
			return ""
		}
	}
	return tag
}

func applyRobots(r *Robots, directives string) {
	for _, d := range strings.Split(strings.ToLower(directives), ",") {
		d = strings.TrimSpace(d)
		// "googlebot: noindex" is for another crawler; "unavailable_after:
		// <date>" is not a directive we act on.
		if strings.Contains(d, ":") {
			continue
		}
		switch d {
		case "noindex":
			r.NoIndex = true
		case "nofollow":
			r.NoFollow = true
		case "none":
			r.NoIndex, r.NoFollow = true, true
		}
	}
}
