package store

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/google/go-cmp/cmp"

	"github.com/kgsearch/kgsearch/internal/testenv"
)

func TestServerVersionIsAtLeast11_8(t *testing.T) {
	s := newStore(t)
	v, err := s.Version(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		t.Fatalf("version %q: cannot parse", v)
	}
	major, _ := strconv.Atoi(parts[0])
	minor, _ := strconv.Atoi(parts[1])
	if major < 11 || major == 11 && minor < 8 {
		t.Errorf("got MariaDB %s, want >= 11.8 (vector indexes)", v)
	}
	if !strings.Contains(v, "MariaDB") {
		t.Errorf("got version %q, want a MariaDB server", v)
	}
}

func TestOpenRejectsBadConfig(t *testing.T) {
	tests := []struct {
		name  string
		cfg   Config
		field string
	}{
		{"empty DSN", Config{}, "DSN"},
		{"unparsable DSN", Config{DSN: "kgsearch@tcp(127.0.0.1:13306"}, "DSN"},
		{"no database", Config{DSN: "u:p@tcp(127.0.0.1:1)/"}, "DSN"},
		{"dims without name", Config{DSN: "u:p@tcp(127.0.0.1:1)/db", Model: Model{Dims: 384}}, "Model"},
		{"too many dims", Config{DSN: "u:p@tcp(127.0.0.1:1)/db", Model: Model{Name: "m", Dims: MaxDims + 1}}, "Model.Dims"},
		{"negative ef", Config{DSN: "u:p@tcp(127.0.0.1:1)/db", EfSearch: -1}, "EfSearch"},
		{"M too small", Config{DSN: "u:p@tcp(127.0.0.1:1)/db", HNSWM: 2}, "HNSWM"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Open(context.Background(), tt.cfg, nil)
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("got %v, want a *ValidationError", err)
			}
			if ve.Field != tt.field {
				t.Errorf("got field %q, want %q (%v)", ve.Field, tt.field, err)
			}
		})
	}
}

func TestOpenUnreachableIsNotReady(t *testing.T) {
	// Port 1 on loopback refuses connections.
	_, err := Open(context.Background(), Config{DSN: "u:p@tcp(127.0.0.1:1)/db?timeout=2s", Model: testModel}, nil)
	if !errors.Is(err, ErrNotReady) {
		t.Errorf("got %v, want ErrNotReady", err)
	}
}

func TestConcurrentMigrations(t *testing.T) {
	dsn := freshDatabase(t)
	const n = 4
	var wg sync.WaitGroup
	errs := make([]error, n)
	stores := make([]*Store, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stores[i], errs[i] = Open(context.Background(), Config{DSN: dsn, Model: testModel}, nil)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Open %d: %v", i, err)
		}
		defer stores[i].Close()
	}
	s := stores[0]
	rows, err := s.db.Query("SELECT version, name FROM schema_migrations ORDER BY version")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var v int
		var name string
		if err := rows.Scan(&v, &name); err != nil {
			t.Fatal(err)
		}
		got = append(got, strconv.Itoa(v)+"_"+name)
	}
	migs, err := loadMigrations(migrationFS)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, m := range migs {
		want = append(want, strconv.Itoa(m.version)+"_"+m.name)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("schema_migrations rows (-want +got):\n%s", diff)
	}
	for _, table := range []string{"documents", "chunks", "changes", "outbox", "crawl_jobs", "crawl_frontier", "blocklist", "embedding_model"} {
		var n int
		if err := s.db.QueryRow("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?", table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("table %s: got %d, want 1", table, n)
		}
	}
	// Re-opening applies nothing new and keeps working.
	again := openStore(t, dsn, testModel)
	var count int
	if err := again.db.QueryRow("SELECT COUNT(*) FROM schema_migrations").Scan(&count); err != nil {
		t.Fatal(err)
	}
	if count != len(want) {
		t.Errorf("after reopen: got %d migration rows, want %d", count, len(want))
	}
}

func TestModelMismatchAcrossReopen(t *testing.T) {
	dsn := freshDatabase(t)
	first := openStore(t, dsn, testModel)
	first.Close()

	tests := []struct {
		name    string
		model   Model
		wantErr bool
	}{
		{"same model", testModel, false},
		{"other name", Model{Name: "bge-small-en-v1.5", Dims: 384}, true},
		{"other dims", Model{Name: "all-MiniLM-L6-v2", Dims: 768}, true},
		{"reader without model", Model{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Open(context.Background(), Config{DSN: dsn, Model: tt.model}, nil)
			if !tt.wantErr {
				if err != nil {
					t.Fatalf("got %v, want no error", err)
				}
				defer s.Close()
				m, err := s.Model(context.Background())
				if err != nil || m != testModel {
					t.Errorf("got model %v (%v), want %v", m, err, testModel)
				}
				return
			}
			var mm *ModelMismatchError
			if !errors.As(err, &mm) {
				t.Fatalf("got %v, want *ModelMismatchError", err)
			}
			if !errors.Is(err, ErrModelMismatch) {
				t.Errorf("errors.Is(%v, ErrModelMismatch) = false", err)
			}
			if mm.Registered != testModel || mm.Requested != tt.model {
				t.Errorf("got registered %v requested %v, want %v and %v", mm.Registered, mm.Requested, testModel, tt.model)
			}
		})
	}
}

func TestReaderOnEmptyStoreIsNotReadyForVectors(t *testing.T) {
	s := openStore(t, freshDatabase(t), Model{})
	_, err := s.SearchVectors(context.Background(), make([]float32, 384), 10, Filter{})
	if !errors.Is(err, ErrNotReady) {
		t.Errorf("got %v, want ErrNotReady", err)
	}
}

func TestSplitStatements(t *testing.T) {
	src := "-- comment\nCREATE TABLE a (\n  x INT\n);\n\nINSERT INTO a VALUES (1);\n-- trailing\n"
	got := splitStatements(src)
	want := []string{"CREATE TABLE a (\n  x INT\n)", "INSERT INTO a VALUES (1)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("splitStatements (-want +got):\n%s", diff)
	}
}

// TestOpenRetryWaitsForADatabaseThatComesBack: with wait 0 (the services' choice)
// OpenRetry keeps trying while MariaDB refuses connections and opens the store
// once it answers, however long that takes; before, a crawler or search started
// during an outage gave up after its one minute and stayed down after MariaDB
// came back. The database is the real one behind a loopback address that
// refuses connections for 5 s and then forwards them; with a bound, OpenRetry
// still gives up after it.
func TestOpenRetryWaitsForADatabaseThatComesBack(t *testing.T) {
	mc, err := mysql.ParseDSN(freshDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	proxy := testenv.NewFaultProxy(t, mc.Addr)
	proxy.Down() // refused until Listen
	mc.Addr = proxy.Addr()
	cfg := Config{DSN: mc.FormatDSN(), Model: testModel}

	start := time.Now()
	if _, err := OpenRetry(context.Background(), cfg, nil, 3*time.Second, nil); !errors.Is(err, ErrNotReady) {
		t.Fatalf("bounded by 3s with the database refusing: got %v, want ErrNotReady", err)
	}
	if took := time.Since(start); took < 3*time.Second {
		t.Errorf("bounded by 3s: gave up after %s", took)
	}

	up := time.Now().Add(5 * time.Second)
	go func() {
		time.Sleep(time.Until(up))
		if err := proxy.Listen(); err != nil {
			t.Error(err)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	waits := 0
	s, err := OpenRetry(ctx, cfg, nil, 0, func(error) { waits++ })
	if err != nil {
		t.Fatalf("no bound, the database back after 5s: got %v, want the store", err)
	}
	defer s.Close()
	if time.Now().Before(up) || waits == 0 {
		t.Errorf("opened before the database answered (%d failures reported)", waits)
	}
}
