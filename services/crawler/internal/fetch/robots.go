package fetch

import (
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
	group       *robotstxt.Group // nil: everything allowed
	disallowAll bool             // robots.txt answered 5xx: crawl nothing for now
	sitemaps    []string
	expires     time.Time
}

type robotsCache struct {
	f   *Fetcher
	ttl time.Duration

	mu      sync.Mutex
	entries map[string]*robotsEntry // scheme://host
}

type robotsEntry struct {
	once  chan struct{} // closed when rules/err are set
	rules *robotsRules
	err   error
}

func newRobotsCache(f *Fetcher, ttl time.Duration) *robotsCache {
	return &robotsCache{f: f, ttl: ttl, entries: map[string]*robotsEntry{}}
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
		rules.disallowAll = true
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
