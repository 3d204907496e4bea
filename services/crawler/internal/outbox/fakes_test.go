package outbox

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/kgsearch/kgsearch/pkg/kgapi"
	"github.com/kgsearch/kgsearch/pkg/store"
)

// flakyStore is an outbox table whose acknowledgements fail while MariaDB is
// "down" (the first ackFailures calls).
type flakyStore struct {
	items       []store.OutboxItem
	ackFailures int
	acks        int
	failed      int
	parked      int
}

func (s *flakyStore) ClaimOutbox(context.Context, string, int, time.Duration) ([]store.OutboxItem, error) {
	items := s.items
	s.items = nil
	return items, nil
}

func (s *flakyStore) AckOutbox(context.Context, int64, string) error {
	s.acks++
	if s.acks <= s.ackFailures {
		return fmt.Errorf("ack outbox: %w", driver.ErrBadConn)
	}
	return nil
}

func (s *flakyStore) FailOutbox(context.Context, int64, string, error) (time.Time, error) {
	s.failed++
	return time.Now(), nil
}

func (s *flakyStore) ParkOutbox(context.Context, int64, string, int, string) (bool, error) {
	s.parked++
	return true, nil
}

func (s *flakyStore) OutboxStats(context.Context) (store.OutboxStats, error) {
	return store.OutboxStats{Parked: int64(s.parked)}, nil
}

type recordingKG struct {
	ingested, deleted []string
}

func (k *recordingKG) Ingest(_ context.Context, d kgapi.Document) (*kgapi.IngestResponse, error) {
	k.ingested = append(k.ingested, d.ID)
	return &kgapi.IngestResponse{DocumentID: d.ID}, nil
}

func (k *recordingKG) DeleteDocument(_ context.Context, id string) error {
	k.deleted = append(k.deleted, id)
	return nil
}

// TestAckWaitsOutMariaDB: a row delivered to kg is acknowledged once MariaDB
// answers again, not left to its lease (which would deliver it twice).
func TestAckWaitsOutMariaDB(t *testing.T) {
	payload, _ := json.Marshal(kgapi.Document{ID: "d1", URL: "https://docs.example/a"})
	del, _ := json.Marshal(store.DeletePayload{ID: "d2", URL: "https://docs.example/b"})
	st := &flakyStore{ackFailures: 2, items: []store.OutboxItem{
		{ID: 1, Kind: store.OutboxUpsert, DocumentID: "d1", Payload: payload},
		{ID: 2, Kind: store.OutboxDelete, DocumentID: "d2", Payload: del},
	}}
	kg := &recordingKG{}
	w := New(Config{Owner: "test"}, st, kg, nil, nil)
	r, err := w.DeliverOnce(context.Background())
	if err != nil || r != (Result{Delivered: 2}) {
		t.Fatalf("DeliverOnce: got %+v, %v; want 2 delivered", r, err)
	}
	if st.acks != 4 || st.failed != 0 {
		t.Errorf("acknowledgements: got %d tries and %d releases, want 4 tries (2 refused, then 2) and none released", st.acks, st.failed)
	}
	if len(kg.ingested) != 1 || len(kg.deleted) != 1 || kg.deleted[0] != "d2" {
		t.Errorf("kg calls: ingested %v, deleted %v; want d1 once and d2 deleted once", kg.ingested, kg.deleted)
	}
}

// TestAckGivesUpOnOtherErrors: only an unreachable database is waited for.
func TestAckGivesUpOnOtherErrors(t *testing.T) {
	w := New(Config{Owner: "test"}, &flakyStore{}, &recordingKG{}, nil, nil)
	calls := 0
	err := w.retryStore(context.Background(), func(context.Context) error { calls++; return store.ErrLeaseLost })
	if !errors.Is(err, store.ErrLeaseLost) || calls != 1 {
		t.Errorf("retryStore: got %v after %d calls, want ErrLeaseLost after 1", err, calls)
	}
}
