package testsite

import (
	"testing"
	"time"

	"github.com/temoto/robotstxt"
)

// TestRobotsParses checks robots.txt with the parser the crawler uses.
func TestRobotsParses(t *testing.T) {
	s := newSite(t, Options{CrawlDelay: 250 * time.Millisecond})
	_, body := get(t, s.URL()+PathRobots, nil)
	r, err := robotstxt.FromString(body)
	if err != nil {
		t.Fatalf("parse robots.txt: %v", err)
	}
	g := r.FindGroup("kgsearch-bot")
	if g.CrawlDelay != 250*time.Millisecond {
		t.Errorf("Crawl-delay = %v, want 250ms", g.CrawlDelay)
	}
	for path, want := range map[string]bool{PathPrivate: false, "/private/": false, "/": true, "/articles/1": true} {
		if got := g.Test(path); got != want {
			t.Errorf("robots allows %s = %v, want %v", path, got, want)
		}
	}
	if len(r.Sitemaps) != 1 || r.Sitemaps[0] != s.URL()+PathSitemap {
		t.Errorf("Sitemaps = %v, want [%s]", r.Sitemaps, s.URL()+PathSitemap)
	}
}
