package web

import "testing"

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
