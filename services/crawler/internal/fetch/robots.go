package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/temoto/robotstxt"
)

// robotsRules is what the crawler keeps of one host's robots.txt.
type robotsRules struct {
	group *robotstxt.Group // nil: everything allowed
	// refused, when not empty, says why nothing of the host is crawled: robots.txt
	// answered 5xx (for a minute), or it holds more pattern rules than
	// maxRobotsPatterns.
	refused  string
	sitemaps []string
	expires  time.Time
}

// Bounds on what robots.txt files cost. The parser compiles every rule with a
// wildcard (*) or an end anchor ($) into a regular expression, and each URL of
// the host is tested against all of them: 512 KiB of "Disallow: /*1*" lines
// took 30 MB and 140 ms a URL. A file with more pattern rules than
// maxRobotsPatterns is not parsed and its host is not crawled (real files have
// a few dozen; refusing is the polite reading of one that cannot be obeyed at a
// sane cost). The cache holds at most maxRobotsEntries hosts: entries are
// dropped when they expire, whether or not the host is asked for again, and the
// soonest to expire make room for new ones (they are fetched again when needed).
const (
	maxRobotsPatterns = 1000
	maxRobotsEntries  = 256
)

type robotsCache struct {
	f   *Fetcher
	ttl time.Duration

	mu      sync.Mutex
	entries map[string]*robotsEntry // scheme://host
	swept   time.Time
	max     int
}

type robotsEntry struct {
	once  chan struct{} // closed when rules/err are set
	rules *robotsRules
	err   error
}

func newRobotsCache(f *Fetcher, ttl time.Duration) *robotsCache {
	return &robotsCache{f: f, ttl: ttl, entries: map[string]*robotsEntry{}, max: maxRobotsEntries}
}

// makeRoom drops expired entries (at most once a minute, or when the cache is
// full) and then, while the cache is full, the loaded entry that expires
// first. Entries still loading stay. c.mu is held.
func (c *robotsCache) makeRoom(now time.Time) {
	if now.Sub(c.swept) < time.Minute && len(c.entries) < c.max {
		return
	}
	c.swept = now
	for key, e := range c.entries {
		if e.loaded() && e.err == nil && now.After(e.rules.expires) {
			delete(c.entries, key)
		}
	}
	for len(c.entries) >= c.max {
		var oldKey string
		var oldExp time.Time
		for key, e := range c.entries {
			if e.loaded() && e.err == nil && (oldKey == "" || e.rules.expires.Before(oldExp)) {
				oldKey, oldExp = key, e.rules.expires
			}
		}
		if oldKey == "" {
			return // every entry is loading; they are few (one per host in flight)
		}
		delete(c.entries, oldKey)
	}
}

// loaded reports whether the entry's rules or error are set.
func (e *robotsEntry) loaded() bool {
	select {
	case <-e.once:
		return true
	default:
		return false
	}
}

func (c *robotsCache) size() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// get returns the host's rules, fetching robots.txt once per TTL; concurrent
// callers for one host share the download.
func (c *robotsCache) get(ctx context.Context, u *url.URL) (*robotsRules, error) {
	key := u.Scheme + "://" + u.Host
	for {
		c.mu.Lock()
		e := c.entries[key]
		if e != nil {
			select {
			case <-e.once:
				if e.err == nil && time.Now().After(e.rules.expires) {
					delete(c.entries, key)
					c.mu.Unlock()
					continue
				}
			default:
			}
			c.mu.Unlock()
			select {
			case <-e.once:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			if e.err != nil {
				return nil, e.err
			}
			return e.rules, nil
		}
		c.makeRoom(time.Now())
		e = &robotsEntry{once: make(chan struct{})}
		c.entries[key] = e
		c.mu.Unlock()
		e.rules, e.err = c.load(ctx, u)
		if e.err != nil {
			// Do not cache failures (a cancelled context, a network blip).
			c.mu.Lock()
			delete(c.entries, key)
			c.mu.Unlock()
		}
		close(e.once)
		if e.err != nil {
			return nil, e.err
		}
		return e.rules, nil
	}
}

func (c *robotsCache) load(ctx context.Context, u *url.URL) (*robotsRules, error) {
	robotsURL := u.Scheme + "://" + u.Host + "/robots.txt"
	release, err := c.f.hosts.acquire(ctx, u.Host)
	if err != nil {
		return nil, err
	}
	defer release()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, robotsURL, nil)
	if err != nil {
		return nil, fmt.Errorf("robots.txt %s: %w", robotsURL, err)
	}
	req.Header.Set("User-Agent", c.f.cfg.UserAgent)
	resp, err := c.f.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("robots.txt %s: %w", robotsURL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 512<<10))
	if err != nil {
		return nil, fmt.Errorf("robots.txt %s: %w", robotsURL, err)
	}
	if resp.StatusCode/100 == 2 {
		if n := patternRules(body); n > maxRobotsPatterns {
			return &robotsRules{expires: time.Now().Add(c.ttl),
				refused: fmt.Sprintf("robots.txt has %d rules with * or $, more than the %d the crawler obeys; the host is not crawled", n, maxRobotsPatterns)}, nil
		}
	}
	// 2xx: parse; 4xx: no rules; 5xx: disallow everything (robotstxt's policy).
	data, err := robotstxt.FromStatusAndBytes(resp.StatusCode, body)
	if err != nil {
		var pe *robotstxt.ParseError
		if !errors.As(err, &pe) || data == nil {
			// An unparsable file is treated as absent.
			data, _ = robotstxt.FromStatusAndBytes(http.StatusNotFound, nil)
		}
	}
	rules := &robotsRules{expires: time.Now().Add(c.ttl)}
	if resp.StatusCode >= 500 {
		// A server error is temporary: refuse the host for a minute, then ask again.
		rules.refused = "robots.txt answered with a server error; the host is not crawled for now"
		rules.expires = time.Now().Add(time.Minute)
		return rules, nil
	}
	if data != nil {
		rules.group = data.FindGroup(AgentToken(c.f.cfg.UserAgent))
		rules.sitemaps = data.Sitemaps
	}
	if rules.group != nil && rules.group.CrawlDelay > 0 {
		c.f.hosts.setDelay(u.Host, min(rules.group.CrawlDelay, c.f.cfg.MaxCrawlDelay))
	}
	return rules, nil
}

// patternRules counts the Allow and Disallow lines of a robots.txt whose path
// holds a wildcard or an end anchor: the rules the parser compiles into
// regular expressions.
func patternRules(body []byte) int {
	n := 0
	for line := range bytes.Lines(body) {
		line = bytes.TrimSpace(line)
		if i := bytes.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		key, val, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		key = bytes.ToLower(bytes.TrimSpace(key))
		if !bytes.Equal(key, []byte("allow")) && !bytes.Equal(key, []byte("disallow")) {
			continue
		}
		if bytes.ContainsAny(val, "*$") {
			n++
		}
	}
	return n
}
