package engine

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/kgsearch/kgsearch/pkg/store"
	"github.com/kgsearch/kgsearch/services/crawler/internal/canon"
	"github.com/kgsearch/kgsearch/services/crawler/internal/htmltext"
)

// The job's frontier: the URLs of a crawl in MariaDB (FrontierStore), as this
// owner works them. Links are admitted (canonical, in scope, not filtered,
// not blocklisted, not internal) and queued once per canonical URL; workers
// claim URLs breadth-first within the page budget and complete them; the
// reclaim loop returns claims that nobody holds any more.

// frontier is one job's frontier as one owner works it: the store's frontier
// with the job, the owner, the claim lease and the page budget bound.
type frontier struct {
	st     FrontierStore
	job    string
	owner  string
	lease  time.Duration
	budget int // max_pages: claimed and done URLs never exceed it
}

// enqueue queues canonical URLs the job has not seen yet.
func (f frontier) enqueue(ctx context.Context, urls []store.FrontierURL) error {
	_, err := f.st.EnqueueURLs(ctx, f.job, urls)
	return err
}

// claimNext claims the next URL (lowest depth first) within the budget.
func (f frontier) claimNext(ctx context.Context) ([]store.FrontierItem, error) {
	return f.st.ClaimURLs(ctx, store.ClaimRequest{JobID: f.job, Owner: f.owner, N: 1, Lease: f.lease, Budget: f.budget})
}

// complete moves a URL this owner claimed to its final state, or back to the queue.
func (f frontier) complete(ctx context.Context, urlHash string, state store.FrontierState, reason string) error {
	return f.st.CompleteURL(ctx, f.job, urlHash, f.owner, state, reason)
}

// counts counts the job's URLs per state.
func (f frontier) counts(ctx context.Context) (store.FrontierCounts, error) {
	return f.st.FrontierCounts(ctx, f.job)
}

// requeueExpired returns the job's expired claims (of any owner) to the queue.
func (f frontier) requeueExpired(ctx context.Context) (int64, error) {
	return f.st.RequeueExpired(ctx, f.job)
}

// release returns every claim of owner on the job to the queue.
func (f frontier) release(ctx context.Context, owner string) (int64, error) {
	return f.st.ReleaseClaims(ctx, f.job, owner)
}

// releaseLost returns this owner's claims to the queue, except those in keep.
func (f frontier) releaseLost(ctx context.Context, keep []string) (int64, error) {
	return f.st.ReleaseClaimsExcept(ctx, f.job, f.owner, keep)
}

// admit canonicalises a link and applies scope, filters, blocklist and the
// SSRF pre-check; it counts refusals by reason.
func (r *jobRun) admit(ctx context.Context, base *url.URL, href string) (string, bool) {
	c, reason := r.admissible(ctx, base, href)
	if reason != "" {
		r.addFiltered(reason, 1)
		return "", false
	}
	return c, true
}

// admissible is admit without the counting: the canonical URL, or the
// filter reason that refuses it.
func (r *jobRun) admissible(ctx context.Context, base *url.URL, href string) (string, string) {
	c, err := canon.Resolve(base, href, r.e.cfg.Canon)
	if errors.Is(err, canon.ErrTooLong) {
		return "", FilterTooLong
	}
	if err != nil {
		return "", FilterInvalid
	}
	u, err := url.Parse(c)
	if err != nil {
		return "", FilterInvalid
	}
	if reason := r.filters.check(u, c); reason != "" {
		return "", reason
	}
	if blocked, err := r.e.block.blocked(ctx, u.Hostname()); err == nil && blocked {
		return "", FilterBlocked
	}
	if r.e.guard != nil {
		if err := r.e.guard.CheckURL(u); err != nil {
			return "", FilterSSRF
		}
	}
	return c, ""
}

// queueLinks queues the page's followable links at depth+1.
func (r *jobRun) queueLinks(ctx context.Context, base *url.URL, it store.FrontierItem, page *htmltext.Page) error {
	if len(page.Links) == 0 {
		return nil
	}
	hrefs := func() []string {
		out := make([]string, len(page.Links))
		for i, l := range page.Links {
			out[i] = l.URL
		}
		return out
	}
	if page.Robots.NoFollow {
		r.addFiltered(FilterNoFollow, int64(len(page.Links)))
		r.noteUnfollowed(ctx, base, hrefs(), FilterNoFollow)
		return nil
	}
	if it.Depth >= r.spec.Depth() {
		r.addFiltered(FilterDepth, int64(len(page.Links)))
		r.noteUnfollowed(ctx, base, hrefs(), FilterDepth)
		return nil
	}
	seen := map[string]bool{}
	var urls []store.FrontierURL
	var nofollow []string
	var over []string
	for _, l := range page.Links {
		if l.NoFollow() {
			r.addFiltered(FilterNoFollow, 1)
			nofollow = append(nofollow, l.URL)
			continue
		}
		c, ok := r.admit(ctx, base, l.URL)
		if !ok || seen[c] {
			continue
		}
		seen[c] = true
		if len(urls) >= r.e.cfg.MaxPageLinks {
			over = append(over, l.URL)
			continue
		}
		urls = append(urls, store.FrontierURL{URL: c, Depth: it.Depth + 1})
	}
	if len(over) > 0 {
		r.addFiltered(FilterLinkLimit, int64(len(over)))
	}
	if err := r.enqueue(ctx, urls); err != nil {
		return err
	}
	r.noteUnfollowed(ctx, base, nofollow, FilterNoFollow)
	// A prune must not remove what the links beyond the limit lead to.
	r.noteUnfollowed(ctx, base, over, FilterLinkLimit)
	return nil
}

// redirect queues an in-scope redirect target at the same depth (fetched
// once, like any link) and completes the redirecting URL as skipped. A URL
// whose document was stored (prev) no longer serves it: the stored version
// is removed, so that search does not show it under the old URL next to the
// target's own document, or at all when the target is outside the crawl's
// scope. A redirect to the same canonical URL (a host or slash the
// canonical form folds) keeps it: the target is that very document.
func (r *jobRun) redirect(ctx context.Context, base *url.URL, it store.FrontierItem, prev *store.Document, location string) outcome {
	c, ok := r.admit(ctx, base, location)
	if !ok {
		if prev != nil {
			return r.e.removeStored(ctx, prev, SkipRedirectOutOfScope, fmt.Sprintf("the URL now redirects to %s, outside the crawl's scope", location))
		}
		return outcome{state: store.FrontierSkipped, reason: SkipRedirectOutOfScope, err: fmt.Errorf("redirect to %s is outside the crawl's scope", location)}
	}
	if err := r.enqueue(ctx, []store.FrontierURL{{URL: c, Depth: it.Depth}}); err != nil {
		if ctx.Err() != nil {
			return outcome{}
		}
		return outcome{state: store.FrontierFailed, reason: FailStore, err: err}
	}
	if prev != nil && c != it.URL {
		return r.e.removeStored(ctx, prev, SkipRedirect, "the URL now redirects to "+c)
	}
	return outcome{state: store.FrontierSkipped, reason: SkipRedirect}
}

// enqueue adds URLs to the frontier (store.EnqueueURLs retries deadlocks of
// workers inserting overlapping links).
func (r *jobRun) enqueue(ctx context.Context, urls []store.FrontierURL) error {
	return r.front.enqueue(ctx, urls)
}

// claim takes the next URL for a worker and marks it in flight. The reclaim
// loop never releases a URL between its claim and its registration (claimMu).
func (r *jobRun) claim(ctx context.Context) ([]store.FrontierItem, error) {
	r.claimMu.RLock()
	defer r.claimMu.RUnlock()
	items, err := r.front.claimNext(ctx)
	if err != nil {
		return nil, err
	}
	r.inflightMu.Lock()
	for _, it := range items {
		r.inflight[it.URLHash] = struct{}{}
	}
	r.inflightMu.Unlock()
	return items, nil
}

// release forgets a URL the worker is done with (completed or given up).
func (r *jobRun) release(it store.FrontierItem) {
	r.inflightMu.Lock()
	delete(r.inflight, it.URLHash)
	r.inflightMu.Unlock()
}

// reclaimLoop periodically returns to the queue the job's claims that no
// worker holds: expired claims of any owner (a crawler that died) and this
// owner's claims that are not in flight (their completion was lost).
func (r *jobRun) reclaimLoop(ctx context.Context) {
	t := time.NewTicker(r.e.cfg.Reclaim)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := r.reclaim(ctx); err != nil && ctx.Err() == nil {
			r.e.log.Debug("reclaim claims", "job", r.job.ID, "err", err)
		}
	}
}

// Each step counts what it returned as soon as it succeeds: when releasing the
// lost claims fails (a deadlock under load), the expired ones already went back.
func (r *jobRun) reclaim(ctx context.Context) error {
	expired, err := r.front.requeueExpired(ctx)
	if err != nil {
		return err
	}
	if expired > 0 {
		r.log("claims returned to the queue", "expired", expired)
		r.e.m.reclaimed.Add(float64(expired))
	}
	r.claimMu.Lock()
	r.inflightMu.Lock()
	keep := make([]string, 0, len(r.inflight))
	for h := range r.inflight {
		keep = append(keep, h)
	}
	r.inflightMu.Unlock()
	lost, err := r.front.releaseLost(ctx, keep)
	r.claimMu.Unlock()
	if err != nil {
		return err
	}
	if lost > 0 {
		r.log("claims returned to the queue", "lost", lost)
		r.e.m.reclaimed.Add(float64(lost))
	}
	return nil
}

// complete moves a claimed URL to its final state (or back to the queue),
// waiting out a MariaDB outage. The run's context may end meanwhile: the
// claim is then released when the run ends, or by the next owner.
func (r *jobRun) complete(ctx context.Context, it store.FrontierItem, state store.FrontierState, reason string) error {
	tries := 0
	err := r.retryStore(ctx, "complete url", func(ctx context.Context) error {
		tries++
		// A page handled while the run was being stopped is still completed.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		return r.front.complete(cctx, it.URLHash, state, reason)
	})
	if errors.Is(err, store.ErrLeaseLost) && tries > 1 {
		// An earlier try committed but its answer was lost with the connection.
		return nil
	}
	return err
}
