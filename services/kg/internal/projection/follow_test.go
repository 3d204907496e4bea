package projection

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kgsearch/kgsearch/pkg/graph"
)

// fakeSource is a feed we script: a graph state per sequence number.
type fakeSource struct {
	head, pruned int64
	snap         graph.State
	changes      []graph.Change
	state        graph.State // returned with any page of changes
	down         bool
	snapshots    int
}

var errDown = errors.New("neo4j unavailable")

func (s *fakeSource) Snapshot(context.Context) (graph.State, error) {
	if s.down {
		return graph.State{}, errDown
	}
	s.snapshots++
	return s.snap, nil
}

func (s *fakeSource) FeedHead(context.Context) (int64, int64, error) {
	if s.down {
		return 0, 0, errDown
	}
	return s.head, s.pruned, nil
}

func (s *fakeSource) Changes(_ context.Context, after int64, limit int) (graph.Feed, error) {
	if s.down {
		return graph.Feed{}, errDown
	}
	f := graph.Feed{Head: s.head, Pruned: s.pruned, State: s.state}
	for _, c := range s.changes {
		if c.Seq > after && len(f.Changes) < limit {
			f.Changes = append(f.Changes, c)
		}
	}
	return f, nil
}

func doc(id string, chunks ...string) graph.DocState {
	d := graph.DocState{ID: id, Ingested: true}
	for _, c := range chunks {
		d.Chunks = append(d.Chunks, graph.ChunkState{ID: c, Mentions: []graph.ChunkMention{{EntityID: "python", Count: 1, Confidence: 1}}})
	}
	return d
}

var python = graph.EntityState{EntityStats: graph.EntityStats{EntityRef: graph.EntityRef{ID: "python", Name: "Python", Type: "language"}, ChunkFreq: 1}, NameLower: "python"}

func matched(t *testing.T, p *Projection) []string {
	t.Helper()
	res, err := p.MatchEntities(context.Background(), []string{"python"}, 10)
	if err != nil {
		t.Fatalf("match: %v", err)
	}
	var ids []string
	for _, c := range res.Chunks {
		ids = append(ids, c.ChunkID)
	}
	return ids
}

func TestFollowerAppliesChangesAndSurvivesOutage(t *testing.T) {
	ctx := context.Background()
	src := &fakeSource{head: 5, snap: graph.State{Seq: 5, Docs: []graph.DocState{doc("d1", "c1")}, Entities: []graph.EntityState{python}}}
	f := &Follower{P: New(), Src: src}
	if _, err := f.P.MatchEntities(ctx, []string{"python"}, 10); !errors.Is(err, ErrNotLoaded) {
		t.Fatalf("match before the first load: got %v, want ErrNotLoaded", err)
	}
	if err := f.Sync(ctx); err != nil {
		t.Fatalf("first sync: %v", err)
	}
	if got := matched(t, f.P); len(got) != 1 || got[0] != "c1" {
		t.Fatalf("after the snapshot: got %v, want [c1]", got)
	}

	// Change 6 replaces d1 with two chunks; the snapshot's own change 5 is absent
	// (written by an older version): that is no gap.
	src.head = 6
	src.changes = []graph.Change{{Seq: 6, Op: graph.ChangeUpsert, Doc: "d1", Entities: []string{"python"}}}
	src.state = graph.State{Docs: []graph.DocState{doc("d1", "c1", "c2")}, Entities: []graph.EntityState{python}}
	if err := f.Sync(ctx); err != nil {
		t.Fatalf("sync change 6: %v", err)
	}
	if got := matched(t, f.P); len(got) != 2 || f.P.Seq() != 6 {
		t.Fatalf("after change 6: got %v at seq %d, want 2 chunks at 6", got, f.P.Seq())
	}

	// Neo4j goes away: the projection keeps answering, Sync reports the error.
	src.down = true
	if err := f.Sync(ctx); !errors.Is(err, errDown) {
		t.Fatalf("sync while down: got %v, want the source's error", err)
	}
	if got := matched(t, f.P); len(got) != 2 {
		t.Fatalf("while down: got %v, want the 2 chunks still", got)
	}

	// Back, with change 7 (delete d1): resumed from 6, no snapshot.
	src.down = false
	src.head = 7
	src.changes = append(src.changes, graph.Change{Seq: 7, Op: graph.ChangeDelete, Doc: "d1", Entities: []string{"python"}})
	src.state = graph.State{Docs: []graph.DocState{{ID: "d1"}}, Gone: []string{"python"}}
	if err := f.Sync(ctx); err != nil {
		t.Fatalf("sync after the outage: %v", err)
	}
	if got := matched(t, f.P); len(got) != 0 || f.P.Seq() != 7 || src.snapshots != 1 {
		t.Fatalf("after change 7: got %v at seq %d with %d snapshots, want none at 7 with 1", got, f.P.Seq(), src.snapshots)
	}
	if sz := f.P.Size(); sz != (Size{}) {
		t.Errorf("after deleting the only document: size %+v, want empty", sz)
	}
}

func TestFollowerReloadsOnGap(t *testing.T) {
	ctx := context.Background()
	src := &fakeSource{head: 5, snap: graph.State{Seq: 5, Docs: []graph.DocState{doc("d1", "c1")}, Entities: []graph.EntityState{python}}}
	f := &Follower{P: New(), Src: src}
	if err := f.Sync(ctx); err != nil {
		t.Fatalf("first sync: %v", err)
	}
	for _, tc := range []struct {
		name         string
		head, pruned int64
		changes      []graph.Change
	}{
		{"write without a change", 8, 0, []graph.Change{{Seq: 6, Doc: "d1"}, {Seq: 7, Doc: "d1"}}},
		{"hole in the feed", 8, 0, []graph.Change{{Seq: 6, Doc: "d1"}, {Seq: 8, Doc: "d1"}}},
		{"pruned", 9, 8, []graph.Change{{Seq: 9, Doc: "d1"}}},
	} {
		name := tc.name
		before := src.snapshots
		src.head, src.pruned, src.changes = tc.head, tc.pruned, tc.changes
		src.snap = graph.State{Seq: tc.head, Docs: []graph.DocState{doc("d1", "c1", "c2", "c3")}, Entities: []graph.EntityState{python}}
		src.state = graph.State{}
		if err := f.Sync(ctx); err != nil {
			t.Fatalf("%s: sync: %v", name, err)
		}
		if src.snapshots != before+1 || f.P.Seq() != tc.head || len(matched(t, f.P)) != 3 {
			t.Errorf("%s: %d snapshots (want %d), seq %d (want %d), %d chunks (want 3)", name,
				src.snapshots, before+1, f.P.Seq(), tc.head, len(matched(t, f.P)))
		}
		// Back to the projection at 5 with one chunk.
		f.P.Load(graph.State{Seq: 5, Docs: []graph.DocState{doc("d1", "c1")}, Entities: []graph.EntityState{python}})
		f.redo = 0
	}
}

func TestFollowerReloadsAtMostEveryMinReload(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	src := &fakeSource{head: 5, snap: graph.State{Seq: 5, Docs: []graph.DocState{doc("d1", "c1")}, Entities: []graph.EntityState{python}}}
	f := &Follower{P: New(), Src: src, MinReload: 30 * time.Second, Now: func() time.Time { return now }}
	if err := f.Sync(ctx); err != nil {
		t.Fatalf("first sync: %v", err)
	}
	// Writes without changes (an older writer): a gap, but the last load is recent.
	src.head = 7
	src.snap = graph.State{Seq: 7, Docs: []graph.DocState{doc("d1", "c1", "c2")}, Entities: []graph.EntityState{python}}
	now = now.Add(10 * time.Second)
	if err := f.Sync(ctx); err != nil || src.snapshots != 1 || f.Stale() == "" {
		t.Fatalf("gap 10 s after a load: %d snapshots, stale %q (%v), want 1 and stale", src.snapshots, f.Stale(), err)
	}
	now = now.Add(25 * time.Second)
	if err := f.Sync(ctx); err != nil || src.snapshots != 2 || f.P.Seq() != 7 || len(matched(t, f.P)) != 2 || f.Stale() != "" {
		t.Fatalf("gap 35 s after a load: %d snapshots at seq %d (%v), want 2 at 7, not stale", src.snapshots, f.P.Seq(), err)
	}
}

func TestFollowerAppliesChangesAcrossAGap(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	src := &fakeSource{head: 5, snap: graph.State{Seq: 5, Docs: []graph.DocState{doc("d1", "c1")}, Entities: []graph.EntityState{python}}}
	f := &Follower{P: New(), Src: src, MinReload: time.Minute, Now: func() time.Time { return now }}
	if err := f.Sync(ctx); err != nil {
		t.Fatalf("first sync: %v", err)
	}
	// 6 was written without a change; 7 adds d2. d2 is served at once, the gap
	// waits for the next allowed load.
	src.head = 7
	src.changes = []graph.Change{{Seq: 7, Op: graph.ChangeUpsert, Doc: "d2", Entities: []string{"python"}}}
	src.state = graph.State{Docs: []graph.DocState{doc("d2", "c9")}, Entities: []graph.EntityState{python}}
	if err := f.Sync(ctx); err != nil {
		t.Fatalf("sync across the gap: %v", err)
	}
	if got := matched(t, f.P); len(got) != 2 || f.P.Seq() != 7 || f.Stale() == "" || src.snapshots != 1 {
		t.Fatalf("across the gap: chunks %v at seq %d, stale %q, %d snapshots; want c1 and c9 at 7, stale, 1", got, f.P.Seq(), f.Stale(), src.snapshots)
	}
}
