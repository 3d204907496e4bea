package chunkcache

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/kgsearch/kgsearch/pkg/store"
)

// fakeSource is a table of chunk rows that counts the ids it is asked for; when
// block is set, a read waits on it after taking its snapshot of the rows.
type fakeSource struct {
	mu    sync.Mutex
	rows  map[int64]store.Chunk
	asked []int64
	block chan struct{}
	read  chan struct{} // closed when a blocked read has its snapshot
	err   error
}

func (f *fakeSource) ChunksByIDs(_ context.Context, ids []int64) ([]store.Chunk, error) {
	f.mu.Lock()
	f.asked = append(f.asked, ids...)
	var out []store.Chunk
	for _, id := range ids {
		if c, ok := f.rows[id]; ok {
			out = append(out, c)
		}
	}
	block, read, err := f.block, f.read, f.err
	f.mu.Unlock()
	if block != nil {
		close(read)
		<-block
	}
	return out, err
}

func (f *fakeSource) set(id int64, doc, text string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.rows == nil {
		f.rows = map[int64]store.Chunk{}
	}
	if text == "" {
		delete(f.rows, id)
		return
	}
	f.rows[id] = store.Chunk{ID: id, DocumentID: doc, Text: text}
}

func (f *fakeSource) takeAsked() []int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	a := f.asked
	f.asked = nil
	return a
}

func texts(t *testing.T, c *Cache, ids ...int64) []string {
	t.Helper()
	got, err := c.ChunksByIDs(context.Background(), ids)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, ch := range got {
		out = append(out, ch.Text)
	}
	return out
}

func TestServesFromMemoryInOrder(t *testing.T) {
	src := &fakeSource{}
	src.set(1, "a", "one")
	src.set(2, "a", "two")
	src.set(3, "b", "three")
	c := New(src, 10)
	if got := texts(t, c, 3, 1, 9, 3); !slices.Equal(got, []string{"three", "one"}) {
		t.Errorf("first read: %v, want three one (unknown 9 left out, repeated 3 once)", got)
	}
	if a := src.takeAsked(); !slices.Equal(a, []int64{3, 1, 9}) {
		t.Errorf("source asked for %v, want 3 1 9", a)
	}
	if got := texts(t, c, 2, 1, 3); !slices.Equal(got, []string{"two", "one", "three"}) {
		t.Errorf("second read: %v", got)
	}
	if a := src.takeAsked(); !slices.Equal(a, []int64{2}) {
		t.Errorf("source asked for %v, want only 2 (1 and 3 are cached)", a)
	}
	if rows, hits, misses := c.Stats(); rows != 3 || hits != 2 || misses != 4 {
		t.Errorf("stats: %d rows, %d hits, %d misses; want 3, 2, 4", rows, hits, misses)
	}
}

func TestForgetAndClear(t *testing.T) {
	src := &fakeSource{}
	src.set(1, "a", "old a1")
	src.set(2, "a", "old a2")
	src.set(3, "b", "b3")
	c := New(src, 10)
	texts(t, c, 1, 2, 3)
	// Document a is updated: same chunk id 1 (ids are document + ordinal), new
	// text; its chunk 2 is gone.
	src.set(1, "a", "new a1")
	src.set(2, "a", "")
	if got := texts(t, c, 1, 2, 3); !slices.Equal(got, []string{"old a1", "old a2", "b3"}) {
		t.Fatalf("before the change is read: %v (the cache serves what it holds)", got)
	}
	c.Forget("a")
	src.takeAsked()
	if got := texts(t, c, 1, 2, 3); !slices.Equal(got, []string{"new a1", "b3"}) {
		t.Errorf("after Forget(a): %v, want new a1 b3", got)
	}
	if a := src.takeAsked(); !slices.Equal(a, []int64{1, 2}) {
		t.Errorf("source asked for %v, want 1 2 (b's row stays cached)", a)
	}
	src.set(3, "b", "new b3")
	c.Clear()
	if got := texts(t, c, 3); !slices.Equal(got, []string{"new b3"}) {
		t.Errorf("after Clear: %v", got)
	}
}

// TestReadRacingAChangeIsNotKept: rows read before a change and returned after the
// change was forgotten must not enter the cache.
func TestReadRacingAChangeIsNotKept(t *testing.T) {
	src := &fakeSource{}
	src.set(1, "a", "old")
	c := New(src, 10)
	block, read := make(chan struct{}), make(chan struct{})
	src.block, src.read = block, read
	done := make(chan []string)
	go func() { done <- texts(t, c, 1) }()
	<-read // the read has the old row
	src.mu.Lock()
	src.block, src.read = nil, nil
	src.mu.Unlock()
	src.set(1, "a", "new") // the write commits
	c.Forget("a")          // the indexer reads its change
	close(block)           // the racing read returns
	if got := <-done; !slices.Equal(got, []string{"old"}) {
		t.Fatalf("racing read: %v, want the old row it read", got)
	}
	if got := texts(t, c, 1); !slices.Equal(got, []string{"new"}) {
		t.Errorf("after the race: %v, want new (the old row must not have been kept)", got)
	}
}

func TestEvictsLeastRecentlyUsed(t *testing.T) {
	src := &fakeSource{}
	for id := int64(1); id <= 5; id++ {
		src.set(id, "d", "t")
	}
	c := New(src, 3)
	texts(t, c, 1, 2, 3)
	texts(t, c, 1) // 2 is now the least recently used
	texts(t, c, 4)
	src.takeAsked()
	texts(t, c, 1, 3, 4)
	if a := src.takeAsked(); len(a) != 0 {
		t.Errorf("source asked for %v, want nothing (1, 3, 4 kept)", a)
	}
	texts(t, c, 2)
	if a := src.takeAsked(); !slices.Equal(a, []int64{2}) {
		t.Errorf("source asked for %v, want 2 (evicted)", a)
	}
	if rows, _, _ := c.Stats(); rows != 3 {
		t.Errorf("%d rows held, want at most 3", rows)
	}
}

func TestSourceErrorKeepsWhatItHas(t *testing.T) {
	src := &fakeSource{err: errors.New("connection reset")}
	src.set(1, "d", "one")
	src.set(2, "d", "two")
	c := New(src, 10)
	got, err := c.ChunksByIDs(context.Background(), []int64{1, 2})
	if err == nil || len(got) != 2 {
		t.Errorf("got %d rows, %v; want the rows read and the error", len(got), err)
	}
}
