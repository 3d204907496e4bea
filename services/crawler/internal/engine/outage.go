package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kgsearch/kgsearch/pkg/store"
)

// How a job rides out an outage of MariaDB (issue 12): no worker exits on a
// transient error, it waits with a growing pause and tries again; a claim
// whose work failed goes back to the queue as soon as the database answers;
// claims that nobody holds any more (their completion was lost, or their
// owner died) are returned to the queue by the job's own reclaim loop; and
// while the job cannot make progress it says so (a "stalled" event with the
// reason), and says so again when it resumes.

// Backoff bounds of a worker waiting for MariaDB.
const (
	outageMinWait = 100 * time.Millisecond
	outageMaxWait = 5 * time.Second
)

// maxOutageAttempts bounds the claims of a URL whose store step failed
// because MariaDB was unreachable: such failures are not the page's fault and
// do not count against maxAttempts, but a URL must not loop forever.
const maxOutageAttempts = 20

// backoff doubles a wait between outageMinWait and outageMaxWait.
type backoff struct{ d time.Duration }

func (b *backoff) next() time.Duration {
	b.d = min(max(2*b.d, outageMinWait), outageMaxWait)
	return b.d
}

func (b *backoff) reset() { b.d = 0 }

// stalled records that the job cannot make progress (the first report of an
// outage logs it, keeps it in the job's errors and sends a "stalled" event;
// later reports of the same outage only wait).
func (r *jobRun) stalled(what string, err error) {
	r.stallMu.Lock()
	first := r.stall == ""
	if first {
		r.stall = fmt.Sprintf("%s: %v", what, err)
	}
	reason := r.stall
	r.stallMu.Unlock()
	if !first {
		return
	}
	r.e.m.stalls.Inc()
	r.e.log.Warn("crawl job stalled", "job", r.job.ID, "what", what, "err", err)
	r.errs.add("stalled: %s", reason)
	r.e.hub.publish(Event{Type: EventStalled, JobID: r.job.ID, At: time.Now().UTC(), Reason: StallDatabase,
		Error: "waiting for " + what + "; the job continues when it answers"})
}

// resumed ends a stall (a database call succeeded again).
func (r *jobRun) resumed() {
	r.stallMu.Lock()
	was := r.stall
	r.stall = ""
	r.stallMu.Unlock()
	if was == "" {
		return
	}
	r.log("crawl job resumed", "after", was)
	r.e.hub.publish(Event{Type: EventResumed, JobID: r.job.ID, At: time.Now().UTC()})
}

// retryStore runs op until it succeeds, fails for a reason other than an
// unreachable database, or ctx ends. While MariaDB is unreachable the job is
// stalled.
func (r *jobRun) retryStore(ctx context.Context, what string, op func(context.Context) error) error {
	var b backoff
	for {
		err := op(ctx)
		if err == nil || !store.Unavailable(err) || ctx.Err() != nil {
			if err == nil {
				r.resumed()
			}
			return err
		}
		r.stalled("MariaDB ("+what+")", err)
		sleepCtx(ctx, b.next())
	}
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
		return r.e.st.CompleteURL(cctx, r.job.ID, it.URLHash, r.e.cfg.Owner, state, reason)
	})
	if errors.Is(err, store.ErrLeaseLost) && tries > 1 {
		// An earlier try committed but its answer was lost with the connection.
		return nil
	}
	return err
}

// claim takes the next URL for a worker and marks it in flight. The reclaim
// loop never releases a URL between its claim and its registration (claimMu).
func (r *jobRun) claim(ctx context.Context) ([]store.FrontierItem, error) {
	r.claimMu.RLock()
	defer r.claimMu.RUnlock()
	items, err := r.e.st.ClaimURLs(ctx, store.ClaimRequest{
		JobID: r.job.ID, Owner: r.e.cfg.Owner, N: 1, Lease: r.e.cfg.URLLease, Budget: r.spec.MaxPages,
	})
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

func (r *jobRun) reclaim(ctx context.Context) error {
	expired, err := r.e.st.RequeueExpired(ctx, r.job.ID)
	if err != nil {
		return err
	}
	r.claimMu.Lock()
	r.inflightMu.Lock()
	keep := make([]string, 0, len(r.inflight))
	for h := range r.inflight {
		keep = append(keep, h)
	}
	r.inflightMu.Unlock()
	lost, err := r.e.st.ReleaseClaimsExcept(ctx, r.job.ID, r.e.cfg.Owner, keep)
	r.claimMu.Unlock()
	if err != nil {
		return err
	}
	if expired+lost > 0 {
		r.log("claims returned to the queue", "expired", expired, "lost", lost)
		r.e.m.reclaimed.Add(float64(expired + lost))
	}
	return nil
}
