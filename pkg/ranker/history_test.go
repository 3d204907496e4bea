package ranker

import (
	"errors"
	"math"
	"testing"
)

func TestIsVersionHistory(t *testing.T) {
	for _, c := range []struct {
		url, title string
		want       bool
	}{
		// Titles the generators give release notes and changelogs.
		{"http://d/whatsnew/3.3.html", "What’s New In Python 3.3 — Python 3.11.2 documentation", true},
		{"http://d/x.html", "What's new in 2.0", true},
		{"http://d/x.html", "Django 3.2 release notes | Django documentation", true},
		{"http://d/x.html", "Changelog", true},
		{"http://d/x.html", "Change log of libfoo", true},
		{"http://d/x.html", "E.1. Release 15.4", true},
		{"http://d/x.html", "Release 2.1.0", true},
		{"http://d/x.html", "Changes in version 1.4", true},
		{"http://d/x.html", "Version history", true},
		// Paths that hold them, whatever the title.
		{"http://d/releases/3.2.html", "Django 3.2", true},
		{"http://d/en/5.0/releases/3.2.25/", "Index", true},
		{"http://d/Mozilla/Firefox/Releases/120", "Firefox 120 for developers", true},
		{"http://d/Releases/v2.0", "2.0", true},
		{"http://d/x.html", "Change Log", true},
		{"http://d/x.html", "Change log — libfoo 2.0 documentation", true},
		{"http://d/x.html", "Change logs for 1.x", true},
		{"http://d/docs/CHANGELOG.html", "libfoo", true},
		{"http://d/release-15-4.html", "E.1", true},
		{"http://d/docs/release-notes/v2", "v2", true},
		{"http://d/news/whats-new.html", "Latest", true},
		// Pages that only mention releases, versions or changes.
		{"http://d/library/functools.html", "functools — Higher-order functions", false},
		{"http://d/c-api/apiabiversion.html", "API and ABI Versioning", false},
		{"http://d/faq/design.html", "Design and History FAQ", false},
		{"http://d/ch14-01-release-profiles.html", "Customizing Builds with Release Profiles", false},
		{"http://d/git-tag.html", "git-tag(1) - Create a signed tag for a release", false},
		{"http://d/howto/upgrade-version.html", "How to upgrade Django to a newer version", false},
		{"http://d/ref/models/instances.html", "Model instance reference: tracking changes", false},
		{"http://d/topics/migrations.html", "Migrations: releasing schema changes", false},
		// A feature named Releases, a policy kept under /releases/, a how-to about logs.
		{"http://d/ee/user/project/releases/", "Releases | GitLab", false},
		{"http://d/ee/api/releases/", "Releases API | GitLab", false},
		{"http://d/en/rest/releases/releases", "REST API endpoints for releases", false},
		{"http://d/product/releases/setup/", "Set up releases | Sentry", false},
		{"http://d/releases/version-skew-policy/", "Version Skew Policy | Kubernetes", false},
		{"http://d/releases/", "Index", false},
		{"http://d/logging/change-log-level.html", "Change log level", false},
		{"http://d/x.html", "How to change log verbosity", false},
		{"::not a url", "Tutorial", false},
	} {
		if got := IsVersionHistory(c.url, c.title); got != c.want {
			t.Errorf("IsVersionHistory(%q, %q) = %v, want %v", c.url, c.title, got, c.want)
		}
	}
}

func TestAsksAboutHistory(t *testing.T) {
	for _, c := range []struct {
		q    string
		want bool
	}{
		{"what's new in django 3.2", true},
		{"what’s new in python", true},
		{"when was the walrus operator added", true},
		{"release notes", true},
		{"changelog of the json module", true},
		{"is asyncore deprecated", true},
		{"which version introduced f-strings", true},
		{"security fixes in 3.2.25", true},
		{"upgrading to python 3", true},
		{"how do i read a file line by line", false},
		{"why is 0.1 + 0.2 not equal to 0.3", false},
		{"print a file size like 1.2 mb", false},
		{"sort a list of dictionaries by a value", false},
		{"functools.lru_cache", false},
		// Asking about versions without the words above.
		{"changes in python 3.12", true},
		{"what changed in django 4.2", true},
		{"python 3.12 new features", true},
		{"breaking changes in django 5", true},
		{"django 4.2 lts", true},
		{"history of asyncio", true},
		{"python 3.12", true},
		{"which python versions does django 3.2 support", true},
		{"how do i upgrade to a new major version", true},
		{"when were f-strings introduced", true},
		// Everyday programming words that do not ask about history.
		{"release the gil", false},
		{"release savepoint", false},
		{"semaphore release", false},
		{"time since epoch", false},
		{"check python version", false},
		{"version control", false},
		{"items removed from a list", false},
		{"migrate to a custom user model", false},
		{"upgrade pip", false},
		{"find the commit that added a string", false},
		{"sleep for about 2.5 seconds", false},
		{"make my class iterable", false},
	} {
		if got := AsksAboutHistory(c.q); got != c.want {
			t.Errorf("AsksAboutHistory(%q) = %v, want %v", c.q, got, c.want)
		}
	}
}

// A version-history page that would rank first ranks below a page a little weaker
// on every signal when the factor applies, and keeps its place with 0 or 1.
func TestRankHistoryFactor(t *testing.T) {
	r := newTestRanker(t, Options{})
	cands := []Candidate{
		{ChunkID: "n", DocumentID: "notes", URL: "http://d/whatsnew/3.3.html", Title: "What's New In 3.3",
			VectorSimilarity: 0.80, HasVector: true, BM25Score: 10, HasBM25: true, History: true},
		{ChunkID: "a", DocumentID: "answer", URL: "http://d/library/functools.html", Title: "functools",
			VectorSimilarity: 0.76, HasVector: true, BM25Score: 9.5, HasBM25: true},
		{ChunkID: "w", DocumentID: "weak", URL: "http://d/library/os.html", Title: "os",
			VectorSimilarity: 0.20, HasVector: true, BM25Score: 1, HasBM25: true},
	}
	w := Weights{Vector: 0.6, BM25: 0.4}
	for _, c := range []struct {
		factor float64
		first  string
	}{{0, "notes"}, {1, "notes"}, {0.9, "answer"}, {0.7, "answer"}} {
		out, err := r.Rank(Request{Query: Query{Text: "lru cache"}, Weights: w, HistoryFactor: c.factor}, cands)
		if err != nil {
			t.Fatal(err)
		}
		if out[0].Candidate.DocumentID != c.first {
			t.Errorf("factor %g: first %s, want %s", c.factor, out[0].Candidate.DocumentID, c.first)
		}
		if c.factor == 0.7 {
			plain := out[1].Breakdown.Vector*0.6 + out[1].Breakdown.BM25*0.4
			if math.Abs(out[1].Score-0.7*plain) > 1e-9 {
				t.Errorf("history page's score %g, want 0.7 × %g", out[1].Score, plain)
			}
		}
	}
	for _, f := range []float64{-0.1, 1.5, math.NaN()} {
		if _, err := r.Rank(Request{Weights: w, HistoryFactor: f}, cands); !errors.Is(err, ErrBadRequest) {
			t.Errorf("factor %g: err %v, want ErrBadRequest", f, err)
		}
	}
}
