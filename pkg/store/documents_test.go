package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func makeChunks(g *vecGen, n int, prefix string) []Chunk {
	out := make([]Chunk, n)
	for i := range out {
		out[i] = Chunk{
			Text:        fmt.Sprintf("%s chunk %d", prefix, i),
			TokenCount:  4,
			StartOffset: i * 10,
			EndOffset:   i*10 + 9,
			HeadingPath: []string{"Intro", fmt.Sprintf("Part %d", i)},
			Embedding:   g.next(),
		}
	}
	return out
}

func TestUpsertGetUpdateDelete(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	g := newClustered(1, 384, 4, 0.5)
	published := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	doc := &Document{
		URL: "https://Docs.Example.com/guide", Title: "Guide", Lang: "en", ContentHash: "h1",
		ETag: `"abc"`, LastModified: "Tue, 04 Mar 2025 05:06:07 GMT", PublishedAt: published,
		FetchedAt: published.Add(time.Hour), Tags: []string{"go", "docs"}, Headings: []string{"Intro"},
	}
	chunks := makeChunks(g, 3, "v1")
	res, err := s.UpsertDocument(ctx, doc, chunks, json.RawMessage(`{"v":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if res.Op != OpInsert || len(res.ChunkIDs) != 3 {
		t.Fatalf("got op %s with %d chunk ids, want insert with 3", res.Op, len(res.ChunkIDs))
	}
	if doc.ID != DocumentID(doc.URL) || doc.Domain != "docs.example.com" {
		t.Errorf("got id %s domain %s, want %s and docs.example.com", doc.ID, doc.Domain, DocumentID(doc.URL))
	}

	got, err := s.GetDocument(ctx, doc.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := *doc
	want.ChunkCount = 3
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(Document{}, "CreatedAt", "UpdatedAt")); diff != "" {
		t.Errorf("GetDocument (-want +got):\n%s", diff)
	}
	byURL, err := s.DocumentByURL(ctx, doc.URL)
	if err != nil || byURL.ETag != `"abc"` || byURL.ContentHash != "h1" {
		t.Errorf("DocumentByURL: got %+v, %v; want the stored document", byURL, err)
	}

	stored, err := s.DocumentChunks(ctx, doc.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(chunks, stored, cmpopts.EquateApprox(0, 1e-6)); diff != "" {
		t.Errorf("DocumentChunks (-want +got):\n%s", diff)
	}

	// Update with fewer chunks: the old ones are gone, ids are stable per ordinal.
	doc2 := &Document{URL: doc.URL, Title: "Guide v2", ContentHash: "h2"}
	chunks2 := makeChunks(g, 2, "v2")
	res2, err := s.UpsertDocument(ctx, doc2, chunks2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res2.Op != OpUpdate || res2.Seq <= res.Seq {
		t.Errorf("got op %s seq %d, want update with seq > %d", res2.Op, res2.Seq, res.Seq)
	}
	if diff := cmp.Diff(res.ChunkIDs[:2], res2.ChunkIDs); diff != "" {
		t.Errorf("chunk ids changed across versions (-v1 +v2):\n%s", diff)
	}
	stored, err = s.DocumentChunks(ctx, doc.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != 2 || stored[0].Text != "v2 chunk 0" {
		t.Errorf("after update got %d chunks (first %q), want 2 starting with %q", len(stored), stored[0].Text, "v2 chunk 0")
	}
	got, _ = s.GetDocument(ctx, doc.ID)
	if got.Title != "Guide v2" || got.ChunkCount != 2 || !got.CreatedAt.Before(got.UpdatedAt) && !got.CreatedAt.Equal(got.UpdatedAt) {
		t.Errorf("after update got title %q chunk count %d, want %q and 2", got.Title, got.ChunkCount, "Guide v2")
	}

	old, err := s.ChunksByIDs(ctx, []int64{res.ChunkIDs[2], res.ChunkIDs[1], res.ChunkIDs[0]})
	if err != nil {
		t.Fatal(err)
	}
	if len(old) != 2 || old[0].ID != res.ChunkIDs[1] || old[1].ID != res.ChunkIDs[0] {
		t.Errorf("ChunksByIDs: got %d chunks, want 2 in request order without the removed third", len(old))
	}

	seq, err := s.DeleteDocument(ctx, doc.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if seq <= res2.Seq {
		t.Errorf("delete seq %d, want > %d", seq, res2.Seq)
	}
	if _, err := s.GetDocument(ctx, doc.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("GetDocument after delete: got %v, want ErrNotFound", err)
	}
	left, err := s.DocumentChunks(ctx, doc.ID)
	if err != nil || len(left) != 0 {
		t.Errorf("chunks after delete: got %d (%v), want 0", len(left), err)
	}
	hits, err := s.SearchVectors(ctx, chunks2[0].Embedding, 5, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 0 {
		t.Errorf("vector search after delete: got %d hits, want 0", len(hits))
	}
	if _, err := s.DeleteDocument(ctx, doc.ID, nil); !errors.Is(err, ErrNotFound) {
		t.Errorf("second delete: got %v, want ErrNotFound", err)
	}
}

func TestChangesCoverInsertUpdateDelete(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	g := newClustered(2, 384, 4, 0.5)
	a := &Document{URL: "https://a.example/1"}
	b := &Document{URL: "https://b.example/1"}
	for _, step := range []func() error{
		func() error { _, err := s.UpsertDocument(ctx, a, makeChunks(g, 1, "a"), nil); return err },
		func() error { _, err := s.UpsertDocument(ctx, b, makeChunks(g, 1, "b"), nil); return err },
		func() error { _, err := s.UpsertDocument(ctx, a, makeChunks(g, 2, "a2"), nil); return err },
		func() error { _, err := s.DeleteDocument(ctx, b.ID, nil); return err },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Changes(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	type change struct {
		Seq int64
		Doc string
		Op  Op
	}
	var gotc []change
	for _, c := range got {
		gotc = append(gotc, change{c.Seq, c.DocumentID, c.Op})
	}
	want := []change{{1, a.ID, OpInsert}, {2, b.ID, OpInsert}, {3, a.ID, OpUpdate}, {4, b.ID, OpDelete}}
	if diff := cmp.Diff(want, gotc); diff != "" {
		t.Errorf("Changes(0) (-want +got):\n%s", diff)
	}
	tail, err := s.Changes(ctx, 2, 1)
	if err != nil || len(tail) != 1 || tail[0].Seq != 3 {
		t.Errorf("Changes(2, limit 1): got %+v (%v), want seq 3 only", tail, err)
	}
	latest, err := s.LatestSeq(ctx)
	if err != nil || latest != 4 {
		t.Errorf("LatestSeq: got %d (%v), want 4", latest, err)
	}
}

func TestChangeSeqMatchesCommitOrderUnderConcurrency(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	const writers, each = 4, 10
	errs := make(chan error, writers)
	for w := range writers {
		go func() {
			g := newClustered(uint64(10+w), 384, 2, 0.5)
			for i := range each {
				doc := &Document{URL: fmt.Sprintf("https://w%d.example/%d", w, i)}
				if _, err := s.UpsertDocument(ctx, doc, makeChunks(g, 2, "x"), json.RawMessage(`{}`)); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range writers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Changes(ctx, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != writers*each {
		t.Fatalf("got %d changes, want %d", len(got), writers*each)
	}
	for i, c := range got {
		if c.Seq != int64(i+1) {
			t.Fatalf("change %d has seq %d, want %d (gap-free)", i, c.Seq, i+1)
		}
	}
}

func TestFailedUpsertKeepsPreviousVersion(t *testing.T) {
	ctx := context.Background()
	g := newClustered(3, 384, 4, 0.5)
	for _, point := range []string{"upsert:after-delete-chunks", "upsert:after-insert-chunks"} {
		t.Run(point, func(t *testing.T) {
			s := newStore(t)
			doc := &Document{URL: "https://example.com/a", Title: "v1", ContentHash: "h1"}
			v1 := makeChunks(g, 3, "v1")
			if _, err := s.UpsertDocument(ctx, doc, v1, json.RawMessage(`{"v":1}`)); err != nil {
				t.Fatal(err)
			}
			before, _ := s.LatestSeq(ctx)
			forced := errors.New("forced failure")
			s.testHook = func(p string) error {
				if p == point {
					return forced
				}
				return nil
			}
			_, err := s.UpsertDocument(ctx, &Document{URL: doc.URL, Title: "v2", ContentHash: "h2"}, makeChunks(g, 5, "v2"), json.RawMessage(`{"v":2}`))
			if !errors.Is(err, forced) {
				t.Fatalf("got %v, want the forced failure", err)
			}
			s.testHook = nil
			assertVersion1(t, s, doc.ID, v1, before)
		})
	}
	t.Run("server refuses a chunk in the third insert batch", func(t *testing.T) {
		s := newStore(t)
		doc := &Document{URL: "https://example.com/b", Title: "v1", ContentHash: "h1"}
		v1 := makeChunks(g, 3, "v1")
		if _, err := s.UpsertDocument(ctx, doc, v1, json.RawMessage(`{"v":1}`)); err != nil {
			t.Fatal(err)
		}
		before, _ := s.LatestSeq(ctx)
		// A trigger in this test's own database makes MariaDB itself fail the
		// statement that carries the chunk with text "boom".
		if _, err := s.db.ExecContext(ctx, `CREATE TRIGGER chunks_boom BEFORE INSERT ON chunks FOR EACH ROW
			IF NEW.text = 'boom' THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'boom chunk refused'; END IF`); err != nil {
			t.Fatal(err)
		}
		v2 := makeChunks(g, 450, "v2") // batches 0..199, 200..399, 400..449
		v2[449].Text = "boom"
		var reached []string
		s.testHook = func(p string) error { reached = append(reached, p); return nil }
		_, err := s.UpsertDocument(ctx, &Document{URL: doc.URL, Title: "v2"}, v2, json.RawMessage(`{"v":2}`))
		s.testHook = nil
		if err == nil || !strings.Contains(err.Error(), "boom chunk refused") {
			t.Fatalf("got %v, want the server's refusal", err)
		}
		want := []string{"upsert:after-delete-chunks", "upsert:after-chunk-batch:0", "upsert:after-chunk-batch:200"}
		if diff := cmp.Diff(want, reached); diff != "" {
			t.Errorf("the failure did not come after two written batches (-want +got):\n%s", diff)
		}
		assertVersion1(t, s, doc.ID, v1, before)
	})
	t.Run("server refuses a short vector", func(t *testing.T) {
		s := newStore(t)
		doc := &Document{URL: "https://example.com/c"}
		if _, err := s.UpsertDocument(ctx, doc, makeChunks(g, 1, "c"), nil); err != nil {
			t.Fatal(err)
		}
		// Bypass the Go-side check: MariaDB itself refuses 383 floats in VECTOR(384).
		_, err := s.db.ExecContext(ctx, `INSERT INTO chunks (id, document_id, ordinal, text, token_count, start_offset,
			end_offset, heading_path, embedding) VALUES (1, ?, 99, '', 0, 0, 0, '[]', CAST(? AS BINARY))`,
			doc.ID, EncodeVector(g.next()[:383]))
		if err == nil {
			t.Errorf("MariaDB accepted a 383-d vector into VECTOR(384)")
		}
	})
}

func assertVersion1(t *testing.T, s *Store, id string, v1 []Chunk, seqBefore int64) {
	t.Helper()
	ctx := context.Background()
	got, err := s.GetDocument(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != "v1" || got.ContentHash != "h1" || got.ChunkCount != 3 {
		t.Errorf("after failed upsert got title %q hash %q chunks %d, want v1 h1 3", got.Title, got.ContentHash, got.ChunkCount)
	}
	chunks, err := s.DocumentChunks(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(v1, chunks, cmpopts.EquateApprox(0, 1e-6)); diff != "" {
		t.Errorf("chunks after failed upsert (-v1 +got):\n%s", diff)
	}
	hits, err := s.SearchVectors(ctx, v1[1].Embedding, 1, Filter{})
	if err != nil || len(hits) != 1 || hits[0].ID != v1[1].ID {
		t.Errorf("vector search after failed upsert: got %+v (%v), want chunk %d", hits, err, v1[1].ID)
	}
	if seq, _ := s.LatestSeq(ctx); seq != seqBefore {
		t.Errorf("change seq moved from %d to %d on a failed upsert", seqBefore, seq)
	}
	items, err := s.OutboxItems(ctx, 10)
	if err != nil || len(items) != 1 || string(items[0].Payload) != `{"v": 1}` && string(items[0].Payload) != `{"v":1}` {
		t.Errorf("outbox after failed upsert: got %+v (%v), want the v1 row only", items, err)
	}
}

func TestWrongDimensionRefused(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	tests := []struct {
		name string
		dims int
	}{{"too short", 383}, {"too long", 385}, {"empty", 0}, {"other model", 768}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := make([]float32, tt.dims)
			for i := range v {
				v[i] = 1
			}
			_, err := s.UpsertDocument(ctx, &Document{URL: "https://example.com/x"}, []Chunk{{Text: "x", Embedding: v}}, nil)
			var de *DimensionError
			if !errors.As(err, &de) || !errors.Is(err, ErrModelMismatch) {
				t.Fatalf("upsert: got %v, want *DimensionError matching ErrModelMismatch", err)
			}
			if de.Got != tt.dims || de.Model != testModel {
				t.Errorf("got %d dims for %v, want %d for %v", de.Got, de.Model, tt.dims, testModel)
			}
			_, err = s.SearchVectors(ctx, v, 10, Filter{})
			if !errors.As(err, &de) {
				t.Errorf("search: got %v, want *DimensionError", err)
			}
		})
	}
	if _, err := s.GetDocument(ctx, DocumentID("https://example.com/x")); !errors.Is(err, ErrNotFound) {
		t.Errorf("refused document was stored: %v", err)
	}
}

func TestUpsertRejectsBadInput(t *testing.T) {
	s := newStore(t)
	g := newClustered(4, 384, 2, 0.5)
	nan := g.next()
	nan[7] = float32(nanValue())
	tests := []struct {
		name   string
		doc    Document
		chunks []Chunk
		field  string
	}{
		{"no URL", Document{}, nil, "document URL"},
		{"relative URL", Document{URL: "/a/b"}, nil, "document URL"},
		{"ftp URL", Document{URL: "ftp://example.com/a"}, nil, "document URL"},
		{"foreign id", Document{URL: "https://example.com/", ID: "abc"}, nil, "document ID"},
		{"empty tag", Document{URL: "https://example.com/", Tags: []string{""}}, nil, "document tags"},
		{"NaN", Document{URL: "https://example.com/"}, []Chunk{{Embedding: nan}}, "chunk 0 vector"},
		{"zero vector", Document{URL: "https://example.com/"}, []Chunk{{Embedding: make([]float32, 384)}}, "chunk 0 vector"},
		{"invalid UTF-8 text", Document{URL: "https://example.com/"}, []Chunk{{Embedding: g.next(), Text: "ok \xff"}}, "chunk 0 text"},
		{"bad offsets", Document{URL: "https://example.com/"}, []Chunk{{Embedding: g.next(), StartOffset: 5, EndOffset: 4}}, "chunk 0 offsets"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := tt.doc
			_, err := s.UpsertDocument(context.Background(), &doc, tt.chunks, nil)
			var ve *ValidationError
			if !errors.As(err, &ve) || ve.Field != tt.field {
				t.Errorf("got %v, want a *ValidationError on %q", err, tt.field)
			}
		})
	}
}

func TestListDocumentsPages(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	g := newClustered(5, 384, 2, 0.5)
	want := map[string]bool{}
	for i := range 7 {
		d := &Document{URL: fmt.Sprintf("https://%s/p%d", []string{"a.example", "b.example"}[i%2], i)}
		if _, err := s.UpsertDocument(ctx, d, makeChunks(g, 1, "x"), nil); err != nil {
			t.Fatal(err)
		}
		want[d.ID] = true
	}
	got := map[string]bool{}
	after, pages := "", 0
	for {
		p, err := s.ListDocuments(ctx, ListOptions{After: after, Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, d := range p.Documents {
			if got[d.ID] {
				t.Errorf("document %s listed twice", d.ID)
			}
			got[d.ID] = true
		}
		if p.NextAfter == "" {
			break
		}
		after = p.NextAfter
	}
	if diff := cmp.Diff(want, got); diff != "" || pages != 3 {
		t.Errorf("listed over %d pages, want 3; documents (-want +got):\n%s", pages, diff)
	}
	p, err := s.ListDocuments(ctx, ListOptions{Domain: "a.example"})
	if err != nil || len(p.Documents) != 4 {
		t.Errorf("domain a.example: got %d (%v), want 4", len(p.Documents), err)
	}
	if _, err := s.ListDocuments(ctx, ListOptions{Limit: 5000}); !errors.Is(err, ErrInvalid) {
		t.Errorf("limit 5000: got %v, want ErrInvalid", err)
	}
}

func TestVectorRoundTrip(t *testing.T) {
	in := []float32{0, 1, -1.5, 3.25e-7, 65504}
	b := EncodeVector(in)
	if len(b) != 20 || b[4] != 0 || b[7] != 0x3f { // 1.0 = 0x3f800000, little-endian
		t.Errorf("EncodeVector: got % x, want little-endian float32", b)
	}
	out, err := DecodeVector(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, out); diff != "" {
		t.Errorf("round trip (-in +out):\n%s", diff)
	}
	if _, err := DecodeVector(b[:3]); err == nil {
		t.Error("DecodeVector of 3 bytes: got nil error")
	}
}

// TestNonASCIIIdentifiers: ids and cursors outside ASCII cannot name a row of
// the ASCII id columns; they are "not found" or "invalid", never a MariaDB
// collation error (found by schemathesis through the crawler's API).
func TestNonASCIIIdentifiers(t *testing.T) {
	st := newStore(t)
	ctx := context.Background()
	for _, id := range []string{"é", "1¢\"¬X7", "\U0010ffff"} {
		if _, err := st.GetDocument(ctx, id); !errors.Is(err, ErrNotFound) {
			t.Errorf("GetDocument(%q): got %v, want ErrNotFound", id, err)
		}
		if _, err := st.DeleteDocument(ctx, id, nil); !errors.Is(err, ErrNotFound) {
			t.Errorf("DeleteDocument(%q): got %v, want ErrNotFound", id, err)
		}
		if _, err := st.GetJob(ctx, id); !errors.Is(err, ErrNotFound) {
			t.Errorf("GetJob(%q): got %v, want ErrNotFound", id, err)
		}
		if _, err := st.CancelJob(ctx, id); !errors.Is(err, ErrNotFound) {
			t.Errorf("CancelJob(%q): got %v, want ErrNotFound", id, err)
		}
		var ve *ValidationError
		if _, err := st.ListDocuments(ctx, ListOptions{After: id}); !errors.As(err, &ve) || ve.Field != "after" {
			t.Errorf("ListDocuments(after %q): got %v, want a validation error naming after", id, err)
		}
		if _, err := st.ListDocuments(ctx, ListOptions{Domain: id}); !errors.As(err, &ve) || ve.Field != "domain" {
			t.Errorf("ListDocuments(domain %q): got %v, want a validation error naming domain", id, err)
		}
	}
}

// TestSetDocumentTags: the tags are replaced in place (content, chunks and
// created_at untouched, updated_at moves), with one update change and no
// outbox row; bad tags are refused and unknown ids are ErrNotFound.
func TestSetDocumentTags(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	g := newClustered(7, 384, 2, 0.5)
	doc := &Document{URL: "https://docs.example.com/tagged", Title: "Tagged", ContentHash: "h", Tags: []string{"python-docs"}}
	if _, err := s.UpsertDocument(ctx, doc, makeChunks(g, 2, "t"), json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	before, err := s.GetDocument(ctx, doc.ID)
	if err != nil {
		t.Fatal(err)
	}
	chunksBefore, _ := s.DocumentChunks(ctx, doc.ID)
	seq, _ := s.LatestSeq(ctx)
	outbox, _ := s.OutboxItems(ctx, 100)

	got, err := s.SetDocumentTags(ctx, doc.ID, []string{"python", "stable"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"python", "stable"}, got.Tags); diff != "" {
		t.Errorf("tags (-want +got):\n%s", diff)
	}
	if !got.CreatedAt.Equal(before.CreatedAt) || got.UpdatedAt.Before(before.UpdatedAt) || got.ContentHash != "h" || got.ChunkCount != 2 {
		t.Errorf("document after retag: %+v, before %+v", got, before)
	}
	chunksAfter, _ := s.DocumentChunks(ctx, doc.ID)
	if diff := cmp.Diff(chunksBefore, chunksAfter); diff != "" {
		t.Errorf("chunks changed (-before +after):\n%s", diff)
	}
	changes, err := s.Changes(ctx, seq, 10)
	if err != nil || len(changes) != 1 || changes[0].Op != OpUpdate || changes[0].DocumentID != doc.ID {
		t.Errorf("changes after retag: %+v %v, want one update of the document", changes, err)
	}
	if after, _ := s.OutboxItems(ctx, 100); len(after) != len(outbox) {
		t.Errorf("outbox rows: %d, want %d (kg holds no tags)", len(after), len(outbox))
	}
	var ve *ValidationError
	if _, err := s.SetDocumentTags(ctx, doc.ID, []string{""}); !errors.As(err, &ve) {
		t.Errorf("empty tag: got %v, want a ValidationError", err)
	}
	if _, err := s.SetDocumentTags(ctx, DocumentID("https://docs.example.com/none"), nil); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown document: got %v, want ErrNotFound", err)
	}
}
