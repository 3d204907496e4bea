package corpus

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kgsearch/kgsearch/pkg/extract"
	"github.com/kgsearch/kgsearch/pkg/graph"
)

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

// learned feeds a learner two documents whose headings name "Quillwort Cache".
func learned(t *testing.T) (*extract.Learner, *extract.Extractor) {
	t.Helper()
	l := extract.NewLearner(extract.LearnerConfig{})
	x, err := extract.New(extract.WithLearner(l))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b"} {
		x.Document(extract.Document{ID: id, Title: "Quillwort Cache guide", Headings: []string{"Quillwort Cache guide"},
			Chunks: []extract.Chunk{{ID: id + "1", Text: "The Quillwort Cache keeps hot rows in memory and uses Redis."}}})
	}
	return l, x
}

func finds(x *extract.Extractor, q, id string) bool {
	for _, e := range x.Query(q) {
		if e.ID == id {
			return true
		}
	}
	return false
}

func TestSaveLoad(t *testing.T) {
	l, x := learned(t)
	if !finds(x, "quillwort cache tuning", "quillwort-cache") {
		t.Fatalf("precondition: the learner did not promote Quillwort Cache")
	}
	path := filepath.Join(t.TempDir(), "kg", "learner.json")
	if err := SaveLearner(path, l); err != nil {
		t.Fatalf("save: %v", err)
	}
	got, err := LoadLearner(path, extract.LearnerConfig{}, discard)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if got.Documents() != 2 {
		t.Errorf("documents: got %d, want 2", got.Documents())
	}
	x2, err := extract.New(extract.WithLearner(got))
	if err != nil {
		t.Fatal(err)
	}
	if !finds(x2, "quillwort cache tuning", "quillwort-cache") {
		t.Errorf("after load: query does not find the learned term")
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("folder: got %d files, want only learner.json (no temporary files left)", len(entries))
	}
}

func TestLoadMissingAndDamaged(t *testing.T) {
	dir := t.TempDir()
	l, err := LoadLearner(filepath.Join(dir, "none.json"), extract.LearnerConfig{}, discard)
	if err != nil || l == nil || l.Documents() != 0 {
		t.Fatalf("missing file: got %v, %v; want an empty learner", l, err)
	}
	bad := filepath.Join(dir, "learner.json")
	if err := os.WriteFile(bad, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err = LoadLearner(bad, extract.LearnerConfig{}, discard)
	if err != nil || l == nil || l.Documents() != 0 {
		t.Fatalf("damaged file: got %v, %v; want an empty learner", l, err)
	}
	if _, err := os.Stat(bad); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("damaged file: still at %s, want it moved aside", bad)
	}
	moved, _ := filepath.Glob(bad + ".bad-*")
	if len(moved) != 1 {
		t.Errorf("damaged file: got %v, want one %s.bad-<time>", moved, bad)
	}
}

func TestSaver(t *testing.T) {
	l, _ := learned(t)
	path := filepath.Join(t.TempDir(), "learner.json")
	var changes atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		done <- Saver{Path: path, Learner: l, Interval: 10 * time.Millisecond, Changes: changes.Load, Logger: discard}.Run(ctx)
	}()
	time.Sleep(50 * time.Millisecond)
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("no changes: got a saved file (%v), want none", err)
	}
	changes.Add(1)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("saver: %v", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("after a change and shutdown: %v, want the state saved", err)
	}
	if !bytes.Contains(data, []byte("quillwort")) {
		t.Errorf("saved state does not hold the learned term")
	}
}

type fakeLister []graph.EntityStats

func (f fakeLister) EntitiesByPrefix(_ context.Context, prefix, typ string, limit int) ([]graph.EntityStats, error) {
	if prefix != "" || typ != "" {
		return nil, errors.New("want the most frequent entities of any type")
	}
	return f[:min(limit, len(f))], nil
}

func TestRefreshGazetteer(t *testing.T) {
	x, err := extract.New()
	if err != nil {
		t.Fatal(err)
	}
	g := fakeLister{
		{EntityRef: graph.EntityRef{ID: "postgresql", Name: "PostgreSQL", Type: "database"}, DocFreq: 9}, // known already
		{EntityRef: graph.EntityRef{ID: "marlinspike-db", Name: "Marlinspike DB", Type: "database"}, DocFreq: 5},
		{EntityRef: graph.EntityRef{ID: "odd", Name: "Odd", Type: "no_such_type"}, DocFreq: 4},
		{EntityRef: graph.EntityRef{ID: "other-id", Name: "Mismatched Name", Type: "concept"}, DocFreq: 3},
		{EntityRef: graph.EntityRef{ID: "once-seen-lib", Name: "OnceSeen Lib", Type: "library"}, DocFreq: 1},
	}
	// Junk a corpus gives code-level extraction: everyday words that must not
	// start matching prose.
	junk := fakeLister{
		{EntityRef: graph.EntityRef{ID: "function", Name: "function", Type: "identifier"}, DocFreq: 70},
		{EntityRef: graph.EntityRef{ID: "modules", Name: "modules", Type: "concept"}, DocFreq: 50},
		{EntityRef: graph.EntityRef{ID: "values", Name: "VALUES", Type: "class"}, DocFreq: 40},
		{EntityRef: graph.EntityRef{ID: "without", Name: "without", Type: "identifier"}, DocFreq: 30},
	}
	if n, err := RefreshGazetteer(context.Background(), junk, x, 100, 2); err != nil || n != 0 {
		t.Errorf("junk entities: got %d added (%v), want 0", n, err)
	}
	for _, q := range []string{"a function without modules", "add values"} {
		if got := x.Query(q); len(got) != 0 {
			t.Errorf("query %q after loading junk: got %+v, want no entities", q, got)
		}
	}
	if finds(x, "marlinspike db replication", "marlinspike-db") {
		t.Fatalf("precondition: the bare extractor already knows Marlinspike DB")
	}
	for _, q := range []string{"a function without modules", "add values"} {
		if got := x.Query(q); len(got) != 0 {
			t.Fatalf("precondition: query %q finds %+v in the bare extractor", q, got)
		}
	}
	n, err := RefreshGazetteer(context.Background(), g, x, 100, 2)
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("added: got %d, want 1 (only Marlinspike DB is new, typed, consistent and in 2+ documents)", n)
	}
	if !finds(x, "marlinspike db replication", "marlinspike-db") {
		t.Errorf("after refresh: query does not find Marlinspike DB")
	}
	if finds(x, "onceseen lib", "once-seen-lib") {
		t.Errorf("an entity of one document was loaded")
	}
	if n, _ := RefreshGazetteer(context.Background(), g, x, 100, 2); n != 0 {
		t.Errorf("second refresh: got %d added, want 0", n)
	}
	if _, err := RefreshGazetteer(context.Background(), failing{}, x, 100, 2); err == nil || !strings.Contains(err.Error(), "refresh gazetteer") {
		t.Errorf("graph down: got %v, want a wrapped error", err)
	}
}

type failing struct{}

func (failing) EntitiesByPrefix(context.Context, string, string, int) ([]graph.EntityStats, error) {
	return nil, graph.ErrUnavailable
}
