package engine

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kgsearch/kgsearch/services/crawler/internal/canon"
)

// TestSpecPageAndDepthDefaults: max_pages 0 and an absent max_pages take the
// default (the clients send max_pages with omitempty); max_depth 0 is depth 0
// (the start page only), an absent one the default, within the operator's caps;
// out-of-range values are refused with the range and how to get the default.
func TestSpecPageAndDepthDefaults(t *testing.T) {
	lim := Limits{MaxPages: 500, MaxDepth: 10}
	depth := func(d int) *int { return &d }
	for _, tc := range []struct {
		name      string
		spec      Spec
		lim       Limits
		pages, dp int
	}{
		{"absent", Spec{}, lim, 100, 2},
		{"max_pages 0", Spec{MaxPages: 0}, lim, 100, 2},
		{"max_depth 0", Spec{MaxDepth: depth(0)}, lim, 100, 0},
		{"given", Spec{MaxPages: 7, MaxDepth: depth(3)}, lim, 7, 3},
		{"defaults within small caps", Spec{}, Limits{MaxPages: 20, MaxDepth: 1}, 20, 1},
	} {
		tc.spec.URL = "https://docs.example.com/"
		got, err := tc.spec.Normalize(tc.lim, canon.DefaultOptions())
		if err != nil || got.MaxPages != tc.pages || got.Depth() != tc.dp {
			t.Errorf("%s: got max_pages %d, depth %d, %v; want %d, %d", tc.name, got.MaxPages, got.Depth(), err, tc.pages, tc.dp)
		}
	}
	for _, tc := range []struct {
		spec        Spec
		field, want string
	}{
		{Spec{MaxPages: -1}, "max_pages", "-1 is outside 1..500 (the operator's CRAWLER_MAX_PAGES_CAP); leave it out, or send 0, for the default 100"},
		{Spec{MaxPages: 501}, "max_pages", "501 is outside 1..500"},
		{Spec{MaxDepth: depth(11)}, "max_depth", "11 is outside 0..10 (0: the start page only; leave it out for the default 2)"},
	} {
		tc.spec.URL = "https://docs.example.com/"
		_, err := tc.spec.Normalize(lim, canon.DefaultOptions())
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field || !strings.Contains(fe.Reason, tc.want) {
			t.Errorf("%+v: got %v, want %s: %q", tc.spec, err, tc.field, tc.want)
		}
	}
}

// TestSpecTagsOnce: a tag given twice is kept once, in the order first given
// (the job's spec and every page it stores show it once); tags are compared
// exactly, so "B" and "b" are two tags.
func TestSpecTagsOnce(t *testing.T) {
	for _, tc := range []struct{ tags, want []string }{
		{nil, nil},
		{[]string{"a"}, []string{"a"}},
		{[]string{"a", "a", "B"}, []string{"a", "B"}},
		{[]string{"b", "a", "b", "a", "c"}, []string{"b", "a", "c"}},
		{[]string{"B", "b"}, []string{"B", "b"}},
	} {
		got, err := Spec{URL: "https://docs.example.com/", Tags: tc.tags}.Normalize(Limits{MaxPages: 10, MaxDepth: 2}, canon.DefaultOptions())
		if err != nil || !slices.Equal(got.Tags, tc.want) {
			t.Errorf("tags %q: got %q, %v; want %q", tc.tags, got.Tags, err, tc.want)
		}
	}
}

// TestSpecKey: specs that crawl the same pages the same way share a key
// (after normalisation: the start URL's spelling, defaults given or left
// out, the order of set-like lists); any difference in what is crawled or
// how makes another key.
func TestSpecKey(t *testing.T) {
	lim := Limits{MaxPages: 500, MaxDepth: 10}
	key := func(s Spec) string {
		t.Helper()
		n, err := s.Normalize(lim, canon.DefaultOptions())
		if err != nil {
			t.Fatalf("normalize %+v: %v", s, err)
		}
		return n.Key()
	}
	base := Spec{URL: "https://docs.example.com/guide/", Include: []string{"/guide/", "/api/"}, Tags: []string{"a", "b"}}
	want := key(base)
	for _, tc := range []struct {
		name string
		spec Spec
	}{
		{"another spelling of the start URL", Spec{URL: "HTTPS://Docs.Example.com:443/guide/#top", Include: base.Include, Tags: base.Tags}},
		{"defaults given", Spec{URL: base.URL, Include: base.Include, Tags: base.Tags, MaxDepth: ptr(DefaultMaxDepth), MaxPages: DefaultMaxPages,
			AllowedDomains: []string{"docs.example.com"}, RespectRobots: ptr(true), UseSitemap: ptr(true)}},
		{"lists in another order, repeated", Spec{URL: base.URL, Include: []string{"/api/", "/guide/", "/api/"}, Tags: []string{"b", "a"}}},
		{"domain in upper case", Spec{URL: base.URL, Include: base.Include, Tags: base.Tags, AllowedDomains: []string{"DOCS.example.com"}}},
		{"domain with spaces", Spec{URL: base.URL, Include: base.Include, Tags: base.Tags, AllowedDomains: []string{" docs.example.com "}}},
	} {
		if got := key(tc.spec); got != want {
			t.Errorf("%s: got another key, want the same as %+v", tc.name, base)
		}
	}
	for _, tc := range []struct {
		name   string
		change func(*Spec)
	}{
		{"start URL", func(s *Spec) { s.URL = "https://docs.example.com/api/" }},
		{"max_depth", func(s *Spec) { s.MaxDepth = ptr(3) }},
		{"max_pages", func(s *Spec) { s.MaxPages = 50 }},
		{"allowed_domains", func(s *Spec) { s.AllowedDomains = []string{"example.com"} }},
		{"include", func(s *Spec) { s.Include = []string{"/guide/"} }},
		// A space is part of a pattern (it matches only URLs that hold one) and of a tag.
		{"include with a space", func(s *Spec) { s.Include = []string{"/guide/ ", "/api/"} }},
		{"tag with a space", func(s *Spec) { s.Tags = []string{"a ", "b"} }},
		{"exclude", func(s *Spec) { s.Exclude = []string{"/old/"} }},
		{"tags", func(s *Spec) { s.Tags = []string{"a"} }},
		{"respect_robots", func(s *Spec) { s.RespectRobots = ptr(false) }},
		{"use_sitemap", func(s *Spec) { s.UseSitemap = ptr(false) }},
		{"recrawl", func(s *Spec) { s.Recrawl = true }},
		{"prune", func(s *Spec) { s.Prune = true }},
	} {
		s := base
		tc.change(&s)
		if got := key(s); got == want {
			t.Errorf("%s changed: got the same key, want another", tc.name)
		}
	}
}

// TestSpecPatternLimits: include and exclude patterns are refused when their
// text is too long or when they would compile to a huge program (a counted
// repetition is that many copies: 17 KB of such a pattern took 120 MB), with
// a 400 naming the pattern; ordinary patterns pass.
func TestSpecPatternLimits(t *testing.T) {
	lim := Limits{MaxPages: 100, MaxDepth: 5}
	for _, p := range []string{
		`/guide/`,
		`^https://docs\.example\.com/(?:guide|api|reference|tutorial)/[^?#]*\.html$`,
		`/\d{4}-\d{2}-\d{2}/`,
		`\.(?:pdf|zip|tar\.gz|png|jpe?g|gif|svg|woff2?)$`,
		`/[a-z]{1,200}/`,
	} {
		s := Spec{URL: "https://docs.example.com/", Include: []string{p}, Exclude: []string{p}}
		if _, err := s.Normalize(lim, canon.DefaultOptions()); err != nil {
			t.Errorf("pattern %q: got %v, want it accepted", p, err)
		}
	}
	for _, tc := range []struct {
		name, pattern, want string
	}{
		{"too long", "/" + strings.Repeat("a", maxPatternBytes), "too long"},
		{"a huge repetition", `(?:abc|def){1000}`, "too complex"},
		{"repetitions in sequence", `[a-z]{1000}[0-9]{1000}[a-z]{1000}[0-9]{1000}[a-z]{1000}`, "too complex"},
		{"nested repetitions", `(?:(?:ab|cd|ef){100}){10}`, "too complex"},
		{"invalid", `(`, "not a valid regular expression"},
	} {
		for _, field := range []string{"include", "exclude"} {
			s := Spec{URL: "https://docs.example.com/"}
			if field == "include" {
				s.Include = []string{"/ok/", tc.pattern}
			} else {
				s.Exclude = []string{"/ok/", tc.pattern}
			}
			_, err := s.Normalize(lim, canon.DefaultOptions())
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != field+"[1]" || !strings.Contains(fe.Reason, tc.want) {
				t.Errorf("%s in %s: got %v, want %s[1]: %q", tc.name, field, err, field, tc.want)
			}
		}
		if _, err := compileFilters(Spec{Include: []string{tc.pattern}}); err == nil {
			t.Errorf("%s: compileFilters accepted it, want an error", tc.name)
		}
	}
}
