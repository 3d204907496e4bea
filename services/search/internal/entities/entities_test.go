package entities

import (
	"context"
	"testing"

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
