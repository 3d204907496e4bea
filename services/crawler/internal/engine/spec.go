package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"

	"github.com/kgsearch/kgsearch/pkg/fielderr"
	"github.com/kgsearch/kgsearch/services/crawler/internal/canon"
)

// Spec is a crawl job as requested (POST /api/v1/crawls) and stored.
type Spec struct {
	URL            string   `json:"url"`
	MaxDepth       *int     `json:"max_depth,omitempty"`
	MaxPages       int      `json:"max_pages,omitempty"`
	AllowedDomains []string `json:"allowed_domains,omitempty"`
	Include        []string `json:"include,omitempty"`
	Exclude        []string `json:"exclude,omitempty"`
	Tags           []string `json:"tags,omitempty"`
	RespectRobots  *bool    `json:"respect_robots,omitempty"`
	UseSitemap     *bool    `json:"use_sitemap,omitempty"`
	Recrawl        bool     `json:"recrawl,omitempty"`
	// Prune removes, when the crawl ends having seen its whole scope, the
	// stored documents in that scope that it did not reach (prune.go).
	Prune bool `json:"prune,omitempty"`
}

// Defaults of a Spec.
const (
	DefaultMaxDepth = 2
	DefaultMaxPages = 100
	maxPatterns     = 50
	// maxPatternBytes and maxPatternSize bound one include or exclude pattern:
	// its text, and the program it compiles to (patternSize). RE2 matches in
	// linear time, but a counted repetition is compiled as that many copies:
	// a 17 KB pattern inside (?:...){1000} compiled to 120 MB, and fifty of
	// them in one request would take the crawler's memory.
	maxPatternBytes = 1000
	maxPatternSize  = 5000
)

// FieldError names the request field at fault: the repository's one field-error
// type, which pkg/httpserver answers with a 400 naming Field.
type FieldError = fielderr.Error

func fieldErr(field, format string, args ...any) *FieldError {
	return fielderr.Newf(field, format, args...)
}

// Limits are the operator's caps on a Spec.
type Limits struct {
	MaxPages int
	MaxDepth int
}

// Normalize checks s, fills defaults and canonicalises the seed URL. Errors
// are *FieldError.
func (s Spec) Normalize(lim Limits, opts canon.Options) (Spec, error) {
	if strings.TrimSpace(s.URL) == "" {
		return s, fieldErr("url", "is required: the page to start from, e.g. https://docs.python.org/3/")
	}
	c, err := canon.Seed(s.URL, opts)
	if err != nil {
		return s, &FieldError{Field: "url", Reason: err.Error(), Err: err}
	}
	s.URL = c
	if s.MaxDepth == nil {
		d := min(DefaultMaxDepth, lim.MaxDepth)
		s.MaxDepth = &d
	}
	if *s.MaxDepth < 0 || *s.MaxDepth > lim.MaxDepth {
		return s, fieldErr("max_depth", "%d is outside 0..%d (0: the start page only; leave it out for the default %d)",
			*s.MaxDepth, lim.MaxDepth, min(DefaultMaxDepth, lim.MaxDepth))
	}
	// max_pages 0 means "not given" (clients send it with omitempty): the default.
	if s.MaxPages == 0 {
		s.MaxPages = min(DefaultMaxPages, lim.MaxPages)
	}
	if s.MaxPages < 1 || s.MaxPages > lim.MaxPages {
		return s, fieldErr("max_pages", "%d is outside 1..%d (the operator's CRAWLER_MAX_PAGES_CAP); leave it out, or send 0, for the default %d",
			s.MaxPages, lim.MaxPages, min(DefaultMaxPages, lim.MaxPages))
	}
	u, _ := url.Parse(s.URL)
	if len(s.AllowedDomains) == 0 {
		s.AllowedDomains = []string{u.Hostname()}
	}
	for i, d := range s.AllowedDomains {
		h := strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(d), "*"), ".")
		if _, isIP := canon.ParseHostIP(strings.Trim(h, "[]")); isIP {
			continue
		}
		if h == "" || strings.ContainsAny(h, "/:?#@ ") {
			return s, fieldErr(fmt.Sprintf("allowed_domains[%d]", i), "%q is not a domain name such as example.com", d)
		}
		if _, err := canon.NormalizeHost(h); err != nil {
			return s, fieldErr(fmt.Sprintf("allowed_domains[%d]", i), "%q is not a domain name: %v", d, err)
		}
	}
	if !canon.InScope(u, s.AllowedDomains) {
		return s, fieldErr("allowed_domains", "the start URL's host %s is not in %v", u.Hostname(), s.AllowedDomains)
	}
	for name, list := range map[string][]string{"include": s.Include, "exclude": s.Exclude} {
		if len(list) > maxPatterns {
			return s, fieldErr(name, "%d patterns, at most %d", len(list), maxPatterns)
		}
		for i, p := range list {
			if _, err := compilePattern(p); err != nil {
				return s, fieldErr(fmt.Sprintf("%s[%d]", name, i), "%v", err)
			}
		}
	}
	if len(s.Tags) > MaxTags {
		return s, fieldErr("tags", "%d tags, at most %d", len(s.Tags), MaxTags)
	}
	for i, t := range s.Tags {
		if strings.TrimSpace(t) == "" || len(t) > 128 {
			return s, fieldErr(fmt.Sprintf("tags[%d]", i), "tags must be 1..128 bytes")
		}
	}
	s.Tags = UniqueTags(s.Tags)
	if s.RespectRobots == nil {
		t := true
		s.RespectRobots = &t
	}
	if s.UseSitemap == nil {
		t := true
		s.UseSitemap = &t
	}
	return s, nil
}

// MaxTags is the most tags a crawl or a page (POST /api/v1/pages) may carry.
const MaxTags = 64

// UniqueTags is tags without repeats, in the order they were first given: a
// tag given twice ("tags":["a","a"]) is stored and shown once. Tags are
// compared exactly, as they are stored.
func UniqueTags(tags []string) []string {
	if len(tags) < 2 {
		return tags
	}
	out := make([]string, 0, len(tags))
	seen := make(map[string]bool, len(tags))
	for _, t := range tags {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// Key identifies what a normalised spec crawls, for refusing a second
// identical crawl while one is queued or running (store.CreateJob). Two specs
// have the same key when they have the same canonical start URL (Normalize
// canonicalised it) and the same max_depth, max_pages, allowed_domains,
// include, exclude, tags, respect_robots, use_sitemap, recrawl and prune. The lists
// are sets: their order and repeats do not count, and domains are compared
// without case or surrounding space (patterns and tags exactly). Any other difference makes a different crawl.
func (s Spec) Key() string {
	// Only domains are compared loosely (space and case), as scope reads them:
	// a space in a pattern is part of the regular expression, and tags are
	// stored as given.
	set := func(list []string, fold bool) []string {
		out := make([]string, 0, len(list))
		for _, v := range list {
			if fold {
				v = strings.ToLower(strings.TrimSpace(v))
			}
			out = append(out, v)
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	b, _ := json.Marshal(struct {
		V              int      `json:"v"` // the key's version: change it when the fields change
		URL            string   `json:"url"`
		MaxDepth       int      `json:"max_depth"`
		MaxPages       int      `json:"max_pages"`
		AllowedDomains []string `json:"allowed_domains"`
		Include        []string `json:"include"`
		Exclude        []string `json:"exclude"`
		Tags           []string `json:"tags"`
		RespectRobots  bool     `json:"respect_robots"`
		UseSitemap     bool     `json:"use_sitemap"`
		Recrawl        bool     `json:"recrawl"`
		Prune          bool     `json:"prune"`
	}{1, s.URL, s.Depth(), s.MaxPages, set(s.AllowedDomains, true), set(s.Include, false), set(s.Exclude, false),
		set(s.Tags, false), s.Robots(), s.Sitemap(), s.Recrawl, s.Prune})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Depth is the normalised max_depth.
func (s Spec) Depth() int {
	if s.MaxDepth == nil {
		return DefaultMaxDepth
	}
	return *s.MaxDepth
}

// Robots reports whether robots.txt is obeyed.
func (s Spec) Robots() bool { return s.RespectRobots == nil || *s.RespectRobots }

// Sitemap reports whether sitemaps seed the frontier.
func (s Spec) Sitemap() bool { return s.UseSitemap == nil || *s.UseSitemap }

func decodeSpec(raw json.RawMessage) (Spec, error) {
	var s Spec
	if err := json.Unmarshal(raw, &s); err != nil {
		return s, fmt.Errorf("decode job spec: %w", err)
	}
	return s, nil
}

// filters is a Spec compiled for link decisions.
// compilePattern compiles an include or exclude pattern whose text and
// program are within maxPatternBytes and maxPatternSize; the size is estimated
// from the parsed pattern, before anything is compiled.
func compilePattern(p string) (*regexp.Regexp, error) {
	if len(p) > maxPatternBytes {
		return nil, fmt.Errorf("a pattern of %d bytes is too long: at most %d", len(p), maxPatternBytes)
	}
	tree, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return nil, fmt.Errorf("%q is not a valid regular expression: %w", p, err)
	}
	if n := patternSize(tree); n > maxPatternSize {
		return nil, fmt.Errorf("%q is too complex: it compiles to about %d steps, at most %d (a counted repetition such as {100} counts its part that many times; use + or * instead)",
			p, n, maxPatternSize)
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, fmt.Errorf("%q is not a valid regular expression: %w", p, err)
	}
	return re, nil
}

// patternSize estimates the number of instructions re compiles to, as Go's
// regexp/syntax estimates it to refuse oversized programs (at a far higher
// limit): a repetition {n,m} holds m copies of its part. It stops counting
// beyond maxPatternSize.
func patternSize(re *syntax.Regexp) int64 {
	var size int64
	switch re.Op {
	case syntax.OpLiteral:
		size = int64(len(re.Rune))
	case syntax.OpCapture, syntax.OpStar:
		size = 2 + patternSize(re.Sub[0])
	case syntax.OpPlus, syntax.OpQuest:
		size = 1 + patternSize(re.Sub[0])
	case syntax.OpConcat, syntax.OpAlternate:
		for _, sub := range re.Sub {
			size += patternSize(sub) + 1
			if size > maxPatternSize {
				break
			}
		}
	case syntax.OpRepeat:
		sub := patternSize(re.Sub[0])
		n := int64(re.Max)
		if n < 0 {
			n = int64(re.Min) + 1
		}
		size = n*sub + n
	}
	return min(max(1, size), maxPatternSize+1)
}

type filters struct {
	domains []string
	include []*regexp.Regexp
	exclude []*regexp.Regexp
}

func compileFilters(s Spec) (*filters, error) {
	f := &filters{domains: s.AllowedDomains}
	for _, p := range s.Include {
		re, err := compilePattern(p)
		if err != nil {
			return nil, fmt.Errorf("include %q: %w", p, err)
		}
		f.include = append(f.include, re)
	}
	for _, p := range s.Exclude {
		re, err := compilePattern(p)
		if err != nil {
			return nil, fmt.Errorf("exclude %q: %w", p, err)
		}
		f.exclude = append(f.exclude, re)
	}
	return f, nil
}

// Filter reasons: why a discovered link was not queued.
const (
	FilterOutOfScope  = "out_of_scope"
	FilterExcluded    = "excluded"
	FilterNotIncluded = "not_included"
	FilterBlocked     = "blocked"
	FilterSSRF        = "ssrf"
	FilterDepth       = "max_depth"
	FilterNoFollow    = "nofollow"
	FilterInvalid     = "invalid_url"
	FilterTooLong     = "url_too_long" // longer than canon.MaxBytes: it could not be stored
	FilterLinkLimit   = "link_limit"   // beyond the first Config.MaxPageLinks distinct links of a page
)

// check returns "" when the canonical URL may be queued, else the reason.
func (f *filters) check(u *url.URL, canonical string) string {
	if !canon.InScope(u, f.domains) {
		return FilterOutOfScope
	}
	for _, re := range f.exclude {
		if re.MatchString(canonical) {
			return FilterExcluded
		}
	}
	if len(f.include) > 0 {
		ok := false
		for _, re := range f.include {
			if re.MatchString(canonical) {
				ok = true
				break
			}
		}
		if !ok {
			return FilterNotIncluded
		}
	}
	return ""
}
