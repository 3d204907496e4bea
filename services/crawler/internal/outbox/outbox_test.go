package outbox

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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
	delivered, failed, err := w.DeliverOnce(ctx)
	if err != nil || delivered != 0 || failed != 1 {
		t.Fatalf("kg down: got delivered %d, failed %d, err %v; want 0, 1, nil", delivered, failed, err)
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
