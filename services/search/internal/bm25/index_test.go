package bm25

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func openTest(t *testing.T) *Index {
	t.Helper()
	ix, err := Open(filepath.Join(t.TempDir(), "bm25"))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = ix.Close() })
	return ix
}

func apply(t *testing.T, ix *Index, ops ...Op) {
	t.Helper()
	if err := ix.Apply(context.Background(), ops); err != nil {
		t.Fatalf("Apply: %v", err)
	}
}

func search(t *testing.T, ix *Index, q string, f Filter) []string {
	t.Helper()
	hits, err := ix.Search(context.Background(), q, 10, f)
	if err != nil {
		t.Fatalf("Search(%q): %v", q, err)
	}
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ChunkID
	}
	return ids
}

func upsertDoc(seq int64, docID string, chunks ...Chunk) Op {
	for i := range chunks {
		chunks[i].DocumentID = docID
		if chunks[i].URL == "" {
			chunks[i].URL = "https://docs.test/" + docID
		}
	}
	return Op{Seq: seq, Kind: UpsertDocument, DocumentID: docID, Chunks: chunks}
}

// filler is body text that does not contain the query terms.
const filler = "The module exposes several helpers for reading files and formatting output in a portable way."

func TestBM25RankingSanity(t *testing.T) {
	ix := openTest(t)
	apply(t, ix,
		// Query term in the title and twice in the text.
		upsertDoc(1, "d1", Chunk{ID: "both", Title: "Transactions in SQLite", Text: "A transaction groups statements. " + filler + " Commit ends the transaction."}),
		// Query term once in the text only.
		upsertDoc(2, "d2", Chunk{ID: "once", Title: "Cursor objects", Text: "You may start a transaction here. " + filler}),
		// No query term at all.
		upsertDoc(3, "d3", Chunk{ID: "none", Title: "File helpers", Text: filler}),
	)
	got := search(t, ix, "transaction", Filter{})
	if diff := cmp.Diff([]string{"both", "once"}, got); diff != "" {
		t.Errorf("hits for transaction (-want +got):\n%s", diff)
	}

	hits, err := ix.Search(context.Background(), "transaction", 10, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 {
		t.Fatalf("got %d hits, want 2", len(hits))
	}
	if !(hits[0].Score > hits[1].Score) {
		t.Errorf("scores: got %g then %g, want the first strictly higher", hits[0].Score, hits[1].Score)
	}
	want := Hit{ChunkID: "both", DocumentID: "d1", URL: "https://docs.test/d1", Title: "Transactions in SQLite", Score: hits[0].Score}
	if diff := cmp.Diff(want, hits[0]); diff != "" {
		t.Errorf("stored fields of top hit (-want +got):\n%s", diff)
	}
}

func TestTitleIsSearched(t *testing.T) {
	ix := openTest(t)
	// One occurrence each, in a title and in a text of average length: both found.
	apply(t, ix,
		upsertDoc(1, "d1", Chunk{ID: "in-text", Title: "Overview", Text: "How the journal works. " + filler}),
		upsertDoc(2, "d2", Chunk{ID: "in-title", Title: "Journal", Text: "How the logging works. " + filler}),
	)
	got := search(t, ix, "journal", Filter{})
	slices.Sort(got)
	if diff := cmp.Diff([]string{"in-text", "in-title"}, got); diff != "" {
		t.Errorf("hits (-want +got):\n%s", diff)
	}
}

func TestStemming(t *testing.T) {
	ix := openTest(t)
	apply(t, ix,
		upsertDoc(1, "d1", Chunk{ID: "c1", Title: "Database", Text: "Open a connection to the database."}),
		upsertDoc(2, "d2", Chunk{ID: "c2", Title: "Threads", Text: "Running several queries concurrently."}),
		upsertDoc(3, "d3", Chunk{ID: "c3", Title: "Sections", Headings: []string{"Indexing strategies"}, Text: filler}),
	)
	tests := []struct {
		query string
		want  []string
	}{
		{"connections", []string{"c1"}},
		{"connected", []string{"c1"}},
		{"query", []string{"c2"}},
		{"run", []string{"c2"}},
		{"indexes", []string{"c3"}}, // found through the headings
		{"the", []string{}},         // stop word only: nothing to search
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, search(t, ix, tt.query, Filter{})); diff != "" {
				t.Errorf("hits (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUpsertReplacesAndDeletes(t *testing.T) {
	ix := openTest(t)
	apply(t, ix, upsertDoc(1, "d1",
		Chunk{ID: "d1-0", Title: "Alpha", Text: "apples and pears"},
		Chunk{ID: "d1-1", Title: "Alpha", Text: "bananas"},
		Chunk{ID: "d1-2", Title: "Alpha", Text: "cherries"},
	), upsertDoc(2, "d2", Chunk{ID: "d2-0", Title: "Beta", Text: "bananas again"}))
	assertCount(t, ix, 4)

	// Re-upsert d1 with fewer chunks and new text: the stale chunks go away.
	apply(t, ix, upsertDoc(3, "d1", Chunk{ID: "d1-0", Title: "Alpha", Text: "grapes"}))
	assertCount(t, ix, 2)
	if diff := cmp.Diff([]string{"d2-0"}, search(t, ix, "bananas", Filter{})); diff != "" {
		t.Errorf("bananas after re-upsert (-want +got):\n%s", diff)
	}
	if got := search(t, ix, "apples", Filter{}); len(got) != 0 {
		t.Errorf("apples after re-upsert: got %v, want none (old text replaced)", got)
	}

	// Delete a document.
	apply(t, ix, Op{Seq: 4, Kind: DeleteDocument, DocumentID: "d2"})
	assertCount(t, ix, 1)
	if got := search(t, ix, "bananas", Filter{}); len(got) != 0 {
		t.Errorf("bananas after delete: got %v, want none", got)
	}

	// Chunk-level ops.
	apply(t, ix, Op{Seq: 5, Kind: UpsertChunk, Chunks: []Chunk{{ID: "x", DocumentID: "d9", Text: "kiwi"}}})
	assertCount(t, ix, 2)
	apply(t, ix, Op{Seq: 6, Kind: DeleteChunk, ChunkIDs: []string{"x"}})
	assertCount(t, ix, 1)

	// DeleteDocument method: deletes without moving the watermark.
	if err := ix.DeleteDocument(context.Background(), "d1"); err != nil {
		t.Fatal(err)
	}
	assertCount(t, ix, 0)
	if got := ix.Watermark(); got != 6 {
		t.Errorf("watermark: got %d, want 6", got)
	}
}

func TestOpsInOneBatchApplyInOrder(t *testing.T) {
	ix := openTest(t)
	// Upsert with 3 chunks, re-upsert with 1, all in one Apply: the 2 chunks that only
	// ever existed inside the batch must not survive. Then upsert+delete of d2.
	apply(t, ix,
		upsertDoc(1, "d1", Chunk{ID: "a", Text: "one"}, Chunk{ID: "b", Text: "two"}, Chunk{ID: "c", Text: "three"}),
		upsertDoc(2, "d1", Chunk{ID: "a", Text: "uno"}),
		upsertDoc(3, "d2", Chunk{ID: "z", Text: "zeta"}),
		Op{Seq: 4, Kind: DeleteDocument, DocumentID: "d2"},
	)
	assertCount(t, ix, 1)
	if diff := cmp.Diff([]string{"a"}, search(t, ix, "uno", Filter{})); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := ix.Watermark(); got != 4 {
		t.Errorf("watermark: got %d, want 4", got)
	}
}

func assertCount(t *testing.T, ix *Index, want uint64) {
	t.Helper()
	n, err := ix.DocCount()
	if err != nil {
		t.Fatal(err)
	}
	if n != want {
		t.Errorf("DocCount: got %d, want %d", n, want)
	}
}

func TestWatermarkPersistsAcrossReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bm25")
	ix, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := ix.Watermark(); got != 0 {
		t.Errorf("new index watermark: got %d, want 0", got)
	}
	apply(t, ix, upsertDoc(41, "d1", Chunk{ID: "c1", Text: "persistent"}), upsertDoc(42, "d2", Chunk{ID: "c2", Text: "durable"}))
	// An older seq never moves the watermark back.
	apply(t, ix, upsertDoc(7, "d3", Chunk{ID: "c3", Text: "late"}))
	if got := ix.Watermark(); got != 42 {
		t.Errorf("watermark: got %d, want 42", got)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Search(context.Background(), "x", 1, Filter{}); !errors.Is(err, ErrClosed) {
		t.Errorf("Search after Close: got %v, want ErrClosed", err)
	}

	ix2, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ix2.Close()
	if got := ix2.Watermark(); got != 42 {
		t.Errorf("watermark after reopen: got %d, want 42", got)
	}
	assertCount(t, ix2, 3)
	if diff := cmp.Diff([]string{"c2"}, search(t, ix2, "durable", Filter{})); diff != "" {
		t.Errorf("after reopen (-want +got):\n%s", diff)
	}
}

func TestFilters(t *testing.T) {
	ix := openTest(t)
	day := func(s string) time.Time {
		d, err := time.Parse(time.DateOnly, s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	apply(t, ix,
		upsertDoc(1, "py", Chunk{ID: "py", Domain: "docs.python.org", Tags: []string{"Python", "reference"}, Published: day("2025-03-01"), Text: "sqlite module"}),
		upsertDoc(2, "sq", Chunk{ID: "sq", Domain: "SQLite.org", Tags: []string{"c"}, Published: day("2025-09-15"), Text: "sqlite library"}),
		upsertDoc(3, "nd", Chunk{ID: "nd", Domain: "docs.python.org", Tags: []string{"python"}, Text: "sqlite tutorial"}), // no date
	)
	tests := []struct {
		name string
		f    Filter
		want []string
	}{
		{"none", Filter{}, []string{"nd", "py", "sq"}},
		{"domain", Filter{Domain: "docs.python.org"}, []string{"nd", "py"}},
		{"domain case-insensitive", Filter{Domain: "sqlite.ORG"}, []string{"sq"}},
		{"one tag", Filter{Tags: []string{"python"}}, []string{"nd", "py"}},
		{"all tags required", Filter{Tags: []string{"PYTHON", "reference"}}, []string{"py"}},
		{"unknown tag", Filter{Tags: []string{"rust"}}, []string{}},
		{"after (inclusive)", Filter{PublishedAfter: day("2025-03-01")}, []string{"py", "sq"}},
		{"after excludes older", Filter{PublishedAfter: day("2025-03-02")}, []string{"sq"}},
		{"before (exclusive)", Filter{PublishedBefore: day("2025-09-15")}, []string{"py"}},
		{"range", Filter{PublishedAfter: day("2025-01-01"), PublishedBefore: day("2026-01-01")}, []string{"py", "sq"}},
		{"combined", Filter{Domain: "docs.python.org", Tags: []string{"python"}, PublishedAfter: day("2020-01-01")}, []string{"py"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := search(t, ix, "sqlite", tt.f)
			slicesSort(got)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("hits (-want +got):\n%s", diff)
			}
		})
	}

	// Filters do not change scores: the same chunk scores the same with and without.
	all, _ := ix.Search(context.Background(), "sqlite module", 10, Filter{})
	filtered, _ := ix.Search(context.Background(), "sqlite module", 10, Filter{Domain: "docs.python.org", Tags: []string{"python"}})
	scores := map[string]float64{}
	for _, h := range all {
		scores[h.ChunkID] = h.Score
	}
	for _, h := range filtered {
		if h.Score != scores[h.ChunkID] {
			t.Errorf("score of %s: got %g with filter, want %g as without", h.ChunkID, h.Score, scores[h.ChunkID])
		}
	}
	// Published comes back from the stored field.
	for _, h := range all {
		if h.ChunkID == "py" && !h.Published.Equal(day("2025-03-01")) {
			t.Errorf("published of py: got %v, want 2025-03-01", h.Published)
		}
	}
}

func slicesSort(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func TestInjectionStringsAreText(t *testing.T) {
	ix := openTest(t)
	apply(t, ix,
		upsertDoc(1, "d1", Chunk{ID: "secret", Title: "Admin", Domain: "internal.test", Tags: []string{"private"}, Text: "hidden content"}),
		upsertDoc(2, "d2", Chunk{ID: "drop", Title: "SQL", Domain: "docs.test", Text: "the drop table statement removes a table"}),
	)
	// Query-string syntax would match everything or the private chunk; as text these are
	// words (or nothing), and only chunks containing them can match.
	queries := []string{
		"*",
		"title:Admin",
		"+domain:internal.test",
		"hidden OR 1=1",
		"'; DROP TABLE chunks; --",
		`" OR ""="`,
		"MATCH (n) DETACH DELETE n",
		"_id:secret",
		"/.*/",
		"tags:private",
		strings.Repeat("a", 5000),
		strings.Repeat("hidden ", 2000), // 14 KB: cut to MaxQueryBytes
		"\x00\xff\xfe",
	}
	for _, q := range queries {
		name := q
		if len(name) > 30 {
			name = name[:30]
		}
		t.Run(name, func(t *testing.T) {
			hits, err := ix.Search(context.Background(), q, 10, Filter{Domain: "docs.test"})
			if err != nil {
				t.Fatalf("Search: %v", err)
			}
			for _, h := range hits {
				if h.ChunkID == "secret" {
					t.Errorf("query %q with domain filter docs.test returned the internal.test chunk", q)
				}
			}
		})
	}
	// As words, "drop table" finds the chunk that contains them.
	if diff := cmp.Diff([]string{"drop"}, search(t, ix, "'; DROP TABLE chunks; --", Filter{})); diff != "" {
		t.Errorf("injection string as words (-want +got):\n%s", diff)
	}
	// And the private chunk is found only for its own words.
	if diff := cmp.Diff([]string{"secret"}, search(t, ix, "hidden OR 1=1", Filter{})); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// Filter values are terms, not syntax.
	if got := search(t, ix, "hidden", Filter{Domain: "* OR domain:internal.test", Tags: []string{"*"}}); len(got) != 0 {
		t.Errorf("filter injection: got %v, want none", got)
	}
	// The index is intact.
	assertCount(t, ix, 2)
}

func TestBadArguments(t *testing.T) {
	ix := openTest(t)
	ctx := context.Background()
	now := time.Now()
	searches := []struct {
		name string
		k    int
		f    Filter
	}{
		{"k zero", 0, Filter{}},
		{"k too large", MaxK + 1, Filter{}},
		{"empty range", 10, Filter{PublishedAfter: now, PublishedBefore: now}},
		{"inverted range", 10, Filter{PublishedAfter: now, PublishedBefore: now.Add(-time.Hour)}},
		{"year 9999", 10, Filter{PublishedAfter: time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)}},
	}
	for _, tt := range searches {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := ix.Search(ctx, "x", tt.k, tt.f); !errors.Is(err, ErrInvalid) {
				t.Errorf("got %v, want ErrInvalid", err)
			}
		})
	}
	ops := []struct {
		name string
		op   Op
	}{
		{"unknown kind", Op{Seq: 1, Kind: 99}},
		{"upsert without document id", Op{Seq: 1, Kind: UpsertDocument}},
		{"chunk without id", Op{Seq: 1, Kind: UpsertChunk, Chunks: []Chunk{{Text: "x"}}}},
		{"chunk of another document", Op{Seq: 1, Kind: UpsertDocument, DocumentID: "a", Chunks: []Chunk{{ID: "c", DocumentID: "b"}}}},
		{"negative seq", Op{Seq: -1, Kind: DeleteDocument, DocumentID: "a"}},
		{"empty chunk id delete", Op{Seq: 1, Kind: DeleteChunk, ChunkIDs: []string{""}}},
	}
	for _, tt := range ops {
		t.Run(tt.name, func(t *testing.T) {
			err := ix.Apply(ctx, []Op{tt.op})
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("got %v, want ErrInvalid", err)
			}
		})
	}
	// A failed Apply applies nothing and keeps the watermark.
	err := ix.Apply(ctx, []Op{upsertDoc(5, "ok", Chunk{ID: "ok", Text: "fine"}), {Seq: 6, Kind: 99}})
	if err == nil {
		t.Fatal("Apply with a bad op: got no error")
	}
	assertCount(t, ix, 0)
	if got := ix.Watermark(); got != 0 {
		t.Errorf("watermark after failed Apply: got %d, want 0", got)
	}
	// A published date Bleve cannot represent is dropped, not an error.
	apply(t, ix, upsertDoc(7, "old", Chunk{ID: "old", Text: "ancient", Published: time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC)}))
	assertCount(t, ix, 1)
	if _, err := Open(""); !errors.Is(err, ErrInvalid) {
		t.Errorf("Open(\"\"): got %v, want ErrInvalid", err)
	}
}

func TestRebuild(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bm25")
	ix, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	apply(t, ix, upsertDoc(3, "old", Chunk{ID: "old", Text: "stale words"}))

	fill := func(ctx context.Context, n *Index) error {
		return n.Apply(ctx, []Op{
			upsertDoc(10, "a", Chunk{ID: "a", Text: "fresh apples"}),
			upsertDoc(11, "b", Chunk{ID: "b", Text: "fresh bananas"}),
		})
	}
	if err := ix.Rebuild(ctx, fill); err != nil {
		t.Fatalf("Rebuild: %v", err)
	}
	assertCount(t, ix, 2)
	if got := ix.Watermark(); got != 11 {
		t.Errorf("watermark after rebuild: got %d, want 11", got)
	}
	if got := search(t, ix, "stale", Filter{}); len(got) != 0 {
		t.Errorf("stale chunk after rebuild: got %v", got)
	}
	for _, p := range []string{buildingPath(path), newPath(path), oldPath(path)} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left behind (stat err %v)", p, err)
		}
	}

	// A failing fill leaves the current index untouched.
	boom := errors.New("store down")
	err = ix.Rebuild(ctx, func(ctx context.Context, n *Index) error { return boom })
	if !errors.Is(err, boom) {
		t.Errorf("Rebuild with failing fill: got %v, want %v", err, boom)
	}
	assertCount(t, ix, 2)
	if _, err := os.Stat(buildingPath(path)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("failed build left %s behind", buildingPath(path))
	}
}

func TestOfflineRebuildAndCrashRecovery(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bm25")
	fillWith := func(seq int64, id, text string) FillFunc {
		return func(ctx context.Context, n *Index) error {
			return n.Apply(ctx, []Op{upsertDoc(seq, id, Chunk{ID: id, Text: text})})
		}
	}
	// Offline rebuild with no existing index.
	if err := Rebuild(ctx, path, fillWith(5, "one", "first build")); err != nil {
		t.Fatalf("Rebuild: %v", err)
	}
	// Simulate a crash after the build was published as path.new but before the swap,
	// and leave an incomplete path.building too.
	if err := build(ctx, path, fillWith(9, "two", "second build")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(buildingPath(path), 0o755); err != nil {
		t.Fatal(err)
	}
	ix, err := Open(path)
	if err != nil {
		t.Fatalf("Open after interrupted rebuild: %v", err)
	}
	defer ix.Close()
	if got := ix.Watermark(); got != 9 {
		t.Errorf("watermark: got %d, want 9 (the completed rebuild)", got)
	}
	if diff := cmp.Diff([]string{"two"}, search(t, ix, "second", Filter{})); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, p := range []string{buildingPath(path), newPath(path), oldPath(path)} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left behind", p)
		}
	}
}

func TestMappingVersionMismatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bm25")
	ix, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ix.mu.RLock()
	err = ix.idx.SetInternal(keyMappingVersion, []byte("0"))
	ix.mu.RUnlock()
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path); !errors.Is(err, ErrMappingVersion) {
		t.Errorf("Open: got %v, want ErrMappingVersion", err)
	}
}

func TestTruncateQuery(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"alpha beta gamma", 12, "alpha beta"},
		{"alpha beta gamma", 10, "alpha beta"},
		{"abcdefghij", 4, "abcd"},
		{"ééé", 3, "é"}, // 6 bytes; byte 3 is inside the second é → back to 2
	}
	for _, tt := range tests {
		if got := truncateQuery(tt.in, tt.n); got != tt.want {
			t.Errorf("truncateQuery(%q, %d): got %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func TestContextCancelled(t *testing.T) {
	ix := openTest(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := ix.Apply(ctx, []Op{upsertDoc(1, "d", Chunk{ID: "c", Text: "x"})})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Apply with cancelled context: got %v, want context.Canceled", err)
	}
	assertCount(t, ix, 0)
}

func TestConcurrentSearchApplyRebuild(t *testing.T) {
	ctx := context.Background()
	ix := openTest(t)
	apply(t, ix, upsertDoc(1, "seed", Chunk{ID: "seed", Text: "lorem ipsum"}))
	done := make(chan struct{})
	errs := make(chan error, 8)
	for range 3 {
		go func() {
			for {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				if _, err := ix.Search(ctx, "lorem", 10, Filter{}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := range 20 {
		id := fmt.Sprintf("d%d", i)
		if err := ix.Apply(ctx, []Op{upsertDoc(int64(i+2), id, Chunk{ID: id, Text: "lorem dolor"})}); err != nil {
			t.Fatal(err)
		}
	}
	if err := ix.Rebuild(ctx, func(ctx context.Context, n *Index) error {
		return n.Apply(ctx, []Op{upsertDoc(100, "r", Chunk{ID: "r", Text: "lorem rebuilt"})})
	}); err != nil {
		t.Fatal(err)
	}
	close(done)
	for range 3 {
		if err := <-errs; err != nil {
			t.Errorf("concurrent search: %v", err)
		}
	}
	assertCount(t, ix, 1)
}

func TestSecondOpenIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bm25")
	ix, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if ix2, err := Open(path); !errors.Is(err, ErrLocked) {
		if err == nil {
			_ = ix2.Close()
		}
		t.Errorf("second Open: got %v, want ErrLocked", err)
	}
}

func TestCompactKeepsContents(t *testing.T) {
	ix := openTest(t)
	for i := range 5 { // several batches → several segments
		id := fmt.Sprintf("d%d", i)
		apply(t, ix, upsertDoc(int64(i+1), id, Chunk{ID: id, Text: "segment " + id}))
	}
	if err := ix.Compact(context.Background()); err != nil {
		t.Fatalf("Compact: %v", err)
	}
	assertCount(t, ix, 5)
	if got := ix.Watermark(); got != 5 {
		t.Errorf("watermark: got %d, want 5", got)
	}
	if diff := cmp.Diff([]string{"d3"}, search(t, ix, "d3", Filter{})); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestSearchIDsMatchesSearch(t *testing.T) {
	ix := openTest(t)
	apply(t, ix,
		upsertDoc(1, "d1", Chunk{ID: "both", Title: "Transactions in SQLite", Text: "A transaction groups statements. " + filler}),
		upsertDoc(2, "d2", Chunk{ID: "once", Title: "Cursor objects", Text: "You may start a transaction here. " + filler, Tags: []string{"x"}}),
	)
	for _, f := range []Filter{{}, {Tags: []string{"x"}}} {
		full, err := ix.Search(context.Background(), "transaction", 10, f)
		if err != nil {
			t.Fatal(err)
		}
		ids, err := ix.SearchIDs(context.Background(), "transaction", 10, f)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]Hit, len(full))
		for i, h := range full {
			want[i] = Hit{ChunkID: h.ChunkID, Score: h.Score}
		}
		if diff := cmp.Diff(want, ids); diff != "" || len(ids) == 0 {
			t.Errorf("SearchIDs with %+v (-want +got):\n%s", f, diff)
		}
	}
}

func TestScoreIDs(t *testing.T) {
	ix := openTest(t)
	apply(t, ix,
		upsertDoc(1, "d1", Chunk{ID: "c1", Title: "Transactions", Text: "Commit a transaction to make it durable. " + filler}),
		upsertDoc(2, "d2", Chunk{ID: "c2", Title: "Cursors", Text: "A cursor fetches rows of a transaction. " + filler}),
		upsertDoc(3, "d3", Chunk{ID: "c3", Title: "Threads", Text: "Nothing about it here. " + filler}),
	)
	ctx := context.Background()
	full, err := ix.SearchIDs(ctx, "transaction", 10, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{}
	for _, h := range full {
		want[h.ChunkID] = h.Score
	}
	// Only the listed chunks, with the scores Search gives them; c3 matches no term.
	hits, err := ix.ScoreIDs(ctx, "transaction", []string{"c2", "c3", "missing"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, h := range hits {
		got[h.ChunkID] = h.Score
	}
	if diff := cmp.Diff(map[string]float64{"c2": want["c2"]}, got); diff != "" || want["c2"] == 0 {
		t.Errorf("ScoreIDs (-want +got):\n%s (search scores %v)", diff, want)
	}
	for _, tt := range []struct {
		name, text string
		ids        []string
	}{{"no ids", "transaction", nil}, {"no words", "  ", []string{"c1"}}} {
		hits, err := ix.ScoreIDs(ctx, tt.text, tt.ids)
		if err != nil || len(hits) != 0 {
			t.Errorf("%s: got %v, %v, want no hits and no error", tt.name, hits, err)
		}
	}
}

// TestScoreIDsEqualsSearch checks the id-driven walk of ScoreIDs against full
// searches on an index of several segments with updates and deletes: for random
// subsets of chunk ids (matching, not matching, deleted and unknown ones) it returns
// exactly the listed chunks that Search finds, with the same scores.
func TestScoreIDsEqualsSearch(t *testing.T) {
	ix := openTest(t)
	rng := rand.New(rand.NewPCG(13, 7))
	vocab := strings.Fields("commit cursor thread lock queue socket parse encode decode file path string list dict tuple set sort merge join split")
	words := func(n int) string {
		w := make([]string, n)
		for i := range w {
			w[i] = vocab[rng.IntN(len(vocab))]
		}
		return strings.Join(w, " ")
	}
	var all []string
	seq := int64(0)
	for batch := range 6 { // one segment per batch
		var ops []Op
		for d := range 15 {
			doc := fmt.Sprintf("d%d", rng.IntN(60))
			var chunks []Chunk
			for c := range 1 + rng.IntN(4) {
				id := fmt.Sprintf("%s-b%d-%d-%d", doc, batch, d, c)
				all = append(all, id)
				chunks = append(chunks, Chunk{ID: id, Title: words(2), Headings: []string{words(3)}, Text: words(5 + rng.IntN(40))})
			}
			seq++
			if rng.IntN(6) == 0 {
				ops = append(ops, Op{Seq: seq, Kind: DeleteDocument, DocumentID: doc})
				continue
			}
			ops = append(ops, upsertDoc(seq, doc, chunks...))
		}
		apply(t, ix, ops...)
	}
	all = append(all, "unknown-1", "unknown-2")
	ctx := context.Background()
	for q := range 40 {
		text := words(1 + rng.IntN(4))
		full, err := ix.SearchIDs(ctx, text, MaxK, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(full) == MaxK {
			t.Fatalf("query %q: %d hits fill MaxK; the test needs every match", text, len(full))
		}
		scores := map[string]float64{}
		for _, h := range full {
			scores[h.ChunkID] = h.Score
		}
		var ids []string
		for _, id := range all {
			if rng.IntN(3) == 0 || q == 0 {
				ids = append(ids, id)
			}
		}
		want := map[string]float64{}
		for _, id := range ids {
			if s, ok := scores[id]; ok {
				want[id] = s
			}
		}
		hits, err := ix.ScoreIDs(ctx, text, ids)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]float64{}
		for _, h := range hits {
			got[h.ChunkID] = h.Score
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("query %q over %d ids (-search +ScoreIDs):\n%s", text, len(ids), diff)
		}
		if q == 0 && len(want) < 20 {
			t.Errorf("query %q: only %d listed chunks match; the test needs a fuller index", text, len(want))
		}
	}
}
