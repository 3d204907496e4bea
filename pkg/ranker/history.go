package ranker

import (
	"net/url"
	"regexp"
	"strings"
)

// DefaultHistoryFactor multiplies the final score of a version-history page (release
// notes, a changelog, a "what's new" page) when the query does not ask about versions
// or changes. Documentation sites keep one such page per release, each naming a
// little of everything the site documents, so for a question about how to do
// something they crowd out the page that answers it: on the Python manual crawled
// with default settings they took 134 of 680 top-10 places. Chosen across two
// corpora (docs/adr/0011-version-history-pages.md).
const DefaultHistoryFactor = 0.7

// historyTitle matches the titles documentation generators give version history:
// "What's New In Python 3.3", "Django 3.2 release notes", "Changelog", "Change log
// of libfoo", "E.1. Release 15.4", "Changes in version 2.0". "Change log" in two
// words is history only at the end of the title or before punctuation, "of", "for"
// or "in": "Change log level" and "How to change log verbosity" are how-tos.
var historyTitle = regexp.MustCompile(`(?i)(\bwhat(?:'|’)?s\s+new\b|\brelease\s+notes?\b|\bchangelogs?\b|\bchange\s+logs?(?:\s*$|\s*[^\w\s]|\s+(?:of|for|in)\b)|\bchanges\s+in\s+(?:version\s+)?v?\d|\bversion\s+history\b|^\s*(?:[a-z]?\.?[\d.]*\s+)?release\s+v?\d+(?:\.\d+)+\b)`)

// historySegment matches a URL path segment (without its extension) that holds
// version history: /whatsnew/3.3.html, /CHANGELOG.html, /release-15-4.html.
var historySegment = regexp.MustCompile(`(?i)^(?:what-?s-?new|whats_new|change-?logs?|changes|release-?notes|release_notes|relnotes|release-\d[\d.-]*)$`)

// versionSegment matches a URL path segment that starts with a version: the 3.2
// of /releases/3.2.html, the 120 of /Firefox/Releases/120. A "releases" segment is
// version history only before one: many products document a feature named
// Releases (/user/project/releases/, /api/releases/, /product/releases/setup/), and
// /releases/version-skew-policy/ is a policy.
var versionSegment = regexp.MustCompile(`(?i)^v?\d`)

// IsVersionHistory reports whether a page is version history, judged from its URL
// path and title: release notes, a changelog, a "what's new" page or an index of them.
func IsVersionHistory(rawURL, title string) bool {
	if historyTitle.MatchString(title) {
		return true
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	segs := strings.Split(strings.Trim(u.Path, "/"), "/")
	for i, seg := range segs {
		if historySegment.MatchString(withoutExt(seg)) {
			return true
		}
		if strings.EqualFold(seg, "releases") && i+1 < len(segs) && versionSegment.MatchString(segs[i+1]) {
			return true
		}
	}
	return false
}

// historyQuery matches a query that asks about versions or changes, for which
// version history is what the user wants: "what's new in Django 3.2", "when was the
// walrus operator added", "release notes", "is asyncore deprecated", "breaking
// changes", "fixed in 3.2.25". Words that are also everyday programming words count
// only in such phrases: "release the GIL", "check the python version", "items
// removed from a list" and "upgrade pip" do not ask about history.
var historyQuery = regexp.MustCompile(`(?i)(` +
	`\bwhat(?:'|’)?s\s+new\b|\bnew\s+in\b|\bwhat\s+changed\b|\bnew\s+features?\b|` +
	`\bbreaking\s+changes?\b|\bbackwards?[\s-]+incompatib\w*|\bchange\s?logs?\b|\bdeprecat\w*|` +
	`\breleases\b|\breleased\b|\brelease\s+notes?\b|` +
	`\b(?:new|latest|next|feature|bugfix|patch|security|lts)\s+releases?\b|\blts\b|` +
	`\b(?:added|removed|introduced|changed|fixed)\s+in\b|` +
	`\bwhen\s+(?:was|were|did)\b.*\b(?:added|introduced|removed|deprecated|changed|released)\b|` +
	`\bversion\s+history\b|\bhistory\s+of\b|\b(?:which|what)\s+versions?\b|\bin\s+(?:which|what)\s+version\b|` +
	`\bnew(?:er|est)?\s+(?:major\s+|minor\s+)?versions?\b|\blatest\s+version\b|\bupgrad\w*\s+(?:to|from)\b|` +
	`\bv?\d+\.\d+\.\d+\b|\bv\d+(?:\.\d+)+\b)`)

// namedVersion is a version after a name: "python 3.12", "django 4.2". The word must
// not make it a quantity ("equal to 0.3", "like 1.2 MB", "about 2.5 seconds").
var namedVersion = regexp.MustCompile(`(?i)\b([a-z]{3,})\s+v?[1-9]\d*(?:\.\d+)+\b(?:\s*([a-z%]+))?`)

var (
	notVersionBefore = map[string]bool{"than": true, "like": true, "equal": true, "equals": true, "exactly": true,
		"about": true, "around": true, "approximately": true, "roughly": true, "nearly": true, "almost": true, "over": true, "under": true}
	notVersionAfter = map[string]bool{"kb": true, "mb": true, "gb": true, "tb": true, "ms": true, "s": true, "sec": true,
		"secs": true, "second": true, "seconds": true, "minute": true, "minutes": true, "hour": true, "hours": true,
		"day": true, "days": true, "px": true, "em": true, "rem": true, "pt": true, "x": true, "times": true,
		"percent": true, "%": true, "and": true, "or": true}
)

// AsksAboutHistory reports whether a query asks about versions or changes, so that
// version-history pages keep their full score.
func AsksAboutHistory(query string) bool {
	if historyQuery.MatchString(query) {
		return true
	}
	for _, m := range namedVersion.FindAllStringSubmatch(query, -1) {
		if !notVersionBefore[strings.ToLower(m[1])] && !notVersionAfter[strings.ToLower(m[2])] {
			return true
		}
	}
	return false
}

// withoutExt is a URL path segment without its extension: whatsnew of whatsnew.html.
func withoutExt(seg string) string {
	if i := strings.LastIndexByte(seg, '.'); i > 0 {
		return seg[:i]
	}
	return seg
}
