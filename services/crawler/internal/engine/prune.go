package engine

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kgsearch/kgsearch/pkg/store"
)

// Prune (Spec.Prune): a crawl removes the stored version of a page it
// reaches when the page says it is gone (stale.go), but a page that nothing
// links to any more is never reached and would stay in the index for ever.
// A prune job, when its work is done, removes the stored documents inside
// its scope that it did not reach, as vanished from the site: only when it
// saw the whole scope, and it says otherwise why it removed nothing (the
// status's warnings).
//
// The whole scope was seen when nothing is left in the frontier (max_pages
// did not cut the crawl), no page in it failed other than with 404 or 410 (a
// page that failed may link to more), no URL was skipped unfetched (robots,
// blocklist, SSRF guard, too large; a content type that is not a page and
// redirects are fine), every in-scope link that was not followed (beyond
// max_depth, rel=nofollow) points to a URL the crawl reached anyway, the
// sitemaps were read without errors and below the cap, and the job was not
// cancelled. A document is inside the scope when the crawl would have
// followed a link to it (allowed domains, include, exclude, blocklist, SSRF
// guard), its origin (host and port) is the start URL's or one the start URL
// redirected to, its path lies under that URL's directory (startDir: a crawl of
// /docs/v3/ never removes /docs/v2/ pages), and it was not written since the job
// started (another job
// or POST /api/v1/pages may have stored it meanwhile). Each removal is one transaction of the store
// (DeleteDocumentInJob: the document, its chunks, the change for the search
// index, the kg outbox row and a done frontier row deleted_vanished), so a
// crash leaves each document stored or removed and counted; the job is still
// running then, and the crawler that resumes it finds no work and prunes the
// rest. Another site the crawl entered through a link (another port of the
// host, a subdomain allowed_domains admits) is never pruned: the crawl saw
// only what that link leads to, not the site's start page or its sitemaps,
// so the rest of it, stored by that site's own crawl, is not vanished.

// DeleteVanished is the why of a document a prune job removed: the crawl
// saw its whole scope and did not reach it.
const DeleteVanished = "vanished"

// unfollowedLink is an in-scope link a prune job did not follow.
type unfollowedLink struct {
	URL string `json:"url"`
	Why string `json:"why"` // FilterDepth, FilterNoFollow or FilterLinkLimit
}

// maxUnfollowed bounds the unfollowed links kept in a job's progress.
const maxUnfollowed = 200

// noteUnfollowed records, for a prune job, the links of a page that were
// not followed (why: FilterDepth, FilterNoFollow, FilterLinkLimit), are in scope and point to
// URLs not in the frontier now. They are checked again before pruning:
// one still missing then means part of the scope was not seen.
func (r *jobRun) noteUnfollowed(ctx context.Context, base *url.URL, hrefs []string, why string) {
	if !r.spec.Prune || len(hrefs) == 0 {
		return
	}
	seen := map[string]bool{}
	var urls []string
	for _, h := range hrefs {
		if c, reason := r.admissible(ctx, base, h); reason == "" && !seen[c] {
			seen[c] = true
			urls = append(urls, c)
		}
	}
	if len(urls) == 0 {
		return
	}
	missing, err := r.e.st.FrontierMissing(ctx, r.job.ID, urls)
	if err != nil {
		missing = urls // unknown: checked again before pruning
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	have := make(map[string]bool, len(r.prog.Unfollowed))
	for _, l := range r.prog.Unfollowed {
		have[l.URL] = true
	}
	for _, u := range missing {
		switch {
		case have[u]:
		case len(r.prog.Unfollowed) >= maxUnfollowed:
			r.prog.UnfollowedMore++
		default:
			have[u] = true
			r.prog.Unfollowed = append(r.prog.Unfollowed, unfollowedLink{URL: u, Why: why})
		}
	}
}

// noteSitemap records, for a prune job, why the sitemaps may not have given
// every URL they list.
func (r *jobRun) noteSitemap(errs []error, pages int) {
	why := ""
	switch {
	case len(errs) > 0:
		why = fmt.Sprintf("%d sitemaps could not be read (%v)", len(errs), errs[0])
	case pages >= r.e.cfg.MaxSitemapURLs:
		why = fmt.Sprintf("the sitemaps list at least %d URLs, the most a job takes from them", r.e.cfg.MaxSitemapURLs)
	default:
		return
	}
	r.mu.Lock()
	r.prog.SitemapIncomplete = why
	r.mu.Unlock()
}

// prune removes the vanished documents of a job whose work is done, or says
// in the job's progress why it does not.
func (r *jobRun) prune(ctx context.Context) {
	note := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		r.mu.Lock()
		r.prog.PruneNote = msg
		r.mu.Unlock()
		r.log("crawl job not pruned", "why", msg)
	}
	why, err := r.pruneBlocked(ctx)
	switch {
	case ctx.Err() != nil:
		return
	case err != nil:
		note("prune: nothing was removed: whether the crawl saw its whole scope could not be checked (%v)", err)
		return
	case why != "":
		note("prune: nothing was removed, because %s; a crawl that may not have seen its whole scope removes nothing", why)
		return
	}
	n, err := r.pruneVanished(ctx)
	if err != nil && ctx.Err() == nil {
		r.errs.add("prune: %v", err)
		note("prune: stopped after removing %d documents: %v; a crawl with prune run again removes the rest", n, err)
		return
	}
	if ctx.Err() == nil {
		r.log("crawl job pruned", "removed", n)
	}
}

// pruneBlocked says why the job may not have seen its whole scope ("" when
// it saw it).
func (r *jobRun) pruneBlocked(ctx context.Context) (string, error) {
	job, err := r.e.st.GetJob(ctx, r.job.ID)
	if err != nil {
		return "", err
	}
	if job.Status != store.JobRunning {
		return "the job was " + string(job.Status), nil
	}
	fr, err := r.e.st.FrontierReasons(ctx, r.job.ID)
	if err != nil {
		return "", err
	}
	st, err := buildStatus(r.job, progress{}, fr, time.Now())
	if err != nil {
		return "", err
	}
	r.mu.Lock()
	listed := append([]unfollowedLink(nil), r.prog.Unfollowed...)
	more, sitemap := r.prog.UnfollowedMore, r.prog.SitemapIncomplete
	r.mu.Unlock()
	var missing []unfollowedLink
	if len(listed) > 0 {
		urls := make([]string, len(listed))
		for i, l := range listed {
			urls[i] = l.URL
		}
		still, err := r.e.st.FrontierMissing(ctx, r.job.ID, urls)
		if err != nil {
			return "", err
		}
		gone := map[string]bool{}
		for _, u := range still {
			gone[u] = true
		}
		for _, l := range listed {
			if gone[l.URL] {
				missing = append(missing, l)
			}
		}
	}
	return pruneBlocker(r.spec, st.Counters, missing, more, sitemap), nil
}

// pruneBlocker says why a crawl with counters c may not have seen its whole
// scope, "" when it saw it: missing are the in-scope links it did not follow
// to URLs it did not reach either, more the count of such links not listed,
// sitemap why the sitemaps may be incomplete.
func pruneBlocker(spec Spec, c Counters, missing []unfollowedLink, more int64, sitemap string) string {
	if left := c.Queued + c.InFlight; left > 0 {
		return fmt.Sprintf("max_pages (%d) was reached with %d URLs still queued", spec.MaxPages, left)
	}
	failed := map[string]int64{}
	for reason, n := range c.FailedBy {
		if reason != "http_404" && reason != "http_410" && n > 0 {
			failed[reason] = n
		}
	}
	if len(failed) > 0 {
		return fmt.Sprintf("%s failed (%s), so what they link to is unknown", pages(sum(failed)), byReason(failed))
	}
	skipped := map[string]int64{}
	for reason, n := range c.Skipped {
		switch reason {
		case "content_type", SkipRedirect, SkipRedirectOutOfScope:
		default:
			if n > 0 {
				skipped[reason] = n
			}
		}
	}
	if len(skipped) > 0 {
		return fmt.Sprintf("%s were not fetched (%s), so what they link to is unknown", pages(sum(skipped)), byReason(skipped))
	}
	if n := int64(len(missing)) + more; n > 0 {
		l := missing[0]
		how := "it is beyond max_depth " + fmt.Sprint(spec.Depth())
		switch l.Why {
		case FilterNoFollow:
			how = "the link is rel=nofollow"
		case FilterLinkLimit:
			how = "its page holds more links than one page may queue (link_limit)"
		}
		return fmt.Sprintf("%d in-scope links were not followed and lead to pages the crawl did not reach, e.g. %s (%s)", n, l.URL, how)
	}
	if sitemap != "" {
		return sitemap
	}
	return ""
}

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

func pages(n int64) string {
	if n == 1 {
		return "1 page"
	}
	return fmt.Sprintf("%d pages", n)
}

// byReason lists counts by reason, sorted: "http_500: 2, timeout: 1".
func byReason(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s: %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// pruneVanished removes the documents in the job's scope it did not reach;
// it returns how many it removed.
func (r *jobRun) pruneVanished(ctx context.Context) (int, error) {
	starts, err := r.e.st.FrontierStartURLs(ctx, r.job.ID)
	if err != nil {
		return 0, err
	}
	// reached: the directories of the start URL and of its redirect targets,
	// by origin. (A page removed as vanished is recorded at depth 0 too; its
	// directory lies under one of these, so a resumed prune sees no wider
	// scope.)
	reached := map[string][]string{}
	var hosts []string
	for _, o := range starts {
		u, err := url.Parse(o)
		if err != nil || u.Hostname() == "" {
			continue
		}
		reached[originKey(u)] = append(reached[originKey(u)], startDir(u))
		if h := strings.ToLower(u.Hostname()); !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	removed := 0
	for _, host := range hosts {
		after := ""
		for {
			page, err := r.e.st.ListDocuments(ctx, store.ListOptions{Domain: host, After: after, Limit: 500})
			if err != nil {
				return removed, err
			}
			byURL := map[string]store.Document{}
			var urls []string
			for _, d := range page.Documents {
				if r.inPruneScope(ctx, d, reached) {
					byURL[d.URL] = d
					urls = append(urls, d.URL)
				}
			}
			missing, err := r.e.st.FrontierMissing(ctx, r.job.ID, urls)
			if err != nil {
				return removed, err
			}
			for _, u := range missing {
				if ctx.Err() != nil {
					return removed, ctx.Err()
				}
				ok, err := r.removeVanished(ctx, byURL[u])
				if err != nil {
					return removed, err
				}
				if ok {
					removed++
				}
			}
			if page.NextAfter == "" {
				break
			}
			after = page.NextAfter
		}
	}
	return removed, nil
}

// inPruneScope reports whether the job would have followed a link to the
// stored document d, under the directory of a URL it started on (reached: the
// directories of the start URL and its redirects, by origin), and d was not
// written since the job started.
func (r *jobRun) inPruneScope(ctx context.Context, d store.Document, reached map[string][]string) bool {
	u, err := url.Parse(d.URL)
	if err != nil || r.filters.check(u, d.URL) != "" {
		return false
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	if !slices.ContainsFunc(reached[originKey(u)], func(dir string) bool { return strings.HasPrefix(path, dir) }) {
		return false
	}
	if !d.FetchedAt.Before(r.job.StartedAt) || !d.UpdatedAt.Before(r.job.StartedAt) {
		return false
	}
	if blocked, err := r.e.block.blocked(ctx, u.Hostname()); err != nil || blocked {
		return false
	}
	return r.e.guard == nil || r.e.guard.CheckURL(u) == nil
}

// removeVanished removes one document the job did not reach, through the
// store's one deletion (DeleteDocumentInJob), and counts and reports it like
// any removal; ok is false when it was gone already or was written since the
// job started (after inPruneScope chose it).
func (r *jobRun) removeVanished(ctx context.Context, d store.Document) (ok bool, err error) {
	reason := deletedReason(DeleteVanished)
	err = r.retryStore(ctx, "prune", func(ctx context.Context) error {
		bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_, err := r.e.st.DeleteDocumentInJob(bg, d.ID, &store.DeletePayload{URL: d.URL}, r.job.ID, reason)
		return err
	})
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrWrittenSince) {
		return false, nil // removed, or written by another job or a single page, meanwhile
	}
	if err != nil {
		return false, err
	}
	r.e.countEnd(outcome{state: store.FrontierDone, reason: reason})
	r.e.hub.publish(Event{Type: EventPage, JobID: r.job.ID, At: time.Now().UTC(), URL: d.URL, Outcome: DoneDeleted, Reason: DeleteVanished,
		Detail: "the crawl saw its whole scope and no page links to it any more; its stored version was removed"})
	return true, nil
}

// startDir is the directory of a start URL, the pages prune may remove: its
// path up to and including the last "/" ("/docs/v3/index.html" gives
// "/docs/v3/", "" gives "/").
func startDir(u *url.URL) string {
	p := u.EscapedPath()
	i := strings.LastIndex(p, "/")
	if i < 0 {
		return "/"
	}
	return p[:i+1]
}

// originKey is a URL's host and port, the port filled in from the scheme.
func originKey(u *url.URL) string {
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "https":
			port = "443"
		default:
			port = "80"
		}
	}
	return net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}
