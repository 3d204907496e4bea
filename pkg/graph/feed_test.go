package graph

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// myChanges reads the feed entries of the documents with the test's prefix.
func myChanges(t *testing.T, s *Store, prefix string) []Change {
	t.Helper()
	res, err := neo4j.ExecuteQuery(context.Background(), s.driver, `
		MATCH (c:GraphChange) WHERE c.doc STARTS WITH $p
		RETURN c.seq AS seq, c.op AS op, c.doc AS doc, c.entities AS entities ORDER BY c.seq`,
		map[string]any{"p": prefix}, neo4j.EagerResultTransformer)
	if err != nil {
		t.Fatalf("read changes: %v", err)
	}
	var out []Change
	for _, r := range res.Records {
		out = append(out, Change{Seq: i64(r, "seq"), Op: str(r, "op"), Doc: str(r, "doc"), Entities: stringList(r, "entities")})
	}
	return out
}

func TestFeedRecordsEveryWrite(t *testing.T) {
	s, prefix := newTestStore(t)
	f := fixture{prefix}
	ctx := context.Background()
	head0, _, err := s.FeedHead(ctx)
	if err != nil {
		t.Fatalf("feed head: %v", err)
	}
	doc := f.postgresDoc()
	if _, err := s.UpsertDocument(ctx, doc); err != nil {
		t.Fatalf("upsert: %v", err)
	}
	if err := s.DeleteDocument(ctx, doc.ID); err != nil {
		t.Fatalf("delete: %v", err)
	}
	got := myChanges(t, s, prefix)
	if len(got) != 2 || got[0].Op != ChangeUpsert || got[1].Op != ChangeDelete || got[0].Seq <= head0 || got[1].Seq <= got[0].Seq {
		t.Fatalf("changes: got %+v, want an upsert then a delete after %d", got, head0)
	}
	want := f.ids("postgresql", "wal", "sqlite", "fsync")
	for _, c := range got {
		if !sameSet(c.Entities, want) {
			t.Errorf("%s change names entities %v, want %v", c.Op, c.Entities, want)
		}
	}
	// Changes returns them (among others' writes) with the state as of now: the
	// document is gone, so are its entities.
	feed, err := s.Changes(ctx, got[0].Seq-1, 1000)
	if err != nil {
		t.Fatalf("changes: %v", err)
	}
	if len(feed.Changes) == 0 || feed.Changes[0].Seq != got[0].Seq || feed.Head < got[1].Seq {
		t.Fatalf("feed after %d: head %d, changes %+v", got[0].Seq-1, feed.Head, feed.Changes)
	}
	for _, d := range feed.State.Docs {
		if d.ID == doc.ID && (d.Ingested || len(d.Chunks) > 0 || len(d.Relations) > 0) {
			t.Errorf("state of the deleted document: %+v", d)
		}
	}
	for _, id := range want {
		if !slices.Contains(feed.State.Gone, id) {
			t.Errorf("entity %s of the deleted document not listed as gone: %v", id, feed.State.Gone)
		}
	}
}

func sameSet(a, b []string) bool {
	return len(a) == len(b) && !slices.ContainsFunc(a, func(x string) bool { return !slices.Contains(b, x) })
}

// TestFeedUnderConcurrentWritesAndReads: concurrent writers and a follower's
// locked reads must neither lose nor repeat a sequence number (a lost update of
// GraphLock.seq shows as a write refused by the unique constraint on the feed).
func TestFeedUnderConcurrentWritesAndReads(t *testing.T) {
	s, prefix := newTestStore(t)
	f := fixture{prefix}
	ctx := context.Background()
	head0, _, err := s.FeedHead(ctx)
	if err != nil {
		t.Fatalf("feed head: %v", err)
	}
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := s.Changes(ctx, head0, 50); err != nil {
					t.Errorf("changes: %v", err)
					return
				}
			}
		}()
	}
	const writers, docs = 6, 4
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range docs {
				d := f.postgresDoc()
				d.ID = f.id(fmt.Sprintf("doc/w%d-%d", w, i))
				for j := range d.Chunks {
					d.Chunks[j].ID = d.ID + fmt.Sprintf("#%d", j)
				}
				for j := range d.Mentions {
					d.Mentions[j].ChunkID = d.ID + d.Mentions[j].ChunkID[len(f.id("doc/pg")):]
				}
				for j := range d.Relations {
					for k := range d.Relations[j].Evidence {
						d.Relations[j].Evidence[k] = d.ID + d.Relations[j].Evidence[k][len(f.id("doc/pg")):]
					}
				}
				if _, err := s.UpsertDocument(ctx, d); err != nil {
					t.Errorf("upsert %s: %v", d.ID, err)
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	got := myChanges(t, s, prefix)
	seqs := map[int64]bool{}
	for _, c := range got {
		seqs[c.Seq] = true
	}
	if len(got) != writers*docs || len(seqs) != len(got) {
		t.Errorf("feed: %d changes with %d distinct sequence numbers, want %d", len(got), len(seqs), writers*docs)
	}
	t.Cleanup(func() {
		for w := range writers {
			for i := range docs {
				_ = s.DeleteDocument(context.Background(), f.id(fmt.Sprintf("doc/w%d-%d", w, i)))
			}
		}
	})
}

func TestPruneChanges(t *testing.T) {
	s, prefix := newTestStore(t)
	f := fixture{prefix}
	ctx := context.Background()
	if _, err := s.UpsertDocument(ctx, f.postgresDoc()); err != nil {
		t.Fatalf("upsert: %v", err)
	}
	t.Cleanup(func() { _ = s.DeleteDocument(context.Background(), f.id("doc/pg")) })
	_, before, err := s.FeedHead(ctx)
	if err != nil {
		t.Fatalf("feed head: %v", err)
	}
	// Removes the oldest change only (other tests' followers may be reading).
	n, err := s.PruneChanges(ctx, time.Now().Add(time.Minute), 1)
	if err != nil || n != 1 {
		t.Fatalf("prune: removed %d, %v; want 1", n, err)
	}
	_, after, err := s.FeedHead(ctx)
	if err != nil || after <= before {
		t.Fatalf("pruned mark: %d before, %d after (%v); want it to grow", before, after, err)
	}
	feed, err := s.Changes(ctx, after-1, 1)
	if err != nil {
		t.Fatalf("changes: %v", err)
	}
	if len(feed.Changes) == 1 && feed.Changes[0].Seq <= after {
		t.Errorf("change %d is still in the feed after pruning up to %d", feed.Changes[0].Seq, after)
	}
	if n, err := s.PruneChanges(ctx, time.Now().Add(-24*time.Hour), 1000); err != nil || n != 0 {
		t.Errorf("prune of changes older than a day: removed %d, %v; want 0", n, err)
	}
}
