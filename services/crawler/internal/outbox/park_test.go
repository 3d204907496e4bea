package outbox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/kgsearch/kgsearch/pkg/kgapi"
	"github.com/kgsearch/kgsearch/pkg/store"
)

// refusingKG is kg's HTTP API answering every ingest and delete with one status
// and a problem document; 200/204 when status is 0; hang makes it answer only
// when the client gives up.
type refusingKG struct {
	status atomic.Int64
	hang   atomic.Bool
	calls  atomic.Int64
}

func (k *refusingKG) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	k.calls.Add(1)
	// Read the body: the server notices a client that went away (and cancels
	// r.Context) only once the request is read.
	_, _ = io.Copy(io.Discard, r.Body)
	if k.hang.Load() {
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
		return
	}
	switch st := int(k.status.Load()); {
	case st != 0:
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(st)
		fmt.Fprintf(w, `{"type":"about:blank","title":"%s","status":%d,"detail":"kg says %d"}`, http.StatusText(st), st, st)
	case r.Method == http.MethodDelete:
		w.WriteHeader(http.StatusNoContent)
	default:
		_, _ = w.Write([]byte(`{"document_id":"d"}`))
	}
}

// memStore is an outbox table in memory that records what the worker did with
// each row.
type memStore struct {
	mu     sync.Mutex
	items  []store.OutboxItem
	acked  []int64
	failed []int64
	parks  []park
}

type park struct {
	id     int64
	status int
	reason string
}

func (s *memStore) ClaimOutbox(context.Context, string, int, time.Duration) ([]store.OutboxItem, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	items := s.items
	s.items = nil
	return items, nil
}

func (s *memStore) AckOutbox(_ context.Context, id int64, _ string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.acked = append(s.acked, id)
	return nil
}

func (s *memStore) FailOutbox(_ context.Context, id int64, _ string, _ error) (time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failed = append(s.failed, id)
	return time.Now(), nil
}

func (s *memStore) ParkOutbox(_ context.Context, id int64, _ string, status int, reason string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.parks = append(s.parks, park{id, status, reason})
	return true, nil
}

func (s *memStore) OutboxStats(context.Context) (store.OutboxStats, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return store.OutboxStats{Parked: int64(len(s.parks))}, nil
}

func upsertRow(t *testing.T, id int64) store.OutboxItem {
	t.Helper()
	payload, err := json.Marshal(kgapi.Document{ID: "d1", URL: "https://docs.example/a"})
	if err != nil {
		t.Fatal(err)
	}
	return store.OutboxItem{ID: id, Kind: store.OutboxUpsert, DocumentID: "d1", Payload: payload, Attempts: 1}
}

func deleteRow(id int64) store.OutboxItem {
	return store.OutboxItem{ID: id, Kind: store.OutboxDelete, DocumentID: "d1", Payload: json.RawMessage(`{"id":"d1"}`), Attempts: 1}
}

// countLevel counts the JSON log lines at level.
func countLevel(logs *bytes.Buffer, level string) int {
	return strings.Count(logs.String(), `"level":"`+level+`"`)
}

// TestRefusalsParkOutagesRetry: what kg answers decides between delivered,
// retried (kg down, overloaded, timing out, or refusing every request) and parked
// (kg refuses this document: 400, 413, 422, or a row that cannot be sent).
func TestRefusalsParkOutagesRetry(t *testing.T) {
	cases := []struct {
		name   string
		row    func(t *testing.T) store.OutboxItem
		status int  // kg's answer; 0 = success
		hang   bool // kg does not answer before the client's timeout
		down   bool // nothing listens
		want   outcome
	}{
		{name: "ingest 400", row: func(t *testing.T) store.OutboxItem { return upsertRow(t, 1) }, status: 400, want: parked},
		{name: "ingest 413", row: func(t *testing.T) store.OutboxItem { return upsertRow(t, 1) }, status: 413, want: parked},
		{name: "ingest 422", row: func(t *testing.T) store.OutboxItem { return upsertRow(t, 1) }, status: 422, want: parked},
		{name: "delete 400", row: func(*testing.T) store.OutboxItem { return deleteRow(2) }, status: 400, want: parked},
		{name: "undecodable payload", row: func(*testing.T) store.OutboxItem {
			return store.OutboxItem{ID: 3, Kind: store.OutboxUpsert, DocumentID: "d1", Payload: json.RawMessage(`"not a document"`), Attempts: 1}
		}, want: parked},
		{name: "ingest 500", row: func(t *testing.T) store.OutboxItem { return upsertRow(t, 1) }, status: 500, want: retried},
		{name: "ingest 503", row: func(t *testing.T) store.OutboxItem { return upsertRow(t, 1) }, status: 503, want: retried},
		{name: "ingest 429", row: func(t *testing.T) store.OutboxItem { return upsertRow(t, 1) }, status: 429, want: retried},
		{name: "ingest 408", row: func(t *testing.T) store.OutboxItem { return upsertRow(t, 1) }, status: 408, want: retried},
		{name: "ingest 401 (wrong key)", row: func(t *testing.T) store.OutboxItem { return upsertRow(t, 1) }, status: 401, want: retried},
		{name: "ingest 404 (wrong URL)", row: func(t *testing.T) store.OutboxItem { return upsertRow(t, 1) }, status: 404, want: retried},
		{name: "ingest timeout", row: func(t *testing.T) store.OutboxItem { return upsertRow(t, 1) }, hang: true, want: retried},
		{name: "kg not listening", row: func(t *testing.T) store.OutboxItem { return upsertRow(t, 1) }, down: true, want: retried},
		{name: "delete 503", row: func(*testing.T) store.OutboxItem { return deleteRow(2) }, status: 503, want: retried},
		{name: "delete 404 (unknown document)", row: func(*testing.T) store.OutboxItem { return deleteRow(2) }, status: 404, want: delivered},
		{name: "ingest 200", row: func(t *testing.T) store.OutboxItem { return upsertRow(t, 1) }, want: delivered},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake := &refusingKG{}
			fake.status.Store(int64(tc.status))
			fake.hang.Store(tc.hang)
			srv := httptest.NewServer(fake)
			defer srv.Close()
			if tc.down {
				srv.Close()
			}
			row := tc.row(t)
			st := &memStore{items: []store.OutboxItem{row}}
			var logs bytes.Buffer
			logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			reg := prometheus.NewRegistry()
			kg := kgapi.NewClient(srv.URL, &http.Client{Timeout: 200 * time.Millisecond}, "")
			w := New(Config{Owner: "test"}, st, kg, logger, reg)

			r, err := w.DeliverOnce(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			want := map[outcome]Result{delivered: {Delivered: 1}, retried: {Retried: 1}, parked: {Parked: 1}}[tc.want]
			if r != want {
				t.Fatalf("DeliverOnce: got %+v, want %+v", r, want)
			}
			switch tc.want {
			case parked:
				if len(st.parks) != 1 || st.parks[0].id != row.ID || st.parks[0].status != tc.status || len(st.failed)+len(st.acked) != 0 {
					t.Fatalf("store calls: parks %+v, failed %v, acked %v; want row %d parked with status %d only", st.parks, st.failed, st.acked, row.ID, tc.status)
				}
				wantReason := fmt.Sprintf("kg says %d", tc.status)
				if tc.status == 0 {
					wantReason = "decode payload"
				}
				if !strings.Contains(st.parks[0].reason, wantReason) {
					t.Errorf("park reason: got %q, want it to contain %q", st.parks[0].reason, wantReason)
				}
				if n := countLevel(&logs, "ERROR"); n != 1 || !strings.Contains(logs.String(), `"document":"d1"`) || !strings.Contains(logs.String(), `"reason":`) {
					t.Errorf("log: got %d error lines, want one with the document and reason:\n%s", n, logs.String())
				}
				if got := testutil.ToFloat64(w.parked); got != 1 {
					t.Errorf("parked gauge: got %v, want 1", got)
				}
				if err := w.ParkedCheck(context.Background()); err == nil || !strings.Contains(err.Error(), "1 outbox rows parked") {
					t.Errorf("readiness report: got %v, want the parked count", err)
				}
			case retried:
				if len(st.failed) != 1 || len(st.parks)+len(st.acked) != 0 {
					t.Fatalf("store calls: failed %v, parks %+v, acked %v; want the row released for a retry only", st.failed, st.parks, st.acked)
				}
			case delivered:
				if len(st.acked) != 1 || len(st.parks)+len(st.failed) != 0 {
					t.Fatalf("store calls: acked %v, parks %+v, failed %v; want the row acknowledged only", st.acked, st.parks, st.failed)
				}
			}
			if tc.want != parked {
				if err := w.ParkedCheck(context.Background()); err != nil {
					t.Errorf("readiness report without parked rows: got %v, want nil", err)
				}
			}
		})
	}
}

// A refused row that is attempted again (a retry after an outage answer) is
// logged at error level once, not at every retry.
func TestRetriedRefusalLogsOnce(t *testing.T) {
	fake := &refusingKG{}
	fake.status.Store(http.StatusForbidden)
	srv := httptest.NewServer(fake)
	defer srv.Close()
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	st := &memStore{}
	w := New(Config{Owner: "test"}, st, kgapi.NewClient(srv.URL, nil, ""), logger, nil)
	for attempt := 1; attempt <= 4; attempt++ {
		row := upsertRow(t, 1)
		row.Attempts = attempt
		st.items = []store.OutboxItem{row}
		if r, err := w.DeliverOnce(context.Background()); err != nil || r.Retried != 1 {
			t.Fatalf("attempt %d: got %+v, %v; want retried", attempt, r, err)
		}
	}
	if n := countLevel(&logs, "ERROR"); n != 1 {
		t.Errorf("got %d error lines over 4 attempts, want 1:\n%s", n, logs.String())
	}
}
