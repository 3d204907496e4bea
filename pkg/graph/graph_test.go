package graph

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/kgsearch/kgsearch/internal/testenv"
)

// newTestStore opens the real Neo4j of `make test` and returns a unique id prefix for
// the test. Community edition has one database, so tests isolate themselves by
// prefixing every id and delete what carries their prefix when they end.
func newTestStore(t testing.TB) (*Store, string) {
	t.Helper()
	uri, user, password := testenv.Neo4j(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := Open(ctx, Config{URI: uri, User: user, Password: password})
	if err != nil {
		t.Fatalf("open neo4j: %v", err)
	}
	if err := s.EnsureSchema(ctx); err != nil {
		t.Fatalf("ensure schema: %v", err)
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	prefix := "gt" + hex.EncodeToString(b) + ":"
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		removePrefix(ctx, t, s, prefix)
		_ = s.Close(ctx)
	})
	return s, prefix
}

func removePrefix(ctx context.Context, t testing.TB, s *Store, prefix string) {
	t.Helper()
	for _, label := range []string{"Chunk", "Document", "Entity"} {
		_, err := neo4j.ExecuteQuery(ctx, s.driver,
			"MATCH (n:"+label+") WHERE n.id STARTS WITH $p DETACH DELETE n",
			map[string]any{"p": prefix}, neo4j.EagerResultTransformer)
		if err != nil {
			t.Errorf("clean up %s nodes with prefix %s: %v", label, prefix, err)
		}
	}
}

// counts are the nodes and relationships carrying a test's prefix.
type counts struct {
	Documents, Placeholders, Chunks, Entities, Mentions, Related, Links, HasChunk int64
}

func countPrefix(t testing.TB, s *Store, prefix string) counts {
	t.Helper()
	res, err := neo4j.ExecuteQuery(context.Background(), s.driver, `
		CALL () { MATCH (n:Document) WHERE n.id STARTS WITH $p AND NOT n:Placeholder RETURN count(n) AS docs }
		CALL () { MATCH (n:Placeholder) WHERE n.id STARTS WITH $p RETURN count(n) AS placeholders }
		CALL () { MATCH (n:Chunk) WHERE n.id STARTS WITH $p RETURN count(n) AS chunks }
		CALL () { MATCH (n:Entity) WHERE n.id STARTS WITH $p RETURN count(n) AS entities }
		CALL () { MATCH (:Chunk)-[r:MENTIONS]->(e:Entity) WHERE e.id STARTS WITH $p RETURN count(r) AS mentions }
		CALL () { MATCH (a:Entity)-[r:RELATED]-() WHERE a.id STARTS WITH $p RETURN count(DISTINCT r) AS related }
		CALL () { MATCH (a:Document)-[r:LINKS_TO]-() WHERE a.id STARTS WITH $p RETURN count(DISTINCT r) AS links }
		CALL () { MATCH ()-[r:HAS_CHUNK]->(c:Chunk) WHERE c.id STARTS WITH $p RETURN count(r) AS has }
		RETURN docs, placeholders, chunks, entities, mentions, related, links, has`,
		map[string]any{"p": prefix}, neo4j.EagerResultTransformer)
	if err != nil {
		t.Fatalf("count nodes with prefix %s: %v", prefix, err)
	}
	r := res.Records[0]
	return counts{
		Documents: i64(r, "docs"), Placeholders: i64(r, "placeholders"), Chunks: i64(r, "chunks"),
		Entities: i64(r, "entities"), Mentions: i64(r, "mentions"), Related: i64(r, "related"),
		Links: i64(r, "links"), HasChunk: i64(r, "has"),
	}
}

// fixture builds documents whose ids carry the test prefix.
type fixture struct{ p string }

func (f fixture) id(s string) string { return f.p + s }

func (f fixture) ids(ss ...string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = f.p + s
	}
	return out
}

func (f fixture) entity(id, name, typ string, aliases ...string) Entity {
	return Entity{ID: f.id(id), Name: name, Type: typ, Aliases: aliases, Confidence: 0.9}
}

func (f fixture) mention(chunk, entity string, count int, conf float64) Mention {
	return Mention{ChunkID: f.id(chunk), EntityID: f.id(entity), Count: count, Confidence: conf}
}

func (f fixture) relation(from, typ, to string, conf, weight float64, evidence ...string) Relation {
	return Relation{From: f.id(from), To: f.id(to), Type: typ, Confidence: conf, Weight: weight, Evidence: f.ids(evidence...)}
}

// postgresDoc: three chunks about PostgreSQL, WAL and SQLite.
func (f fixture) postgresDoc() Doc {
	return Doc{
		ID: f.id("doc/pg"), URL: "https://example.test/pg", Title: "PostgreSQL internals",
		Chunks: []Chunk{{ID: f.id("doc/pg#0"), Ordinal: 0}, {ID: f.id("doc/pg#1"), Ordinal: 1}, {ID: f.id("doc/pg#2"), Ordinal: 2}},
		Entities: []Entity{
			f.entity("postgresql", "PostgreSQL", "database", "Postgres"),
			f.entity("wal", "Write-Ahead Log", "concept", "WAL"),
			f.entity("sqlite", "SQLite", "database"),
			f.entity("fsync", "fsync", "command"),
		},
		Mentions: []Mention{
			f.mention("doc/pg#0", "postgresql", 3, 0.95),
			f.mention("doc/pg#0", "wal", 1, 0.9),
			f.mention("doc/pg#1", "wal", 2, 0.9),
			f.mention("doc/pg#1", "fsync", 1, 0.7),
			f.mention("doc/pg#2", "sqlite", 1, 0.8),
			f.mention("doc/pg#2", "postgresql", 1, 0.95),
		},
		Relations: []Relation{
			f.relation("postgresql", "USES", "wal", 0.8, 2, "doc/pg#0"),
			f.relation("wal", "USES", "fsync", 0.6, 1, "doc/pg#1"),
		},
		Links: []Link{{TargetID: f.id("doc/wal"), URL: "https://example.test/wal", Anchor: "write-ahead log"}},
	}
}

func TestRoundTrip(t *testing.T) {
	s, prefix := newTestStore(t)
	f := fixture{prefix}
	ctx := context.Background()

	doc := f.postgresDoc()
	res, err := s.UpsertDocument(ctx, doc)
	if err != nil {
		t.Fatalf("upsert: %v", err)
	}
	if !res.Created {
		t.Errorf("first upsert: got Created false, want true")
	}
	want := counts{Documents: 1, Placeholders: 1, Chunks: 3, Entities: 4, Mentions: 6, Related: 2, Links: 1, HasChunk: 3}
	if diff := cmp.Diff(want, countPrefix(t, s, prefix)); diff != "" {
		t.Fatalf("after upsert, counts (-want +got):\n%s", diff)
	}

	t.Run("match", func(t *testing.T) {
		m, err := s.MatchEntities(ctx, f.ids("postgresql", "wal", "unknown"), 10)
		if err != nil {
			t.Fatalf("match: %v", err)
		}
		if diff := cmp.Diff(f.ids("unknown"), m.Missing); diff != "" {
			t.Errorf("missing (-want +got):\n%s", diff)
		}
		var got []string
		for _, c := range m.Chunks {
			got = append(got, c.ChunkID)
		}
		// #0 mentions both entities; #1 (wal) and #2 (postgresql) one each.
		if len(got) != 3 || got[0] != f.id("doc/pg#0") {
			t.Fatalf("matched chunks: got %v, want doc/pg#0 first of 3", got)
		}
		first := m.Chunks[0]
		wantMentions := []ChunkMention{
			{EntityID: f.id("postgresql"), Count: 3, Confidence: 0.95},
			{EntityID: f.id("wal"), Count: 1, Confidence: 0.9},
		}
		if diff := cmp.Diff(wantMentions, first.Mentions); diff != "" {
			t.Errorf("mentions of chunk 0 (-want +got):\n%s", diff)
		}
		if first.DocumentID != f.id("doc/pg") {
			t.Errorf("document of chunk 0: got %q, want %q", first.DocumentID, f.id("doc/pg"))
		}
		stats := map[string]EntityStats{}
		for _, e := range m.Entities {
			stats[e.ID] = e
		}
		pg := stats[f.id("postgresql")]
		if pg.DocFreq != 1 || pg.ChunkFreq != 2 || pg.MentionCount != 4 {
			t.Errorf("postgresql counters: got df=%d cf=%d mc=%d, want 1 2 4", pg.DocFreq, pg.ChunkFreq, pg.MentionCount)
		}
		if m.TotalChunks < 3 || m.TotalDocuments < 1 {
			t.Errorf("totals: got %d chunks %d documents, want at least 3 and 1", m.TotalChunks, m.TotalDocuments)
		}
	})

	t.Run("expand", func(t *testing.T) {
		res, err := s.Expand(ctx, ExpandQuery{EntityIDs: f.ids("postgresql", "nope"), MaxHops: 1})
		if err != nil {
			t.Fatalf("expand 1 hop: %v", err)
		}
		if diff := cmp.Diff(f.ids("nope"), res.Missing); diff != "" {
			t.Errorf("missing (-want +got):\n%s", diff)
		}
		if len(res.Found) != 1 || res.Found[0].ID != f.id("postgresql") || res.Found[0].Name == "" || res.Found[0].Type == "" {
			t.Errorf("found: got %+v, want postgresql with its name and type", res.Found)
		}
		one := res.Related
		if len(one) != 1 || one[0].Entity.ID != f.id("wal") {
			t.Fatalf("1 hop from postgresql: got %+v, want only wal", one)
		}
		wantEdge := Edge{From: f.id("postgresql"), To: f.id("wal"), Type: "USES", Confidence: 0.8, Weight: 2,
			Support: 1, Sources: []string{SourcePattern}, Evidence: f.ids("doc/pg#0")}
		if diff := cmp.Diff([]Edge{wantEdge}, one[0].Path); diff != "" {
			t.Errorf("1-hop path (-want +got):\n%s", diff)
		}
		two, err := expandRelated(ctx, s, ExpandQuery{EntityIDs: f.ids("postgresql"), MaxHops: 2})
		if err != nil {
			t.Fatalf("expand 2 hops: %v", err)
		}
		if len(two) != 2 || two[1].Entity.ID != f.id("fsync") || two[1].Hops != 2 {
			t.Fatalf("2 hops from postgresql: got %+v, want wal then fsync at 2 hops", two)
		}
		if two[1].Via == nil || two[1].Via.ID != f.id("wal") {
			t.Errorf("fsync reached via %+v, want wal", two[1].Via)
		}
		if got, want := two[1].Score, 0.8*0.6; math.Abs(got-want) > 1e-9 {
			t.Errorf("2-hop score: got %v, want %v", got, want)
		}
		// The relation points wal → fsync; walking from fsync keeps the stored direction.
		back, err := expandRelated(ctx, s, ExpandQuery{EntityIDs: f.ids("fsync"), RelationTypes: []string{"USES"}})
		if err != nil {
			t.Fatalf("expand from fsync: %v", err)
		}
		if len(back) != 1 || back[0].Path[0].From != f.id("wal") || back[0].Path[0].To != f.id("fsync") {
			t.Errorf("expand from fsync: got %+v, want wal with edge wal→fsync", back)
		}
		none, err := expandRelated(ctx, s, ExpandQuery{EntityIDs: f.ids("postgresql"), MinConfidence: 0.9})
		if err != nil {
			t.Fatalf("expand min confidence: %v", err)
		}
		if len(none) != 0 {
			t.Errorf("expand with min confidence 0.9: got %d entities, want 0", len(none))
		}
		other, err := expandRelated(ctx, s, ExpandQuery{EntityIDs: f.ids("postgresql"), RelationTypes: []string{"IS_A"}})
		if err != nil {
			t.Fatalf("expand IS_A: %v", err)
		}
		if len(other) != 0 {
			t.Errorf("expand with relation type IS_A: got %d entities, want 0", len(other))
		}
	})

	t.Run("re-upsert replaces", func(t *testing.T) {
		// New version: sqlite and fsync are gone, postgresql mentioned differently.
		v2 := doc
		v2.Title = "PostgreSQL internals, second edition"
		v2.Chunks = doc.Chunks[:2]
		v2.Entities = doc.Entities[:2]
		v2.Mentions = []Mention{
			f.mention("doc/pg#0", "postgresql", 5, 0.95),
			f.mention("doc/pg#1", "postgresql", 1, 0.95),
			f.mention("doc/pg#1", "wal", 1, 0.9),
		}
		v2.Relations = []Relation{f.relation("postgresql", "USES", "wal", 0.7, 1, "doc/pg#1")}
		v2.Links = nil
		for i := range 2 { // twice: re-upserting the same version changes nothing
			res, err := s.UpsertDocument(ctx, v2)
			if err != nil {
				t.Fatalf("re-upsert %d: %v", i, err)
			}
			if res.Created {
				t.Errorf("re-upsert %d: got Created true, want false", i)
			}
			want := counts{Documents: 1, Chunks: 2, Entities: 2, Mentions: 3, Related: 1, HasChunk: 2}
			if diff := cmp.Diff(want, countPrefix(t, s, prefix)); diff != "" {
				t.Fatalf("after re-upsert %d, counts (-want +got):\n%s", i, diff)
			}
		}
		e, err := s.Entity(ctx, f.id("postgresql"))
		if err != nil {
			t.Fatalf("entity: %v", err)
		}
		if e.DocFreq != 1 || e.ChunkFreq != 2 || e.MentionCount != 6 {
			t.Errorf("postgresql counters: got df=%d cf=%d mc=%d, want 1 2 6", e.DocFreq, e.ChunkFreq, e.MentionCount)
		}
		if len(e.Relations) != 1 || e.Relations[0].Confidence != 0.7 || !cmp.Equal(e.Relations[0].Evidence, f.ids("doc/pg#1")) {
			t.Errorf("postgresql relations: got %+v, want one USES edge, confidence 0.7, evidence doc/pg#1", e.Relations)
		}
		if _, err := s.Entity(ctx, f.id("sqlite")); !errors.Is(err, ErrNotFound) {
			t.Errorf("entity sqlite after re-upsert: got %v, want ErrNotFound", err)
		}
	})

	t.Run("delete", func(t *testing.T) {
		if err := s.DeleteDocument(ctx, f.id("doc/pg")); err != nil {
			t.Fatalf("delete: %v", err)
		}
		if diff := cmp.Diff(counts{}, countPrefix(t, s, prefix)); diff != "" {
			t.Errorf("after delete, counts (-want +got):\n%s", diff)
		}
		if err := s.DeleteDocument(ctx, f.id("doc/pg")); !errors.Is(err, ErrNotFound) {
			t.Errorf("second delete: got %v, want ErrNotFound", err)
		}
	})
}

func TestRelationSupportedByTwoDocuments(t *testing.T) {
	s, prefix := newTestStore(t)
	f := fixture{prefix}
	ctx := context.Background()
	doc := func(name string, conf float64) Doc {
		c := f.id("doc/" + name + "#0")
		return Doc{
			ID: f.id("doc/" + name), URL: "https://example.test/" + name,
			Chunks:   []Chunk{{ID: c}},
			Entities: []Entity{f.entity("kafka", "Kafka", "product"), f.entity("zk", "ZooKeeper", "product")},
			Mentions: []Mention{
				{ChunkID: c, EntityID: f.id("kafka"), Count: 1, Confidence: 1},
				{ChunkID: c, EntityID: f.id("zk"), Count: 1, Confidence: 1},
			},
			Relations: []Relation{{From: f.id("kafka"), To: f.id("zk"), Type: "DEPENDS_ON", Confidence: conf, Weight: 1, Evidence: []string{c}}},
		}
	}
	for _, d := range []Doc{doc("a", 0.5), doc("b", 0.6)} {
		if _, err := s.UpsertDocument(ctx, d); err != nil {
			t.Fatalf("upsert %s: %v", d.ID, err)
		}
	}
	got, err := expandRelated(ctx, s, ExpandQuery{EntityIDs: f.ids("kafka")})
	if err != nil {
		t.Fatalf("expand: %v", err)
	}
	if len(got) != 1 {
		t.Fatalf("expand kafka: got %d entities, want 1", len(got))
	}
	e := got[0].Path[0]
	if e.Support != 2 || e.Weight != 2 || math.Abs(e.Confidence-(1-0.5*0.4)) > 1e-9 {
		t.Errorf("edge supported by two documents: got support=%d weight=%v confidence=%v, want 2 2 0.8", e.Support, e.Weight, e.Confidence)
	}
	if diff := cmp.Diff(f.ids("doc/a#0", "doc/b#0"), sortedCopy(e.Evidence)); diff != "" {
		t.Errorf("evidence (-want +got):\n%s", diff)
	}

	// Re-ingesting b with another confidence replaces b's contribution only.
	if _, err := s.UpsertDocument(ctx, doc("b", 0.9)); err != nil {
		t.Fatalf("re-upsert b: %v", err)
	}
	got, err = expandRelated(ctx, s, ExpandQuery{EntityIDs: f.ids("kafka")})
	if err != nil {
		t.Fatalf("expand after re-upsert: %v", err)
	}
	if e := got[0].Path[0]; e.Support != 2 || e.Weight != 2 || math.Abs(e.Confidence-(1-0.5*0.1)) > 1e-9 {
		t.Errorf("edge after re-ingesting b: got support=%d weight=%v confidence=%v, want 2 2 0.95", e.Support, e.Weight, e.Confidence)
	}
	if err := s.DeleteDocument(ctx, f.id("doc/a")); err != nil {
		t.Fatalf("delete a: %v", err)
	}
	got, err = expandRelated(ctx, s, ExpandQuery{EntityIDs: f.ids("kafka")})
	if err != nil {
		t.Fatalf("expand after delete: %v", err)
	}
	if len(got) != 1 {
		t.Fatalf("expand kafka after deleting a: got %d entities, want 1", len(got))
	}
	e = got[0].Path[0]
	if e.Support != 1 || e.Confidence != 0.9 || !cmp.Equal(e.Evidence, f.ids("doc/b#0")) {
		t.Errorf("edge after deleting a: got support=%d confidence=%v evidence=%v, want 1 0.9 [doc/b#0]", e.Support, e.Confidence, e.Evidence)
	}
	k, err := s.Entity(ctx, f.id("kafka"))
	if err != nil {
		t.Fatalf("entity kafka: %v", err)
	}
	if k.DocFreq != 1 || k.ChunkFreq != 1 {
		t.Errorf("kafka counters after deleting a: got df=%d cf=%d, want 1 1", k.DocFreq, k.ChunkFreq)
	}
	if err := s.DeleteDocument(ctx, f.id("doc/b")); err != nil {
		t.Fatalf("delete b: %v", err)
	}
	if diff := cmp.Diff(counts{}, countPrefix(t, s, prefix)); diff != "" {
		t.Errorf("after deleting both, counts (-want +got):\n%s", diff)
	}
}

// TestCooccurrenceAcrossDocuments: documents repeating a co-occurrence statistic do
// not add up to certainty.
func TestCooccurrenceAcrossDocuments(t *testing.T) {
	s, prefix := newTestStore(t)
	f := fixture{prefix}
	ctx := context.Background()
	for i, conf := range []float64{0.5, 0.6, 0.55, 0.4} {
		name := fmt.Sprintf("doc/co%d", i)
		c := f.id(name + "#0")
		d := Doc{
			ID: f.id(name), Chunks: []Chunk{{ID: c}},
			Entities: []Entity{f.entity("redis", "Redis", "database"), f.entity("lua", "Lua", "programming_language")},
			Mentions: []Mention{{ChunkID: c, EntityID: f.id("redis"), Confidence: 1}, {ChunkID: c, EntityID: f.id("lua"), Confidence: 1}},
			Relations: []Relation{{From: f.id("lua"), To: f.id("redis"), Type: "CO_OCCURS", Confidence: conf, Weight: conf + 0.1,
				Evidence: []string{c}, Source: SourceCooccurrence}},
		}
		if _, err := s.UpsertDocument(ctx, d); err != nil {
			t.Fatalf("upsert %s: %v", d.ID, err)
		}
	}
	got, err := expandRelated(ctx, s, ExpandQuery{EntityIDs: f.ids("redis")})
	if err != nil {
		t.Fatalf("expand: %v", err)
	}
	if len(got) != 1 {
		t.Fatalf("expand redis: got %d entities, want 1", len(got))
	}
	e := got[0].Path[0]
	if e.Support != 4 || math.Abs(e.Confidence-0.6) > 1e-9 || math.Abs(e.Weight-0.7) > 1e-9 {
		t.Errorf("co-occurrence from 4 documents: got support=%d confidence=%v weight=%v, want 4 0.6 0.7 (the strongest, not a noisy-or or a sum)",
			e.Support, e.Confidence, e.Weight)
	}
}

func expandRelated(ctx context.Context, s *Store, q ExpandQuery) ([]Related, error) {
	res, err := s.Expand(ctx, q)
	if err == nil && len(res.Missing) > 0 {
		err = fmt.Errorf("unexpected missing entities %v", res.Missing)
	}
	return res.Related, err
}

func sortedCopy(s []string) []string { return slices.Sorted(slices.Values(s)) }

func TestPlaceholders(t *testing.T) {
	s, prefix := newTestStore(t)
	f := fixture{prefix}
	ctx := context.Background()
	a := Doc{ID: f.id("a"), URL: "https://example.test/a", Links: []Link{{TargetID: f.id("b"), URL: "https://example.test/b"}, {TargetID: f.id("a")}}}
	if _, err := s.UpsertDocument(ctx, a); err != nil {
		t.Fatalf("upsert a: %v", err)
	}
	if diff := cmp.Diff(counts{Documents: 1, Placeholders: 1, Links: 1}, countPrefix(t, s, prefix)); diff != "" {
		t.Fatalf("a links to b (-want +got):\n%s", diff)
	}
	if err := s.DeleteDocument(ctx, f.id("b")); !errors.Is(err, ErrNotFound) {
		t.Errorf("delete placeholder b: got %v, want ErrNotFound", err)
	}
	b := Doc{ID: f.id("b"), URL: "https://example.test/b", Title: "B", Chunks: []Chunk{{ID: f.id("b#0")}}}
	res, err := s.UpsertDocument(ctx, b)
	if err != nil {
		t.Fatalf("upsert b: %v", err)
	}
	if !res.Created {
		t.Errorf("ingesting placeholder b: got Created false, want true")
	}
	if diff := cmp.Diff(counts{Documents: 2, Chunks: 1, HasChunk: 1, Links: 1}, countPrefix(t, s, prefix)); diff != "" {
		t.Fatalf("after ingesting b (-want +got):\n%s", diff)
	}
	if err := s.DeleteDocument(ctx, f.id("b")); err != nil {
		t.Fatalf("delete b: %v", err)
	}
	if diff := cmp.Diff(counts{Documents: 1, Placeholders: 1, Links: 1}, countPrefix(t, s, prefix)); diff != "" {
		t.Fatalf("b deleted while a links to it (-want +got):\n%s", diff)
	}
	if err := s.DeleteDocument(ctx, f.id("a")); err != nil {
		t.Fatalf("delete a: %v", err)
	}
	if diff := cmp.Diff(counts{}, countPrefix(t, s, prefix)); diff != "" {
		t.Errorf("after deleting a (-want +got):\n%s", diff)
	}
}

func TestInjectionStringsStoredLiterally(t *testing.T) {
	s, prefix := newTestStore(t)
	f := fixture{prefix}
	ctx := context.Background()
	hostile := []string{
		`x"}) DETACH DELETE n //`,
		`'; MATCH (n) DETACH DELETE n; //`,
		"`Entity` $id {id: 1}",
		`\u0027 OR 1=1 \\`,
		"Zürich 東京 \x00 nul",
	}
	for i, name := range hostile {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			id := f.id(name)
			chunk := f.id(fmt.Sprintf("c%d %s", i, name))
			d := Doc{
				ID: f.id("doc " + name), URL: name, Title: name,
				Chunks:   []Chunk{{ID: chunk}},
				Entities: []Entity{{ID: id, Name: name, Type: name, Aliases: []string{name + " alias"}, Confidence: 1}},
				Mentions: []Mention{{ChunkID: chunk, EntityID: id, Count: 1, Confidence: 1}},
				Links:    []Link{{TargetID: f.id("target " + name), URL: name, Anchor: name}},
			}
			if _, err := s.UpsertDocument(ctx, d); err != nil {
				t.Fatalf("upsert: %v", err)
			}
			e, err := s.Entity(ctx, id)
			if err != nil {
				t.Fatalf("entity: %v", err)
			}
			if e.Name != name || e.Type != name || !cmp.Equal(e.Aliases, []string{name + " alias"}) {
				t.Errorf("entity: got name %q type %q aliases %q, want %q stored literally", e.Name, e.Type, e.Aliases, name)
			}
			found, err := s.EntitiesByPrefix(ctx, name, name, 10)
			if err != nil {
				t.Fatalf("entities by prefix: %v", err)
			}
			if len(found) != 1 || found[0].ID != id {
				t.Errorf("entities by prefix %q: got %+v, want exactly %q", name, found, id)
			}
			if err := s.DeleteDocument(ctx, d.ID); err != nil {
				t.Fatalf("delete: %v", err)
			}
		})
	}
	if diff := cmp.Diff(counts{}, countPrefix(t, s, prefix)); diff != "" {
		t.Errorf("after deleting everything (-want +got):\n%s", diff)
	}
}

func TestEntitiesByPrefixAndAliases(t *testing.T) {
	s, prefix := newTestStore(t)
	f := fixture{prefix}
	ctx := context.Background()
	// Type names carry the prefix so that counts by type are exact on a shared server.
	lang, db := prefix+"language", prefix+"database"
	d1 := Doc{
		ID: f.id("d1"), Chunks: []Chunk{{ID: f.id("d1#0")}},
		Entities: []Entity{
			{ID: f.id("go"), Name: "Go", Type: lang, Aliases: []string{"golang"}, Confidence: 0.6},
			{ID: f.id("gorm"), Name: "GORM", Type: prefix + "library", Confidence: 0.9},
			{ID: f.id("graphite"), Name: "Graphite", Type: db, Confidence: 0.9},
		},
		Mentions: []Mention{
			{ChunkID: f.id("d1#0"), EntityID: f.id("go")}, {ChunkID: f.id("d1#0"), EntityID: f.id("gorm")},
			{ChunkID: f.id("d1#0"), EntityID: f.id("graphite")},
		},
	}
	d2 := Doc{
		ID: f.id("d2"), Chunks: []Chunk{{ID: f.id("d2#0")}},
		Entities: []Entity{{ID: f.id("go"), Name: "Go language", Type: lang, Aliases: []string{"Go lang", "golang"}, Confidence: 0.95}},
		Mentions: []Mention{{ChunkID: f.id("d2#0"), EntityID: f.id("go"), Count: 2}},
	}
	for _, d := range []Doc{d1, d2} {
		if _, err := s.UpsertDocument(ctx, d); err != nil {
			t.Fatalf("upsert %s: %v", d.ID, err)
		}
	}
	tests := []struct {
		prefix, typ string
		want        []string
	}{
		{"g", "", nil}, // other tests' entities may start with g: checked below with a type
		{"G", lang, f.ids("go")},
		{"go", prefix + "library", f.ids("gorm")},
		{"GRAPH", db, f.ids("graphite")},
		{"x", lang, nil},
		{"", db, f.ids("graphite")},
	}
	for _, tt := range tests {
		if tt.typ == "" {
			continue
		}
		t.Run(tt.prefix+"/"+tt.typ, func(t *testing.T) {
			got, err := s.EntitiesByPrefix(ctx, tt.prefix, tt.typ, 10)
			if err != nil {
				t.Fatalf("entities by prefix: %v", err)
			}
			var ids []string
			for _, e := range got {
				ids = append(ids, e.ID)
			}
			if diff := cmp.Diff(tt.want, ids); diff != "" {
				t.Errorf("entities (-want +got):\n%s", diff)
			}
		})
	}
	g, err := s.Entity(ctx, f.id("go"))
	if err != nil {
		t.Fatalf("entity go: %v", err)
	}
	// The more confident description (d2) names the entity; aliases are merged.
	if g.Name != "Go language" || g.DocFreq != 2 || g.ChunkFreq != 2 || g.MentionCount != 3 {
		t.Errorf("entity go: got name %q df=%d cf=%d mc=%d, want \"Go language\" 2 2 3", g.Name, g.DocFreq, g.ChunkFreq, g.MentionCount)
	}
	if diff := cmp.Diff([]string{"golang", "Go lang"}, g.Aliases); diff != "" {
		t.Errorf("aliases (-want +got):\n%s", diff)
	}
	st, err := s.Stats(ctx)
	if err != nil {
		t.Fatalf("stats: %v", err)
	}
	if st.EntitiesByType[lang] != 1 || st.EntitiesByType[db] != 1 {
		t.Errorf("stats entities by type: got %d %s and %d %s, want 1 and 1", st.EntitiesByType[lang], lang, st.EntitiesByType[db], db)
	}
	if st.Documents < 2 || st.Chunks < 2 || st.Entities < 3 || st.Mentions < 4 {
		t.Errorf("stats: got %+v, want at least 2 documents, 2 chunks, 3 entities, 4 mentions", st)
	}
	if _, err := s.Entity(ctx, f.id("nope")); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown entity: got %v, want ErrNotFound", err)
	}
}

// TestConcurrentUpserts checks the counters under concurrent writers: documents sharing
// an entity are ingested in parallel, then half of them deleted in parallel.
func TestConcurrentUpserts(t *testing.T) {
	s, prefix := newTestStore(t)
	f := fixture{prefix}
	ctx := context.Background()
	const n = 12
	docs := make([]Doc, n)
	for i := range docs {
		c := f.id(fmt.Sprintf("d%d#0", i))
		docs[i] = Doc{
			ID: f.id(fmt.Sprintf("d%d", i)), Chunks: []Chunk{{ID: c}},
			Entities: []Entity{f.entity("shared", "Shared", "concept"), f.entity(fmt.Sprintf("own%d", i), "Own", "concept")},
			Mentions: []Mention{f.mention(fmt.Sprintf("d%d#0", i), "shared", 2, 1), f.mention(fmt.Sprintf("d%d#0", i), fmt.Sprintf("own%d", i), 1, 1)},
			Relations: []Relation{{From: f.id("shared"), To: f.id(fmt.Sprintf("own%d", i)), Type: "RELATED_TO",
				Confidence: 0.5, Weight: 1, Evidence: []string{c}, Source: SourceCooccurrence}},
		}
	}
	parallel := func(docs []Doc, op func(Doc) error) {
		var wg sync.WaitGroup
		errs := make(chan error, len(docs))
		for _, d := range docs {
			wg.Go(func() {
				if err := op(d); err != nil {
					errs <- fmt.Errorf("%s: %w", d.ID, err)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}
	parallel(docs, func(d Doc) error { _, err := s.UpsertDocument(ctx, d); return err })
	parallel(docs, func(d Doc) error { _, err := s.UpsertDocument(ctx, d); return err })
	e, err := s.Entity(ctx, f.id("shared"))
	if err != nil {
		t.Fatalf("entity: %v", err)
	}
	if e.DocFreq != n || e.ChunkFreq != n || e.MentionCount != 2*n {
		t.Errorf("shared counters: got df=%d cf=%d mc=%d, want %d %d %d", e.DocFreq, e.ChunkFreq, e.MentionCount, n, n, 2*n)
	}
	parallel(docs[:n/2], func(d Doc) error { return s.DeleteDocument(ctx, d.ID) })
	e, err = s.Entity(ctx, f.id("shared"))
	if err != nil {
		t.Fatalf("entity: %v", err)
	}
	if e.DocFreq != n/2 || e.MentionCount != n {
		t.Errorf("shared counters after deleting half: got df=%d mc=%d, want %d %d", e.DocFreq, e.MentionCount, n/2, n)
	}
	want := counts{Documents: n / 2, Chunks: n / 2, HasChunk: n / 2, Entities: 1 + n/2, Mentions: n, Related: n / 2}
	if diff := cmp.Diff(want, countPrefix(t, s, prefix)); diff != "" {
		t.Errorf("after deleting half (-want +got):\n%s", diff)
	}
}

func TestUnavailable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// Port 1 on loopback: nothing listens, the connection is refused at once.
	_, err := Open(ctx, Config{URI: "bolt://127.0.0.1:1", User: "neo4j", Password: "whatever1"})
	if !errors.Is(err, ErrUnavailable) {
		t.Errorf("open unreachable server: got %v, want ErrUnavailable", err)
	}
}

func TestWrongPassword(t *testing.T) {
	uri, user, password := testenv.Neo4j(t)
	if password == "" {
		t.Skip("test server has no authentication")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := Open(ctx, Config{URI: uri, User: user, Password: password + "-wrong"})
	if !errors.Is(err, ErrUnavailable) {
		t.Errorf("open with a wrong password: got %v, want ErrUnavailable", err)
	}
}

func TestNewDoesNotConnect(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := New(Config{URI: "bolt://127.0.0.1:1", User: "neo4j", Password: "whatever1", MaxRetryTime: 300 * time.Millisecond})
	if err != nil {
		t.Fatalf("new with an unreachable server: got %v, want nil (connections are lazy)", err)
	}
	defer s.Close(ctx)
	if err := s.Ping(ctx); !errors.Is(err, ErrUnavailable) {
		t.Errorf("ping unreachable server: got %v, want ErrUnavailable", err)
	}
	_, err = s.UpsertDocument(ctx, Doc{ID: "d"})
	if !errors.Is(err, ErrUnavailable) {
		t.Errorf("upsert on unreachable server: got %v, want ErrUnavailable", err)
	}
	if _, err := New(Config{URI: "http://x"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("new with an http URI: got %v, want ErrInvalid", err)
	}
}
