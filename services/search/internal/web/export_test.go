package web

import (
	"testing"
	"time"
)

// FakeSite serves the pages with this package's test fakes (search answers,
// graph, crawler) and returns its address: the browser tests of layout, keyboard
// and accessibility need the pages, not the whole system. With a key, crawls and
// deletes need a login.
func FakeSite(t testing.TB, keys ...string) string {
	t.Helper()
	return newRig(t, keys).srv.URL
}

// FakeJobID is the one crawl job the fake crawler knows.
const FakeJobID = testJobID

// FakeShellJobID is a finished crawl the fake crawler knows whose status warns
// that the site's pages are rendered by JavaScript.
const FakeShellJobID = shellJobID

// FakeSiteFinishing is FakeSite whose running crawl (FakeJobID) stores one more
// page at each read of its status and is done at the after-th read; reads
// tells how many reads the crawler has answered.
func FakeSiteFinishing(t testing.TB, after int) (site string, reads func() int) {
	t.Helper()
	r := newRig(t, nil)
	r.crawler.mu.Lock()
	r.crawler.finishAfter = after
	r.crawler.mu.Unlock()
	return r.srv.URL, func() int {
		r.crawler.mu.Lock()
		defer r.crawler.mu.Unlock()
		return r.crawler.reads
	}
}

// FakeSiteAddingCrawls is FakeSite whose crawls list asks for new crawls every
// poll; add makes the crawler list a crawl started after the page loaded (first,
// newest first), lists tells how many times the crawler was asked for the list,
// fail makes its list answer 503 (or not).
func FakeSiteAddingCrawls(t testing.TB, poll time.Duration) (site string, add func(id, status, startURL string), lists func() int, fail func(bool)) {
	t.Helper()
	r := newRig(t, nil)
	r.web.d.CrawlsPoll = poll
	return r.srv.URL, r.crawler.addCrawl, func() int {
			r.crawler.mu.Lock()
			defer r.crawler.mu.Unlock()
			return len(r.crawler.listQueries)
		}, func(on bool) {
			r.crawler.mu.Lock()
			defer r.crawler.mu.Unlock()
			r.crawler.failList = on
		}
}
