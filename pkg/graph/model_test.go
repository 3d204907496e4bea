package graph

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func validDoc() Doc {
	return Doc{
		ID:       "d",
		Chunks:   []Chunk{{ID: "d#0"}, {ID: "d#1", Ordinal: 1}},
		Entities: []Entity{{ID: "a", Name: "A", Type: "concept", Confidence: 1}, {ID: "b", Name: "B", Type: "concept", Confidence: 1}},
		Mentions: []Mention{{ChunkID: "d#0", EntityID: "a", Count: 1, Confidence: 1}},
		Relations: []Relation{
			{From: "a", To: "b", Type: "USES", Confidence: 0.5, Weight: 1, Evidence: []string{"d#0"}},
		},
		Links: []Link{{TargetID: "e"}},
	}
}

func TestPrepareRejects(t *testing.T) {
	tests := []struct {
		name   string
		edit   func(*Doc)
		wantIn string // the error names the field
	}{
		{"empty id", func(d *Doc) { d.ID = " " }, "document id is empty"},
		{"long id", func(d *Doc) { d.ID = strings.Repeat("x", maxIDLen+1) }, "document id is 1025 bytes"},
		{"empty chunk id", func(d *Doc) { d.Chunks[1].ID = "" }, "chunks[1].id is empty"},
		{"duplicate chunk", func(d *Doc) { d.Chunks[1].ID = "d#0" }, `chunks[1].id "d#0" is duplicated`},
		{"negative ordinal", func(d *Doc) { d.Chunks[0].Ordinal = -1 }, "chunks[0].ordinal is -1"},
		{"entity without name", func(d *Doc) { d.Entities[1].Name = "" }, "entities[1].name is empty"},
		{"entity without type", func(d *Doc) { d.Entities[0].Type = "" }, "entities[0].type is empty"},
		{"entity confidence", func(d *Doc) { d.Entities[0].Confidence = 1.5 }, "entities[0].confidence is 1.5"},
		{"entity confidence NaN", func(d *Doc) { d.Entities[0].Confidence = math.NaN() }, "entities[0].confidence is NaN"},
		{"mention unknown chunk", func(d *Doc) { d.Mentions[0].ChunkID = "zz" }, `mentions[0].chunk_id "zz"`},
		{"mention unknown entity", func(d *Doc) { d.Mentions[0].EntityID = "zz" }, `mentions[0].entity_id "zz"`},
		{"mention negative count", func(d *Doc) { d.Mentions[0].Count = -2 }, "mentions[0].count is -2"},
		{"relation unknown from", func(d *Doc) { d.Relations[0].From = "zz" }, `relations[0].from "zz"`},
		{"relation unknown to", func(d *Doc) { d.Relations[0].To = "zz" }, `relations[0].to "zz"`},
		{"relation to itself", func(d *Doc) { d.Relations[0].To = "a" }, "relates entity \"a\" to itself"},
		{"relation without type", func(d *Doc) { d.Relations[0].Type = "" }, "relations[0].type is empty"},
		{"relation NaN weight", func(d *Doc) { d.Relations[0].Weight = math.NaN() }, "relations[0].weight is NaN"},
		{"relation infinite weight", func(d *Doc) { d.Relations[0].Weight = math.Inf(1) }, "relations[0].weight is +Inf"},
		{"relation source", func(d *Doc) { d.Relations[0].Source = "llm" }, `relations[0].source is "llm"`},
		{"relation evidence", func(d *Doc) { d.Relations[0].Evidence = []string{"other#3"} }, `relations[0].evidence[0] "other#3"`},
		{"link without target", func(d *Doc) { d.Links[0].TargetID = "" }, "links[0].target_id is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := validDoc()
			tt.edit(&d)
			_, err := prepare(d)
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("got error %v, want ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), tt.wantIn) {
				t.Errorf("got error %q, want it to contain %q", err, tt.wantIn)
			}
		})
	}
}

func TestPrepareMergesDuplicates(t *testing.T) {
	d := validDoc()
	d.Entities = append(d.Entities, Entity{ID: "a", Name: "A better", Type: "library", Aliases: []string{"AA", "A"}, Confidence: 1})
	d.Entities[0].Confidence = 0.5
	d.Mentions = append(d.Mentions,
		Mention{ChunkID: "d#0", EntityID: "a", Count: 2, Confidence: 0.7},
		Mention{ChunkID: "d#1", EntityID: "a", Confidence: 0.9}, // count 0 means 1
	)
	d.Relations = append(d.Relations, Relation{From: "a", To: "b", Type: "USES", Confidence: 0.9, Weight: 2,
		Evidence: []string{"d#1", "d#0"}, Source: SourceCooccurrence})
	d.Links = append(d.Links, Link{TargetID: "e"}, Link{TargetID: "d"})
	p, err := prepare(d)
	if err != nil {
		t.Fatalf("prepare: %v", err)
	}
	wantEntities := []any{
		map[string]any{"id": "a", "name": "A better", "name_lower": "a better", "type": "library", "aliases": []string{"AA", "A"}, "confidence": 1.0},
		map[string]any{"id": "b", "name": "B", "name_lower": "b", "type": "concept", "aliases": []string{}, "confidence": 1.0},
	}
	if diff := cmp.Diff(wantEntities, p.entities); diff != "" {
		t.Errorf("entities (-want +got):\n%s", diff)
	}
	wantMentions := []any{
		map[string]any{"chunk": "d#0", "entity": "a", "count": int64(3), "confidence": 1.0},
		map[string]any{"chunk": "d#1", "entity": "a", "count": int64(1), "confidence": 0.9},
	}
	if diff := cmp.Diff(wantMentions, p.mentions); diff != "" {
		t.Errorf("mentions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]*entityContrib{"a": {chunks: 2, mentions: 4}}, p.contrib, cmp.AllowUnexported(entityContrib{})); diff != "" {
		t.Errorf("contributions (-want +got):\n%s", diff)
	}
	wantRelations := []any{map[string]any{
		"from": "a", "to": "b", "type": "USES", "weight": 3.0, "confidence": 0.9,
		"evidence": []string{"d#0", "d#1"}, "source": SourcePattern,
	}}
	if diff := cmp.Diff(wantRelations, p.relations); diff != "" {
		t.Errorf("relations (-want +got):\n%s", diff)
	}
	if len(p.links) != 1 {
		t.Errorf("links: got %d, want 1 (duplicates and self links dropped)", len(p.links))
	}
}

func TestExpandQueryNormalise(t *testing.T) {
	tests := []struct {
		name    string
		q       ExpandQuery
		want    ExpandQuery
		wantErr string
	}{
		{"defaults", ExpandQuery{EntityIDs: []string{"a", "a", "b"}},
			ExpandQuery{EntityIDs: []string{"a", "b"}, MaxHops: 1, Limit: defaultLimit, RelationTypes: []string{}}, ""},
		{"no ids", ExpandQuery{}, ExpandQuery{}, "entity ids is empty"},
		{"hops 3", ExpandQuery{EntityIDs: []string{"a"}, MaxHops: 3}, ExpandQuery{}, "max hops is 3, want 1 or 2"},
		{"hops -1", ExpandQuery{EntityIDs: []string{"a"}, MaxHops: -1}, ExpandQuery{}, "max hops is -1"},
		{"limit", ExpandQuery{EntityIDs: []string{"a"}, Limit: 5000}, ExpandQuery{}, "limit is 5000"},
		{"min confidence", ExpandQuery{EntityIDs: []string{"a"}, MinConfidence: 2}, ExpandQuery{}, "min confidence is 2"},
		{"empty type", ExpandQuery{EntityIDs: []string{"a"}, RelationTypes: []string{""}}, ExpandQuery{}, "relation types[0] is empty"},
		{"empty id", ExpandQuery{EntityIDs: []string{"a", ""}}, ExpandQuery{}, "entity ids[1] is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.q.normalise()
			if tt.wantErr != "" {
				if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got error %v, want ErrInvalid containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("normalise: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("normalised query (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"ok", Config{URI: "bolt://127.0.0.1:17687", User: "neo4j", Password: "x"}, ""},
		{"ok no auth", Config{URI: "neo4j://db:7687"}, ""},
		{"empty", Config{}, "neo4j URI is empty"},
		{"scheme", Config{URI: "http://127.0.0.1:7474"}, `has scheme "http"`},
		{"no host", Config{URI: "bolt://"}, "has no host"},
		{"password without user", Config{URI: "bolt://h:1", Password: "x"}, "user is empty"},
		{"pool", Config{URI: "bolt://h:1", MaxConnections: -1}, "max connections is -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("got %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("got %v, want ErrInvalid containing %q", err, tt.wantErr)
			}
		})
	}
}
