package fetch

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"net/http"
	"strings"
)

// sitemapDoc covers both <urlset> and <sitemapindex>.
type sitemapDoc struct {
	XMLName  xml.Name
	URLs     []sitemapLoc `xml:"url"`
	Sitemaps []sitemapLoc `xml:"sitemap"`
}

type sitemapLoc struct {
	Loc string `xml:"loc"`
}

// ParseSitemap reads a sitemap or a sitemap index. It returns page URLs and
// nested sitemap URLs, whitespace trimmed, in document order.
func ParseSitemap(body []byte) (pages, sitemaps []string, err error) {
	var doc sitemapDoc
	dec := xml.NewDecoder(bytes.NewReader(body))
	dec.Strict = false
	if err := dec.Decode(&doc); err != nil {
		return nil, nil, fmt.Errorf("parse sitemap: %w", err)
	}
	switch doc.XMLName.Local {
	case "urlset", "sitemapindex":
	default:
		return nil, nil, fmt.Errorf("parse sitemap: root element <%s> is neither <urlset> nor <sitemapindex>", doc.XMLName.Local)
	}
	for _, u := range doc.URLs {
		if s := strings.TrimSpace(u.Loc); s != "" {
			pages = append(pages, s)
		}
	}
	for _, u := range doc.Sitemaps {
		if s := strings.TrimSpace(u.Loc); s != "" {
			sitemaps = append(sitemaps, s)
		}
	}
	return pages, sitemaps, nil
}

// acceptXML accepts the media types sitemaps are served with.
func acceptXML(mt string) bool {
	switch mt {
	case "application/xml", "text/xml", "application/gzip", "application/x-gzip", "application/octet-stream", "text/plain":
		return true
	}
	return strings.HasSuffix(mt, "+xml")
}

// Sitemap fetches the sitemaps at the given URLs (following sitemap indexes,
// at most maxSitemaps files) and returns up to maxURLs page URLs. Sitemaps
// that cannot be fetched or parsed are reported in errs and skipped.
func (f *Fetcher) Sitemap(ctx context.Context, start []string, respectRobots bool, maxSitemaps, maxURLs int) (pages []string, errs []error) {
	queue := append([]string(nil), start...)
	seen := map[string]bool{}
	fetched := 0
	for len(queue) > 0 && fetched < maxSitemaps && len(pages) < maxURLs {
		u := queue[0]
		queue = queue[1:]
		if seen[u] {
			continue
		}
		seen[u] = true
		fetched++
		resp, err := f.Fetch(ctx, Request{URL: u, Accept: acceptXML, IgnoreRobots: !respectRobots})
		if err != nil {
			if ctx.Err() != nil {
				return pages, append(errs, ctx.Err())
			}
			errs = append(errs, err)
			continue
		}
		if resp.Status != http.StatusOK {
			if resp.Status != http.StatusNotFound {
				errs = append(errs, fmt.Errorf("sitemap %s: HTTP %d", u, resp.Status))
			}
			continue
		}
		p, s, err := ParseSitemap(resp.Body)
		if err != nil {
			errs = append(errs, fmt.Errorf("sitemap %s: %w", u, err))
			continue
		}
		for _, x := range p {
			if len(pages) >= maxURLs {
				break
			}
			pages = append(pages, x)
		}
		queue = append(queue, s...)
	}
	return pages, errs
}
