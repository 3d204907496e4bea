package projection

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/kgsearch/kgsearch/pkg/graph"
)

// Source is where the projection reads the graph (*graph.Store).
type Source interface {
	Snapshot(ctx context.Context) (graph.State, error)
	FeedHead(ctx context.Context) (head, pruned int64, err error)
	Changes(ctx context.Context, after int64, limit int) (graph.Feed, error)
}

// Follower keeps a Projection current from a Source.
type Follower struct {
	P   *Projection
	Src Source
	Log *slog.Logger
	// Every is the polling interval of the feed (0: 200ms).
	Every time.Duration
	// Batch is how many changes one read applies at most (0: 500).
	Batch int
	// MinReload is the shortest time between two snapshot loads after gaps in
	// the feed: while writers that keep no feed (an older version) are running,
	// every write is a gap, and the projection stays that stale rather than
	// reloading the whole graph after each.
	MinReload time.Duration
	// Now is the clock (nil: time.Now).
	Now func() time.Time

	mu sync.Mutex // one sync at a time
	// redo is the snapshot's sequence number until the change it names has been
	// re-read (Snapshot may have seen that write in part).
	redo int64
	// Reloads counts the snapshots loaded (the first one included).
	reloads    int
	lastReload time.Time
	stale      string // why a snapshot load is due ("" when none is)
}

func (f *Follower) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

// Reloads counts the snapshots loaded so far.
func (f *Follower) Reloads() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reloads
}

// Sync brings the projection up to the feed's head: it loads a snapshot first if
// there is none, then applies the changes after it. It is what a kg process calls
// after its own write, so that the write is visible to its next query.
//
// A gap in the feed (changes pruned before they were read, or writes by a
// version that keeps no feed) means writes the projection cannot replay: the
// changes that are in the feed are applied all the same, the projection is
// marked stale, and a snapshot is loaded as soon as MinReload has passed since
// the last one.
func (f *Follower) Sync(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.P.Loaded() {
		return f.reload(ctx, "initial load")
	}
	if f.stale != "" && f.mayReload() {
		return f.reload(ctx, f.stale)
	}
	for {
		after := f.P.Seq()
		from := after
		if f.redo > 0 {
			from = f.redo - 1
		}
		head, pruned, err := f.Src.FeedHead(ctx)
		if err != nil {
			return err
		}
		if head <= after && f.redo == 0 {
			return nil
		}
		if pruned > after {
			f.stale = fmt.Sprintf("changes up to %d were pruned, the projection was at %d", pruned, after)
		}
		feed, err := f.Src.Changes(ctx, from, f.batch())
		if err != nil {
			return err
		}
		last, ok := f.contiguous(feed, after)
		if !ok && f.stale == "" {
			f.stale = fmt.Sprintf("the change feed has a gap after %d (head %d)", after, feed.Head)
		}
		f.P.Apply(feed.State, last)
		f.redo = 0
		if f.stale != "" && f.mayReload() {
			return f.reload(ctx, f.stale)
		}
		if last >= feed.Head {
			return nil
		}
	}
}

// Stale says why the projection misses writes it could not replay ("" when it
// misses none); a snapshot load clears it.
func (f *Follower) Stale() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stale
}

func (f *Follower) mayReload() bool {
	return f.reloads == 0 || f.now().Sub(f.lastReload) >= f.MinReload
}

// contiguous returns the position the changes of feed bring the projection to
// (their last one when the page is full, the head otherwise), and whether they
// hold every write after `after`. A change at or before `after` (the snapshot's
// own write, re-read) is allowed.
func (f *Follower) contiguous(feed graph.Feed, after int64) (int64, bool) {
	want, ok := after+1, true
	for _, c := range feed.Changes {
		if c.Seq < want {
			continue
		}
		if c.Seq != want {
			ok = false
		}
		want = c.Seq + 1
	}
	if len(feed.Changes) == f.batch() {
		return max(want-1, after), ok
	}
	if want-1 < feed.Head {
		ok = false // writes without a change: an older writer, or pruned meanwhile
	}
	return max(feed.Head, after), ok
}

func (f *Follower) batch() int {
	if f.Batch > 0 {
		return f.Batch
	}
	return 500
}

func (f *Follower) reload(ctx context.Context, why string) error {
	start := time.Now()
	st, err := f.Src.Snapshot(ctx)
	if err != nil {
		return err
	}
	f.P.Load(st)
	st = graph.State{}
	// The snapshot's rows and the replaced projection are garbage now, often as
	// large as the projection: hand the memory back rather than keep it resident.
	debug.FreeOSMemory()
	f.redo, f.stale = f.P.Seq(), ""
	f.reloads++
	f.lastReload = f.now()
	if f.Log != nil {
		sz := f.P.Size()
		f.Log.Info("graph projection loaded", "reason", why, "seq", st.Seq, "entities", sz.Entities,
			"chunks", sz.Chunks, "postings", sz.Postings, "relations", sz.Relations, "took_ms", time.Since(start).Milliseconds())
	}
	return nil
}

// Run syncs every Every until ctx ends. Failures (Neo4j down) are logged and
// retried with back-off up to 30 s; the projection keeps answering meanwhile.
func (f *Follower) Run(ctx context.Context) error {
	every := f.Every
	if every <= 0 {
		every = 200 * time.Millisecond
	}
	wait, failing := every, false
	for {
		err := f.Sync(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			if !failing && f.Log != nil {
				f.Log.Warn("graph projection cannot follow the change feed; answering from memory, retrying", "seq", f.P.Seq(), "err", err)
			}
			failing = true
			wait = min(2*wait, 30*time.Second)
		default:
			if failing && f.Log != nil {
				f.Log.Info("graph projection follows the change feed again", "seq", f.P.Seq())
			}
			failing, wait = false, every
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}
