package pipeline

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/kgsearch/kgsearch/pkg/toon"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/ with the current output")

// golden compares got with testdata/name, or rewrites the file with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o600); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run go test -run %s -update to create it): %v", t.Name(), err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the output (go test -run %s -update rewrites it after a deliberate change)\ngot:\n%s\nwant:\n%s",
			path, t.Name(), got, want)
	}
}

// goldenResponse is a search response with every field the wire formats carry:
// two results (tags and entity mentions, one without a timestamp), expansion,
// suggestions, related entities, a degraded signal, token counts and explain.
func goldenResponse() *Response {
	return &Response{
		Query: QueryInfo{Original: "Python venv activate", Normalized: "python venv activate",
			Entities: []QueryEntity{{Text: "Python", Type: "programming_language", Confidence: 0.9}, {Text: "venv", Type: "module", Confidence: 0.85}},
			Intent:   "transactional", Confidence: 0.8,
			Variants: Variants{Original: "python venv activate", EntityEmphasised: "Python venv Python venv activate", EntityOnly: "Python venv"}},
		Exploration: Exploration{OriginalEntityCount: 2, ExpandedEntityCount: 1,
			ExpansionRelationships: []Relationship{{From: "venv", Relation: "PART_OF", To: "python"}},
			DiscoveredEntities: []DiscoveredEntity{{Name: "virtualenv", Type: "tool", Confidence: 0.7, Hops: 1, Used: true,
				Reason: "venv -RELATED-> virtualenv"}}},
		Results: []Result{
			{Rank: 1, URL: "https://docs.python.org/3/library/venv.html", Title: "venv — Creation of virtual environments",
				Preview: "A virtual environment is created on top of an existing Python installation.", Score: 0.8123,
				ScoreBreakdown: ScoreBreakdown{Vector: 0.9, Graph: 0.75, BM25: 1, Recency: 0.2, Title: 0.5},
				Timestamp:      "2026-10-01T12:00:00Z", Tags: []string{"python", "stdlib"}, Source: "vector+graph+bm25",
				EntityMentions: []string{"venv", "python", "pip"}, ChunkID: "1042", Start: 120, End: 980},
			{Rank: 2, URL: "https://docs.python.org/3/tutorial/venv.html", Title: "12. Virtual Environments and Packages",
				Preview: "Activate it with: source tutorial-env/bin/activate", Score: 0.61,
				ScoreBreakdown: ScoreBreakdown{Vector: 0.7, BM25: 0.55, Title: 0.25},
				Tags:           []string{}, Source: "bm25", EntityMentions: []string{}, ChunkID: "2077", Start: 0, End: 640},
		},
		ResultCount: 2, TotalTimeMS: 41.5,
		PhaseMS:          PhaseMS{Parse: 0.4, Retrieve: 30.1, Expand: 6.2, Rank: 3.3, Format: 1.5},
		SuggestedQueries: []string{"venv activate windows", "virtualenv vs venv"},
		RelatedEntities:  []RelatedEntity{{Name: "pip", Type: "tool", Score: 0.64, Source: "results"}},
		Degraded:         []string{"graph"},
		Tokens:           Tokens{JSON: 512, TOON: 380, SavedPct: 25.8},
		Explain: &Explain{Weights: "vector:0.35,graph:0.25,bm25:0.2,recency:0.1,title:0.1", Fusion: "weighted", Candidates: 87,
			Retrievers: map[string]RetrieverInfo{"bm25": {Hits: 40, TookMS: 2.5}, "graph": {Error: "kg unavailable"}, "vector": {Hits: 50, TookMS: 12.25}},
			Notes:      []string{"graph dropped: kg unavailable"}},
	}
}

// TestResponseGolden pins the wire shape of a search response in both formats the
// API writes: TOON through ToTOON (results as one table, docs/adr/0004) and JSON.
func TestResponseGolden(t *testing.T) {
	r := goldenResponse()
	tn, err := toon.Marshal(r.ToTOON())
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "response.toon.golden", append(tn, '\n'))
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "response.json.golden", append(js, '\n'))
}
