package entitygraph

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kgsearch/kgsearch/pkg/extract"
	"github.com/kgsearch/kgsearch/pkg/graph"
	"github.com/kgsearch/kgsearch/pkg/kgapi"
	"github.com/kgsearch/kgsearch/pkg/store"
)

func TestSpecificity(t *testing.T) {
	tests := []struct {
		cf, n int64
		want  float64
	}{
		{1, 1000, 1},
		{1000, 1000, math.Log(2) / math.Log(1001)},
		{10, 1000, math.Log(101) / math.Log(1001)},
		{0, 1000, 1}, // a counter not maintained yet counts as one chunk
		{5000, 1000, math.Log(2) / math.Log(1001)}, // never above the corpus
		{1, 0, 1},
	}
	for _, tt := range tests {
		if got := Specificity(tt.cf, tt.n); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("Specificity(%d, %d): got %v, want %v", tt.cf, tt.n, got, tt.want)
		}
	}
	prev := 2.0
	for cf := int64(1); cf <= 1000; cf *= 3 {
		w := Specificity(cf, 1000)
		if w >= prev || w <= 0 {
			t.Errorf("Specificity(%d, 1000) = %v: want strictly decreasing and positive (previous %v)", cf, w, prev)
		}
		prev = w
	}
}

func entity(id string, cf int64) graph.EntityStats {
	return graph.EntityStats{EntityRef: graph.EntityRef{ID: id, Name: id, Type: "concept"}, ChunkFreq: cf}
}

func chunk(id string, ms ...graph.ChunkMention) graph.ChunkMatch {
	return graph.ChunkMatch{ChunkID: id, DocumentID: "d", Mentions: ms}
}

func m(id string, conf float64) graph.ChunkMention {
	return graph.ChunkMention{EntityID: id, Count: 1, Confidence: conf}
}

func order(cs []kgapi.ChunkMatch) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.ChunkID)
	}
	return out
}

func TestScore(t *testing.T) {
	const n = 1000
	tests := []struct {
		name      string
		res       graph.MatchResult
		limit     int
		wantOrder []string
	}{
		{
			name: "more matched entities rank higher",
			res: graph.MatchResult{TotalChunks: n, Entities: []graph.EntityStats{entity("a", 10), entity("b", 10)},
				Chunks: []graph.ChunkMatch{chunk("one", m("a", 0.9)), chunk("both", m("a", 0.9), m("b", 0.9))}},
			limit: 10, wantOrder: []string{"both", "one"},
		},
		{
			name: "confidence counts",
			res: graph.MatchResult{TotalChunks: n, Entities: []graph.EntityStats{entity("a", 10)},
				Chunks: []graph.ChunkMatch{chunk("weak", m("a", 0.5)), chunk("strong", m("a", 0.95))}},
			limit: 10, wantOrder: []string{"strong", "weak"},
		},
		{
			name: "a rare entity beats a common one",
			res: graph.MatchResult{TotalChunks: n, Entities: []graph.EntityStats{entity("rare", 2), entity("common", 900)},
				Chunks: []graph.ChunkMatch{chunk("common", m("common", 0.9)), chunk("rare", m("rare", 0.9))}},
			limit: 10, wantOrder: []string{"rare", "common"},
		},
		{
			name: "limit cuts after ranking",
			res: graph.MatchResult{TotalChunks: n, Entities: []graph.EntityStats{entity("a", 10)},
				Chunks: []graph.ChunkMatch{chunk("c3", m("a", 0.6)), chunk("c1", m("a", 0.9)), chunk("c2", m("a", 0.7))}},
			limit: 2, wantOrder: []string{"c1", "c2"},
		},
		{
			name: "ties by chunk id",
			res: graph.MatchResult{TotalChunks: n, Entities: []graph.EntityStats{entity("a", 10)},
				Chunks: []graph.ChunkMatch{chunk("y", m("a", 0.8)), chunk("x", m("a", 0.8))}},
			limit: 10, wantOrder: []string{"x", "y"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Score(tt.res, tt.limit)
			if diff := cmp.Diff(tt.wantOrder, order(got)); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
			for _, c := range got {
				if c.Score <= 0 || c.Score > 1 {
					t.Errorf("chunk %s: score %v outside (0,1]", c.ChunkID, c.Score)
				}
			}
		})
	}
}

func TestScoreValues(t *testing.T) {
	// One entity every chunk mentions: worth little even alone in the query.
	ubiquitous := Score(graph.MatchResult{TotalChunks: 1000, Entities: []graph.EntityStats{entity("the", 1000)},
		Chunks: []graph.ChunkMatch{chunk("c", m("the", 1))}}, 10)
	if got, want := ubiquitous[0].Score, math.Log(2)/math.Log(1001); math.Abs(got-want) > 1e-12 || got > 0.15 {
		t.Errorf("ubiquitous entity: got %v, want %v (below 0.15)", got, want)
	}
	// A chunk with every query entity, each rare and certain, scores 1; half of them 0.5.
	res := graph.MatchResult{TotalChunks: 1000, Entities: []graph.EntityStats{entity("a", 1), entity("b", 1)},
		Chunks: []graph.ChunkMatch{chunk("full", m("a", 1), m("b", 1)), chunk("half", m("a", 1))}}
	got := Score(res, 10)
	want := []kgapi.ChunkMatch{
		{ChunkID: "full", DocumentID: "d", Score: 1, Matched: []string{"a", "b"}},
		{ChunkID: "half", DocumentID: "d", Score: 0.5, Matched: []string{"a"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("scores (-want +got):\n%s", diff)
	}
	if got := Score(graph.MatchResult{}, 10); len(got) != 0 {
		t.Errorf("no entities: got %v, want no chunks", got)
	}
}

func TestToGraph(t *testing.T) {
	d := kgapi.Document{ID: "d1", URL: "https://a.org/", Title: "T",
		Chunks: []kgapi.Chunk{{ID: "c1", Ordinal: 0, Text: "x"}, {ID: "c2", Ordinal: 1, Text: "y"}},
		Links:  []kgapi.Link{{URL: "https://a.org/b", DocumentID: "given"}, {URL: "https://a.org/c"}},
	}
	res := extract.Result{
		Entities: []extract.Entity{
			{ID: "go", Name: "Go", Type: "programming_language", Confidence: 1.2, Aliases: []string{"golang", " "}},
			{ID: "docker", Name: "Docker", Type: "tool", Confidence: 0.9},
			{ID: "", Name: "nameless", Type: "concept", Confidence: 0.9},
			{ID: "untyped", Name: "Untyped", Type: "", Confidence: 0.9},
		},
		Mentions: []extract.Mention{
			{ChunkID: "c1", EntityID: "go", Count: 0, Confidence: 0.9},
			{ChunkID: "c9", EntityID: "go", Count: 1, Confidence: 0.9},      // unknown chunk
			{ChunkID: "c2", EntityID: "untyped", Count: 1, Confidence: 0.9}, // dropped entity
		},
		Relations: []extract.Relation{
			{From: "docker", To: "go", Type: extract.RelWrittenIn, Weight: 1, Confidence: 0.8,
				Evidence: []extract.Evidence{{ChunkID: "c1"}, {ChunkID: "c1", Start: 5}, {ChunkID: "c9"}}},
			{From: "go", To: "docker", Type: extract.RelCoOccurs, Weight: -0.2, Confidence: 0, Evidence: []extract.Evidence{{ChunkID: "c2"}}},
			{From: "go", To: "go", Type: extract.RelUses, Weight: 1, Confidence: 0.5},
			{From: "go", To: "untyped", Type: extract.RelUses, Weight: 1, Confidence: 0.5},
			{From: "go", To: "docker", Type: extract.RelUses, Weight: math.NaN(), Confidence: 0.5},
		},
		Links: []extract.LinkRelation{
			{From: "d1", To: "https://a.org/b", Type: extract.RelLinksTo, Count: 1, Anchors: []string{"B page"}},
			{From: "d1", To: "https://a.org/c", Type: extract.RelLinksTo, Count: 1},
		},
	}
	want := graph.Doc{
		ID: "d1", URL: "https://a.org/", Title: "T",
		Chunks: []graph.Chunk{{ID: "c1", Ordinal: 0}, {ID: "c2", Ordinal: 1}},
		Entities: []graph.Entity{
			{ID: "go", Name: "Go", Type: "programming_language", Aliases: []string{"golang"}, Confidence: 1},
			{ID: "docker", Name: "Docker", Type: "tool", Aliases: []string{}, Confidence: 0.9},
		},
		Mentions: []graph.Mention{{ChunkID: "c1", EntityID: "go", Count: 1, Confidence: 0.9}},
		Relations: []graph.Relation{
			{From: "docker", To: "go", Type: "WRITTEN_IN", Weight: 1, Confidence: 0.8, Evidence: []string{"c1"}, Source: graph.SourcePattern},
			{From: "go", To: "docker", Type: "CO_OCCURS", Weight: -0.2, Confidence: 0, Evidence: []string{"c2"}, Source: graph.SourceCooccurrence},
		},
		Links: []graph.Link{
			{TargetID: "given", URL: "https://a.org/b", Anchor: "B page"},
			{TargetID: store.DocumentID("https://a.org/c"), URL: "https://a.org/c"},
		},
	}
	if diff := cmp.Diff(want, toGraph(d, res)); diff != "" {
		t.Errorf("graph doc (-want +got):\n%s", diff)
	}
}
