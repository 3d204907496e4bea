package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/go-sql-driver/mysql"
)

// claimIDs claims every due row for owner and returns their ids.
func claimIDs(t *testing.T, s *Store, owner string) []int64 {
	t.Helper()
	items, err := s.ClaimOutbox(context.Background(), owner, 100, time.Minute)
	if err != nil {
		t.Fatalf("claim: %v", err)
	}
	var ids []int64
	for _, it := range items {
		ids = append(ids, it.ID)
	}
	return ids
}

func TestOutboxParkAndRequeue(t *testing.T) {
	s, err := Open(context.Background(), Config{DSN: freshDatabase(t), Model: testModel,
		OutboxBackoff: func(int) time.Duration { return time.Millisecond }}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	g := newClustered(40, 384, 2, 0.5)
	a := &Document{URL: "https://example.com/a"}
	b := &Document{URL: "https://example.com/b"}
	for _, d := range []*Document{a, b} {
		if _, err := s.UpsertDocument(ctx, d, makeChunks(g, 1, d.URL), json.RawMessage(`{"url":"`+d.URL+`"}`)); err != nil {
			t.Fatal(err)
		}
	}
	// A short lease: a parked row must stay unclaimed after its lease ran out.
	items, err := s.ClaimOutbox(ctx, "w1", 10, 5*time.Millisecond)
	if err != nil || len(items) != 2 || items[0].DocumentID != a.ID {
		t.Fatalf("claim: got %+v, %v; want a's and b's rows", items, err)
	}
	rowA, rowB := items[0].ID, items[1].ID

	if _, err := s.ParkOutbox(ctx, rowA, "w2", 413, "too large"); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("park by another owner: got %v, want ErrLeaseLost", err)
	}
	// A reason longer than the column, cut inside a multi-byte character.
	reason := strings.Repeat("é", MaxParkReason)
	parked, err := s.ParkOutbox(ctx, rowA, "w1", 413, reason)
	if err != nil || !parked {
		t.Fatalf("park: got %v, %v; want parked", parked, err)
	}
	if _, err := s.FailOutbox(ctx, rowB, "w1", errors.New("kg unavailable")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // b's 1 ms backoff
	for i := range 3 {
		ids := claimIDs(t, s, "w3")
		if len(ids) != 1 || ids[0] != rowB {
			t.Fatalf("claim %d after parking a: got rows %v, want only b's row %d", i, ids, rowB)
		}
		if _, err := s.FailOutbox(ctx, rowB, "w3", errors.New("kg unavailable")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	st, err := s.OutboxStats(ctx)
	if err != nil || st != (OutboxStats{Pending: 1, Parked: 1}) {
		t.Errorf("stats: got %+v, %v; want 1 pending, 1 parked", st, err)
	}
	list, err := s.ParkedOutbox(ctx, 10)
	if err != nil || len(list) != 1 {
		t.Fatalf("parked rows: got %+v, %v; want a's row", list, err)
	}
	p := list[0]
	if p.ID != rowA || p.ParkedStatus != 413 || p.ParkedAt.IsZero() || p.Payload != nil {
		t.Errorf("parked row: got id %d status %d at %v payload %s; want %d, 413, a time, no payload", p.ID, p.ParkedStatus, p.ParkedAt, p.Payload, rowA)
	}
	if len(p.ParkedReason) > MaxParkReason || !utf8.ValidString(p.ParkedReason) || !strings.HasPrefix(reason, p.ParkedReason) || len(p.ParkedReason) < MaxParkReason-1 {
		t.Errorf("park reason: got %d bytes (valid UTF-8 %v), want the reason's first %d bytes at most, whole characters", len(p.ParkedReason), utf8.ValidString(p.ParkedReason), MaxParkReason)
	}

	n, err := s.RequeueOutbox(ctx)
	if err != nil || n != 1 {
		t.Fatalf("requeue: got %d, %v; want 1", n, err)
	}
	if st, _ := s.OutboxStats(ctx); st != (OutboxStats{Pending: 2}) {
		t.Errorf("stats after requeue: got %+v, want 2 pending, none parked", st)
	}
	again, err := s.ClaimOutbox(ctx, "w4", 10, time.Minute)
	if err != nil || len(again) == 0 || again[0].ID != rowA {
		t.Fatalf("claim after requeue: got %+v, %v; want a's row first", again, err)
	}
	if again[0].Attempts != 1 || !again[0].ParkedAt.IsZero() {
		t.Errorf("requeued row: got attempt %d, parked at %v; want a fresh attempt 1, not parked", again[0].Attempts, again[0].ParkedAt)
	}
	if n, err := s.RequeueOutbox(ctx); err != nil || n != 0 {
		t.Errorf("requeue with nothing parked: got %d, %v; want 0", n, err)
	}
}

// A parked row never holds back or outlives a newer state of its document.
func TestOutboxParkedRowsAndNewerStates(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	g := newClustered(41, 384, 2, 0.5)
	a := &Document{URL: "https://example.com/a"}
	upsert := func(v string) {
		t.Helper()
		if _, err := s.UpsertDocument(ctx, a, makeChunks(g, 1, v), json.RawMessage(`{"v":"`+v+`"}`)); err != nil {
			t.Fatal(err)
		}
	}
	rows := func() []OutboxItem {
		t.Helper()
		items, err := s.OutboxItems(ctx, 10)
		if err != nil {
			t.Fatal(err)
		}
		return items
	}

	// v2 is enqueued while v1 is in flight; kg then refuses v1: v1 is dropped, not parked.
	upsert("1")
	v1 := claimIDs(t, s, "w1")
	upsert("2")
	if parked, err := s.ParkOutbox(ctx, v1[0], "w1", 400, "bad"); err != nil || parked {
		t.Fatalf("park a superseded row: got parked %v, %v; want it dropped", parked, err)
	}
	if got := rows(); len(got) != 1 || string(got[0].Payload) != `{"v":"2"}` {
		t.Fatalf("rows after dropping v1: got %+v, want v2 only", got)
	}

	// v2 is refused too and parked; a re-crawl (v3) supersedes it and is delivered.
	v2 := claimIDs(t, s, "w1")
	if parked, err := s.ParkOutbox(ctx, v2[0], "w1", 422, "invalid"); err != nil || !parked {
		t.Fatalf("park v2: got %v, %v; want parked", parked, err)
	}
	upsert("3")
	if got := rows(); len(got) != 1 || !got[0].ParkedAt.IsZero() {
		t.Fatalf("rows after v3: got %+v, want v3 alone, not parked", got)
	}
	v3 := claimIDs(t, s, "w1")
	if len(v3) != 1 {
		t.Fatalf("claim v3: got %v, want one row", v3)
	}
	if parked, err := s.ParkOutbox(ctx, v3[0], "w1", 413, "large"); err != nil || !parked {
		t.Fatalf("park v3: got %v, %v", parked, err)
	}
	// Deleting the document supersedes the parked v3 with the delete.
	if _, err := s.DeleteDocument(ctx, a.ID, nil); err != nil {
		t.Fatal(err)
	}
	if got := rows(); len(got) != 1 || got[0].Kind != OutboxDelete || !got[0].ParkedAt.IsZero() {
		t.Fatalf("rows after delete: got %+v, want the delete alone", got)
	}

	// Should a parked row ever sit before a newer one (a row parked by hand), the
	// newer one is still claimed, and requeueing drops the old state.
	del := rows()[0]
	if _, err := s.db.ExecContext(ctx, `INSERT INTO outbox (kind, document_id, payload, next_attempt_at, created_at,
		parked_at, parked_status, parked_reason) VALUES ('upsert', ?, '{}', UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), 400, 'old')`, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, "UPDATE outbox SET id = id + 1000 WHERE id = ?", del.ID); err != nil {
		t.Fatal(err)
	}
	got := claimIDs(t, s, "w2")
	if len(got) != 1 || got[0] != del.ID+1000 {
		t.Fatalf("claim with an older parked row: got %v, want the delete %d", got, del.ID+1000)
	}
	if n, err := s.RequeueOutbox(ctx); err != nil || n != 0 {
		t.Errorf("requeue of a superseded parked row: got %d, %v; want 0", n, err)
	}
	if st, _ := s.OutboxStats(ctx); st != (OutboxStats{Pending: 1}) {
		t.Errorf("stats: got %+v, want the delete alone", st)
	}
}

// rawDB opens the test database without the store (no migrations).
func rawDB(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	mc, err := Config{DSN: dsn}.validate()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := mysql.NewConnector(mc)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	t.Cleanup(func() { db.Close() })
	return db
}

func columnExists(t *testing.T, db *sql.DB, table, column string) bool {
	t.Helper()
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM information_schema.columns
		WHERE table_schema = DATABASE() AND table_name = ? AND column_name = ?`, table, column).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

func indexExists(t *testing.T, db *sql.DB, table, index string) bool {
	t.Helper()
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM information_schema.statistics
		WHERE table_schema = DATABASE() AND table_name = ? AND index_name = ?`, table, index).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n > 0
}

// A database created by the previous schema (0001 only) with an undelivered row
// is upgraded in place by Open; the row is delivered or parked like a new one, and
// the migration can run again without harm.
func TestOutboxMigrationUpgradesOldDatabase(t *testing.T) {
	ctx := context.Background()
	dsn := freshDatabase(t)
	db := rawDB(t, dsn)
	// The previous binary: 0001 applied and recorded, a row waiting.
	migs := migrateThrough(t, db, 1)
	var parkedMig migration
	for _, m := range migs {
		if m.name == "outbox_parked" {
			parkedMig = m
		}
	}
	if migs[0].version != 1 || parkedMig.version == 0 {
		t.Fatalf("migrations: got %+v, want 0001 and an outbox_parked one", migs)
	}
	if _, err := db.Exec(`INSERT INTO outbox (kind, document_id, payload, next_attempt_at, created_at)
		VALUES ('upsert', 'd0000000000000000000000000000001', '{}', UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))`); err != nil {
		t.Fatal(err)
	}
	if columnExists(t, db, "outbox", "parked_at") || !indexExists(t, db, "outbox", "outbox_due") {
		t.Fatal("the old schema already has parked_at or lacks outbox_due: the test does not start from the previous schema")
	}

	s := openStore(t, dsn, testModel)
	var version int
	if err := db.QueryRow("SELECT MAX(version) FROM schema_migrations").Scan(&version); err != nil || version != migs[len(migs)-1].version {
		t.Errorf("schema version after Open: got %d (%v), want %d", version, err, migs[len(migs)-1].version)
	}
	for _, c := range []string{"parked_at", "parked_status", "parked_reason"} {
		if !columnExists(t, db, "outbox", c) {
			t.Errorf("column outbox.%s missing after the upgrade", c)
		}
	}
	if !indexExists(t, db, "outbox", "outbox_claim") || indexExists(t, db, "outbox", "outbox_due") {
		t.Errorf("indexes after the upgrade: want outbox_claim and no outbox_due")
	}
	items, err := s.ClaimOutbox(ctx, "w1", 10, time.Minute)
	if err != nil || len(items) != 1 {
		t.Fatalf("claim the old row: got %+v, %v", items, err)
	}
	if parked, err := s.ParkOutbox(ctx, items[0].ID, "w1", 400, "bad document"); err != nil || !parked {
		t.Fatalf("park the old row: got %v, %v", parked, err)
	}
	if ids := claimIDs(t, s, "w2"); len(ids) != 0 {
		t.Errorf("claim after parking: got %v, want nothing", ids)
	}

	// Running the migration again (a crash before it was recorded) changes nothing.
	for i, stmt := range parkedMig.stmts {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%04d statement %d again: %v", parkedMig.version, i+1, err)
		}
	}
	if st, err := s.OutboxStats(ctx); err != nil || st != (OutboxStats{Parked: 1}) {
		t.Errorf("stats after the second run: got %+v, %v; want the row still parked", st, err)
	}
}

// migrateThrough brings an empty database to the schema of an older binary: the
// migrations up to version applied and recorded in schema_migrations, as Open would
// have left them. It returns every migration the current binary has.
func migrateThrough(t *testing.T, db *sql.DB, version int) []migration {
	t.Helper()
	migs, err := loadMigrations(migrationFS)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE schema_migrations (version INT NOT NULL PRIMARY KEY,
		name VARCHAR(255) NOT NULL, applied_at DATETIME(6) NOT NULL) ENGINE=InnoDB`); err != nil {
		t.Fatal(err)
	}
	for _, m := range migs {
		if m.version > version {
			continue
		}
		for _, stmt := range m.stmts {
			if _, err := db.Exec(stmt); err != nil {
				t.Fatalf("%04d: %v", m.version, err)
			}
		}
		if _, err := db.Exec("INSERT INTO schema_migrations VALUES (?, ?, UTC_TIMESTAMP(6))", m.version, m.name); err != nil {
			t.Fatal(err)
		}
	}
	return migs
}
