package indexer_test

import (
	"context"
	"errors"
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kgsearch/kgsearch/pkg/store"
	"github.com/kgsearch/kgsearch/services/search/internal/bm25"
	"github.com/kgsearch/kgsearch/services/search/internal/indexer"
	"github.com/kgsearch/kgsearch/services/search/internal/searchtest"
)

func doc(url, title string, texts ...string) searchtest.Doc {
	d := searchtest.Doc{URL: url, Title: title, Tags: []string{"t"}}
	for _, s := range texts {
		d.Chunks = append(d.Chunks, searchtest.Chunk{Heading: "H", Text: s})
	}
	return d
}

func hits(t *testing.T, ix *bm25.Index, q string) []string {
	t.Helper()
	hs, err := ix.Search(context.Background(), q, 100, bm25.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, h := range hs {
		out = append(out, h.URL)
	}
	return out
}

func TestSyncAppliesInsertsUpdatesAndDeletes(t *testing.T) {
	e := searchtest.New(t, searchtest.Options{NoKG: true})
	ctx := context.Background()
	a := doc("https://a.example/x", "Alpha page", "zebra crossing rules", "second chunk about giraffes")
	a.ContentHash = "hash-1"
	b := doc("https://b.example/y", "Beta page", "zebra stripes")
	e.Add(t, a, b)

	st := e.Indexer.Status()
	if st.IndexLag != 0 || st.StoreSeq != 2 || st.IndexWatermark != 2 || st.IndexedChunks != 3 || !st.CaughtUp {
		t.Errorf("after two inserts: got %+v, want seq 2, watermark 2, lag 0, 3 chunks, caught up", st)
	}
	got := hits(t, e.Index, "zebra")
	sort.Strings(got)
	if diff := cmp.Diff([]string{"https://a.example/x", "https://b.example/y"}, got); diff != "" {
		t.Errorf("zebra (-want +got):\n%s", diff)
	}

	// Update a: one chunk now, without zebra; its second chunk must disappear.
	a.Title = "Alpha renamed"
	a.ContentHash = "hash-2" // the recrawled text: search's dedup key must follow it
	a.Chunks = []searchtest.Chunk{{Text: "only okapis now"}}
	e.Add(t, a)
	if diff := cmp.Diff([]string{"https://b.example/y"}, hits(t, e.Index, "zebra")); diff != "" {
		t.Errorf("zebra after update (-want +got):\n%s", diff)
	}
	if got := hits(t, e.Index, "giraffes"); len(got) != 0 {
		t.Errorf("stale chunk still indexed: %v", got)
	}
	if d, ok := e.Indexer.Doc(store.DocumentID(a.URL)); !ok || d.Title != "Alpha renamed" || d.ContentHash != "hash-2" {
		t.Errorf("document table: got %+v, %v", d, ok)
	}

	// Delete b.
	if _, err := e.Store.DeleteDocument(ctx, store.DocumentID(b.URL), nil); err != nil {
		t.Fatal(err)
	}
	if lag := e.Indexer.Status(); lag.IndexLag != 0 {
		// Status only learns the store seq on Sync; before it the lag is unknown.
		t.Logf("status before sync: %+v", lag)
	}
	e.Sync(t)
	if got := hits(t, e.Index, "zebra"); len(got) != 0 {
		t.Errorf("deleted document still found: %v", got)
	}
	if _, ok := e.Indexer.Doc(store.DocumentID(b.URL)); ok {
		t.Error("deleted document still in the document table")
	}
	st = e.Indexer.Status()
	if st.StoreSeq != 4 || st.IndexWatermark != 4 || st.IndexLag != 0 || st.IndexedChunks != 1 {
		t.Errorf("after update and delete: got %+v, want seq 4, watermark 4, 1 chunk", st)
	}
}

func TestLagAndResume(t *testing.T) {
	e := searchtest.New(t, searchtest.Options{NoKG: true})
	ctx := context.Background()
	e.Add(t, doc("https://a.example/1", "One", "lemur"))
	// Write two more documents without syncing: the index lags by 2.
	for _, u := range []string{"https://a.example/2", "https://a.example/3"} {
		d := store.Document{URL: u, Title: "later"}
		v, _ := e.Embedder.Embed(ctx, []string{"lemur"})
		if _, err := e.Store.UpsertDocument(ctx, &d, []store.Chunk{{Text: "lemur", Embedding: v[0], EndOffset: 5}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	// A new indexer over the same index (a restart) resumes from the watermark.
	var lags []int64
	x := indexer.New(e.Store, e.Index, indexer.Config{BatchSize: 1}, nil, func(n int64) { lags = append(lags, n) })
	if x.CaughtUp() {
		t.Error("a new indexer claims to be caught up before syncing")
	}
	n, err := x.Sync(ctx)
	if err != nil || n != 2 {
		t.Fatalf("Sync: applied %d, err %v; want 2", n, err)
	}
	if diff := cmp.Diff([]int64{0}, lags); diff != "" {
		t.Errorf("lag reported after sync (-want +got):\n%s", diff)
	}
	if got := len(hits(t, e.Index, "lemur")); got != 3 || !x.CaughtUp() {
		t.Errorf("after resume: %d hits, caught up %v; want 3, true", got, x.CaughtUp())
	}
}

func TestFillRebuildsTheSameIndex(t *testing.T) {
	e := searchtest.New(t, searchtest.Options{NoKG: true})
	e.Add(t, doc("https://a.example/x", "Alpha", "zebra one", "zebra two"), doc("https://b.example/y", "Beta", "zebra three"))
	if _, err := e.Store.DeleteDocument(context.Background(), store.DocumentID("https://b.example/y"), nil); err != nil {
		t.Fatal(err)
	}
	e.Sync(t)
	path := filepath.Join(t.TempDir(), "rebuilt")
	if err := bm25.Rebuild(context.Background(), path, indexer.Fill(e.Store, nil)); err != nil {
		t.Fatal(err)
	}
	ix, err := bm25.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if ix.Watermark() != e.Index.Watermark() {
		t.Errorf("watermark: rebuilt %d, tailed %d", ix.Watermark(), e.Index.Watermark())
	}
	if diff := cmp.Diff(hits(t, e.Index, "zebra"), hits(t, ix, "zebra")); diff != "" {
		t.Errorf("rebuilt vs tailed hits (-tailed +rebuilt):\n%s", diff)
	}
	// An empty store still gets a watermark of its latest seq (0) and an empty index.
	empty := searchtest.New(t, searchtest.Options{NoKG: true})
	p2 := filepath.Join(t.TempDir(), "empty")
	if err := bm25.Rebuild(context.Background(), p2, indexer.Fill(empty.Store, nil)); err != nil {
		t.Fatalf("rebuild from an empty store: %v", err)
	}
}

func TestCountCoversTheFilter(t *testing.T) {
	e := searchtest.New(t, searchtest.Options{NoKG: true})
	py := doc("https://a.example/1", "Python asyncio", "x")
	py.Tags = []string{"python-docs", "Stable"}
	dj := doc("https://b.example/2", "Django views", "y")
	dj.Tags = []string{"django-docs", "stable"}
	e.Add(t, py, dj, doc("https://a.example/3", "Untagged", "z"))
	for _, tc := range []struct {
		tags   []string
		domain string
		want   int
	}{
		{nil, "", 3}, {[]string{"python-docs"}, "", 1}, {[]string{"STABLE"}, "", 2},
		{[]string{"stable", "django-docs"}, "", 1}, {[]string{"nope"}, "", 0}, {nil, "A.example", 2},
		{[]string{"django-docs"}, "a.example", 0},
	} {
		if got := e.Indexer.Count(tc.tags, tc.domain); got != tc.want {
			t.Errorf("Count(%v, %q) = %d, want %d", tc.tags, tc.domain, got, tc.want)
		}
	}
}

func TestTitles(t *testing.T) {
	e := searchtest.New(t, searchtest.Options{NoKG: true})
	e.Add(t, doc("https://a.example/1", "Python asyncio", "x"), doc("https://a.example/2", "Learning Python", "y"),
		doc("https://a.example/3", "Pyramids", "z"), doc("https://a.example/4", "Rust", "w"))
	var got []string
	for _, c := range e.Indexer.Titles("PY", 10) {
		got = append(got, c.Title)
	}
	if diff := cmp.Diff([]string{"Pyramids", "Python asyncio", "Learning Python"}, got); diff != "" {
		t.Errorf("titles (-want +got):\n%s", diff)
	}
	if got := e.Indexer.Titles("py", 1); len(got) != 1 {
		t.Errorf("limit 1: got %d", len(got))
	}
	if got := e.Indexer.Titles("", 5); len(got) != 0 {
		t.Errorf("empty prefix: got %v", got)
	}
}

// TestRetagReachesTheIndex: a crawl that finds a page unchanged but with new
// tags replaces them with store.SetDocumentTags (no new chunks); the change
// feed carries it to Bleve's tag filter and the document table.
func TestRetagReachesTheIndex(t *testing.T) {
	e := searchtest.New(t, searchtest.Options{NoKG: true})
	d := doc("https://a.example/1", "Python asyncio", "event loop tasks")
	d.Tags = []string{"python-docs"}
	e.Add(t, d)
	id := store.DocumentID(d.URL)
	if _, err := e.Store.SetDocumentTags(context.Background(), id, []string{"python"}); err != nil {
		t.Fatal(err)
	}
	e.Sync(t)
	for tag, want := range map[string]int{"python": 1, "python-docs": 0} {
		hs, err := e.Index.Search(context.Background(), "event loop", 10, bm25.Filter{Tags: []string{tag}})
		if err != nil {
			t.Fatal(err)
		}
		if len(hs) != want {
			t.Errorf("Bleve search with tag %s: %d hits, want %d", tag, len(hs), want)
		}
		if got := e.Indexer.Count([]string{tag}, ""); got != want {
			t.Errorf("Count(%s) = %d, want %d", tag, got, want)
		}
	}
	if _, err := e.Store.SetDocumentTags(context.Background(), store.DocumentID("https://a.example/none"), nil); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("tags of an unknown document: got %v, want ErrNotFound", err)
	}
}
