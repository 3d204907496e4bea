package web

import "encoding/json"

// outcome is how the crawl page names a page's outcome (the crawler's page
// event's "outcome") in its list of finished pages, and what it means. The
// crawl page renders the table as its legend, and static/app.js takes the
// labels of the live list from that legend, so the words live here only.
type outcome struct {
	Key   string // the crawler's outcome
	Label string // the words in the list of finished pages
	Means string // the legend's explanation
}

// outcomes are the crawler's page outcomes (engine.Event.Outcome) in words.
var outcomes = []outcome{
	{"stored", "stored", "its text was stored and indexed."},
	{"unchanged", "unchanged", "the same as the version stored before; nothing to do."},
	{"deleted", "removed from the index", "the stored version was deleted: the page is gone (404 or 410), no longer has text to index (noindex, empty, rendered by JavaScript), now serves something other than HTML or text, or now redirects."},
	{"empty", "no text", "the page has no text to index."},
	{"noindex", "not indexed (noindex)", "the page asks search engines not to index it (a robots noindex tag or header)."},
	{"script_rendered", "rendered by JavaScript: needs a browser", "the HTML is an empty shell that a script fills in the browser; the crawler does not run scripts, so there is no text to index."},
	{"skipped", "skipped", "not fetched or not kept; the reason follows (robots.txt, a redirect whose target is crawled instead, not HTML or text, too large, an address not allowed)."},
	{"failed", "failed", "the page could not be fetched, read or stored; the reason follows."},
}

// reasonWords name the crawler's skip and failure reasons for the list of
// finished pages; "http_404" and the like are said as "HTTP 404" by app.js.
var reasonWords = map[string]string{
	"robots":                "robots.txt disallows it",
	"redirect":              "a redirect; its target is queued instead",
	"redirect_out_of_scope": "a redirect outside the crawl",
	"content_type":          "not HTML or text",
	"too_large":             "too large",
	"blocked":               "a blocked address",
	"ssrf":                  "an address the crawler may not fetch",
	"timeout":               "timed out",
	"network":               "network error",
	"extract":               "its text could not be extracted",
	"embed":                 "the embedding model failed",
	"store":                 "storing it failed",
}

// reasonWordsJSON is reasonWords for the crawl page's data-reasons attribute.
func reasonWordsJSON() string {
	b, _ := json.Marshal(reasonWords) // a map of strings always encodes
	return string(b)
}
