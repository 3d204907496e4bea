package engine

import (
	"context"
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
