package outbox

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/kgsearch/kgsearch/internal/testenv"
	"github.com/kgsearch/kgsearch/pkg/kgapi"
	"github.com/kgsearch/kgsearch/pkg/kgapi/kgapitest"
	"github.com/kgsearch/kgsearch/pkg/store"
)

func freshDatabase(t *testing.T) string {
	t.Helper()
	return testenv.FreshMariaDB(t)
}

func TestOutboxSurvivesKGDowntime(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{
		DSN: freshDatabase(t), Model: store.Model{Name: "test-model", Dims: 3},
		OutboxBackoff: func(int) time.Duration { return 20 * time.Millisecond },
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	kg := kgapitest.New(t)
	kg.SetDown(true)

	url := "https://example.com/a"
	id := store.DocumentID(url)
	doc := kgapi.Document{ID: id, URL: url, Title: "A", Chunks: []kgapi.Chunk{{ID: "1", Ordinal: 0, Text: "alpha"}},
		Links: []kgapi.Link{{URL: "https://example.com/b", Anchor: "b"}}}
	payload, _ := json.Marshal(doc)
	if _, err := st.UpsertDocument(ctx, &store.Document{URL: url, Title: "A"},
		[]store.Chunk{{Text: "alpha", TokenCount: 1, EndOffset: 5, Embedding: []float32{1, 0, 0}}}, payload); err != nil {
		t.Fatal(err)
	}

	w := New(Config{Owner: "test-outbox", Batch: 10}, st, kgapi.NewClient(kg.URL, nil, ""), nil, nil)
	r, err := w.DeliverOnce(ctx)
	if err != nil || r != (Result{Retried: 1}) {
		t.Fatalf("kg down: got %+v, %v; want 1 retried", r, err)
	}
	items, err := st.OutboxItems(ctx, 10)
	if err != nil || len(items) != 1 {
		t.Fatalf("outbox after a failed delivery: got %d rows (%v), want the row kept", len(items), err)
	}
	if items[0].Attempts != 1 || !strings.Contains(items[0].LastError, "unavailable") {
		t.Errorf("kept row: got attempts %d, last error %q; want 1 and the kg error", items[0].Attempts, items[0].LastError)
	}

	// kg comes back; the running worker delivers after the backoff.
	kg.SetDown(false)
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	w.cfg.Poll = 10 * time.Millisecond
	go func() { defer close(done); _ = w.Run(runCtx) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		items, err := st.OutboxItems(ctx, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(items) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("outbox still holds %d rows 10s after kg came back", len(items))
		}
		time.Sleep(20 * time.Millisecond)
	}

	// A delete goes out as a delete.
	if _, err := st.DeleteDocument(ctx, id, nil); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		if n := len(kg.Deleted()); n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("kg saw %d deletes, want 1", len(kg.Deleted()))
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-done

	if diff := cmp.Diff([]kgapi.Document{doc}, kg.Ingested()); diff != "" {
		t.Errorf("documents kg ingested (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{id}, kg.Deleted()); diff != "" {
		t.Errorf("documents kg deleted (-want +got):\n%s", diff)
	}
}

// TestParkedRowWaitsForRequeue runs the worker on the real store: a document kg
// refuses with 413 is parked once and left alone, the other is delivered; after
// kg is fixed, the requeued row is delivered. A re-crawl of a parked document
// supersedes its parked row.
func TestParkedRowWaitsForRequeue(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{DSN: freshDatabase(t), Model: store.Model{Name: "test-model", Dims: 3}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	kg := &refusingKG{}
	srv := httptest.NewServer(kg)
	defer srv.Close()
	upsert := func(url, title string) string {
		t.Helper()
		id := store.DocumentID(url)
		payload, _ := json.Marshal(kgapi.Document{ID: id, URL: url, Title: title})
		if _, err := st.UpsertDocument(ctx, &store.Document{URL: url, Title: title},
			[]store.Chunk{{Text: title, TokenCount: 1, EndOffset: len(title), Embedding: []float32{1, 0, 0}}}, payload); err != nil {
			t.Fatal(err)
		}
		return id
	}
	big := upsert("https://example.com/big", "Big")
	reg := prometheus.NewRegistry()
	w := New(Config{Owner: "test-park", Batch: 10}, st, kgapi.NewClient(srv.URL, nil, ""), nil, reg)

	kg.status.Store(http.StatusRequestEntityTooLarge)
	if r, err := w.DeliverOnce(ctx); err != nil || r != (Result{Parked: 1}) {
		t.Fatalf("kg refuses: got %+v, %v; want 1 parked", r, err)
	}
	kg.status.Store(0)
	upsert("https://example.com/small", "Small")
	for i := range 3 {
		r, err := w.DeliverOnce(ctx)
		if err != nil || r.Parked != 0 || r.Retried != 0 {
			t.Fatalf("round %d after parking: got %+v, %v; want the parked row left alone", i, r, err)
		}
	}
	parked, err := st.ParkedOutbox(ctx, 10)
	if err != nil || len(parked) != 1 || parked[0].DocumentID != big || parked[0].ParkedStatus != 413 || parked[0].ParkedReason != "kg says 413" {
		t.Fatalf("parked rows: got %+v, %v; want big's row with 413 and kg's detail", parked, err)
	}
	if got := testutil.ToFloat64(w.parked); got != 1 {
		t.Errorf("parked gauge: got %v, want 1", got)
	}
	if err := w.ParkedCheck(ctx); err == nil {
		t.Error("readiness report with a parked row: got nil, want the count")
	}

	// kg fixed (limit raised): the operator requeues, the worker delivers.
	if n, err := st.RequeueOutbox(ctx); err != nil || n != 1 {
		t.Fatalf("requeue: got %d, %v; want 1", n, err)
	}
	if r, err := w.DeliverOnce(ctx); err != nil || r != (Result{Delivered: 1}) {
		t.Fatalf("after requeue: got %+v, %v; want 1 delivered", r, err)
	}
	if err := w.RefreshStats(ctx); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ToFloat64(w.parked); got != 0 || w.ParkedCheck(ctx) != nil {
		t.Errorf("after delivery: parked gauge %v, report %v; want 0 and nil", got, w.ParkedCheck(ctx))
	}

	// Parked again, then re-crawled with new content: the new row is delivered
	// and nothing stays parked.
	upsert("https://example.com/big", "Big v2")
	kg.status.Store(http.StatusUnprocessableEntity)
	if r, _ := w.DeliverOnce(ctx); r.Parked != 1 {
		t.Fatalf("v2: got %+v, want parked", r)
	}
	kg.status.Store(0)
	upsert("https://example.com/big", "Big v3")
	if r, err := w.DeliverOnce(ctx); err != nil || r != (Result{Delivered: 1}) {
		t.Fatalf("v3: got %+v, %v; want delivered", r, err)
	}
	if items, _ := st.OutboxItems(ctx, 10); len(items) != 0 {
		t.Errorf("outbox after v3: got %+v, want empty", items)
	}
}
