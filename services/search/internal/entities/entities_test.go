package entities

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/kgsearch/kgsearch/pkg/kgapi"
	"github.com/kgsearch/kgsearch/pkg/kgapi/kgapitest"
)

func TestFinderKnowsTheGazetteer(t *testing.T) {
	f, err := NewFinder()
	if err != nil {
		t.Fatal(err)
	}
	got := f.Query("postgres streaming replication")
	if len(got) == 0 || got[0].Name != "PostgreSQL" || got[0].Text != "postgres" || got[0].Start != 0 || got[0].End != 8 {
		t.Errorf("got %+v, want PostgreSQL at [0,8)", got)
	}
}

func TestRefreshAddsLearnedEntities(t *testing.T) {
	f, err := NewFinder()
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Query("tune the frobnicator cache"); len(got) != 0 {
		t.Fatalf("before refresh: got %+v, want nothing", got)
	}
	kg := kgapitest.New(t)
	kg.AddEntity("frobnicator", "Frobnicator", "library", map[string]float64{"1": 1}, func(string) string { return "d" })
	kg.AddEntity("oddtype", "Oddity", "no_such_type", map[string]float64{"2": 1}, func(string) string { return "d" })
	n, err := f.Refresh(context.Background(), kgapi.NewClient(kg.URL, nil, ""), 100)
	if err != nil || n != 1 {
		t.Fatalf("Refresh: added %d, err %v; want 1 (the unknown type is skipped)", n, err)
	}
	got := f.Query("tune the frobnicator cache")
	if len(got) != 1 || got[0].Name != "Frobnicator" || got[0].Type != "library" {
		t.Errorf("after refresh: got %+v, want Frobnicator (library)", got)
	}
	kg.SetDown(true)
	if _, err := f.Refresh(context.Background(), kgapi.NewClient(kg.URL, nil, ""), 100); err == nil {
		t.Error("Refresh with kg down: got no error")
	}
	if got := f.Query("frobnicator"); len(got) != 1 {
		t.Errorf("a failed refresh must keep what was learned: got %+v", got)
	}
}

func TestRefreshSkipsEverydayWords(t *testing.T) {
	f, err := NewFinder()
	if err != nil {
		t.Fatal(err)
	}
	kg := kgapitest.New(t)
	doc := func(string) string { return "d" }
	// What the learner types on the Python manual: "a" (file), "parse" (function).
	kg.AddEntity("file:a", "a", "file", map[string]float64{"1": 1}, doc)
	kg.AddEntity("function:parse", "parse", "function", map[string]float64{"2": 1}, doc)
	kg.AddEntity("library:frobnicator", "frobnicator", "library", map[string]float64{"3": 1}, doc)
	n, err := f.Refresh(context.Background(), kgapi.NewClient(kg.URL, nil, ""), 100)
	if err != nil || n != 1 {
		t.Fatalf("Refresh: added %d, err %v; want 1 (only frobnicator)", n, err)
	}
	got := f.Query("how do i parse a file with frobnicator")
	if len(got) != 1 || got[0].Name != "frobnicator" {
		t.Errorf("got %+v, want only frobnicator: everyday words are no query entities", got)
	}
}

// limitLister records the limit asked for and answers with err.
type limitLister struct {
	limit int
	err   error
	calls func()
}

func (l *limitLister) Entities(_ context.Context, _, _ string, limit int) (*kgapi.EntityList, error) {
	l.limit = limit
	if l.calls != nil {
		l.calls()
	}
	if l.err != nil {
		return nil, l.err
	}
	return &kgapi.EntityList{}, nil
}

func TestRefreshAsksWithinKgsCap(t *testing.T) {
	f, err := NewFinder()
	if err != nil {
		t.Fatal(err)
	}
	l := &limitLister{}
	if _, err := f.Refresh(context.Background(), l, 5000); err != nil {
		t.Fatal(err)
	}
	if l.limit != kgapi.MaxEntityList {
		t.Errorf("asked kg for %d entities, want at most %d (kg refuses more)", l.limit, kgapi.MaxEntityList)
	}
}

func TestRunRefreshWarnsWhenKgRefuses(t *testing.T) {
	f, err := NewFinder()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	l := &limitLister{err: &kgapi.StatusError{Status: 400, Detail: "limit is outside 1..1000"}, calls: func() {
		if calls++; calls == 2 { // the first refusal has been logged
			cancel()
		}
	}}
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	f.RunRefresh(ctx, l, time.Millisecond, 100, logger)
	out := buf.String()
	if !strings.Contains(out, "level=WARN") || !strings.Contains(out, "learned entities are not loaded") || !strings.Contains(out, "status=400") {
		t.Errorf("log %q: want a warning naming kg's refusal", out)
	}
}
