package graph

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// syntheticDoc builds a document of nChunks chunks; each chunk mentions perChunk
// entities drawn from a vocabulary of vocab entities (skewed towards low ids, as real
// corpora are), with two pattern relations and one co-occurrence relation per chunk.
func syntheticDoc(prefix string, n, nChunks, perChunk, vocab int, rng *rand.Rand) Doc {
	id := fmt.Sprintf("%sdoc%d", prefix, n)
	d := Doc{ID: id, URL: "https://bench.test/" + strconv.Itoa(n), Title: "Synthetic " + strconv.Itoa(n)}
	ent := func(k int) string { return fmt.Sprintf("%se%d", prefix, k) }
	seen := map[int]bool{}
	pick := func() int {
		u := rng.Float64()
		return int(u * u * float64(vocab))
	}
	for c := range nChunks {
		cid := fmt.Sprintf("%s#%d", id, c)
		d.Chunks = append(d.Chunks, Chunk{ID: cid, Ordinal: c})
		var inChunk []int
		for range perChunk {
			k := pick()
			if slices.Contains(inChunk, k) {
				continue
			}
			inChunk = append(inChunk, k)
			if !seen[k] {
				seen[k] = true
				d.Entities = append(d.Entities, Entity{ID: ent(k), Name: "Entity " + strconv.Itoa(k), Type: benchTypes[k%len(benchTypes)], Confidence: 0.8})
			}
			d.Mentions = append(d.Mentions, Mention{ChunkID: cid, EntityID: ent(k), Count: 1 + rng.IntN(3), Confidence: 0.6 + 0.4*rng.Float64()})
		}
		for r := 0; r+1 < len(inChunk) && r < 3; r++ {
			src := SourcePattern
			if r == 2 {
				src = SourceCooccurrence
			}
			d.Relations = append(d.Relations, Relation{
				From: ent(inChunk[r]), To: ent(inChunk[r+1]), Type: benchRelTypes[r%len(benchRelTypes)],
				Weight: 1, Confidence: 0.5 + 0.5*rng.Float64(), Evidence: []string{cid}, Source: src,
			})
		}
	}
	for l := range 8 {
		d.Links = append(d.Links, Link{TargetID: fmt.Sprintf("%slinked%d", prefix, rng.IntN(vocab)), Anchor: "link " + strconv.Itoa(l)})
	}
	return d
}

var (
	benchTypes    = []string{"database", "library", "framework", "protocol", "concept", "command", "person", "organisation"}
	benchRelTypes = []string{"USES", "DEPENDS_ON", "PART_OF", "IS_A", "SUPPORTS", "RELATED_TO"}
)

// BenchmarkUpsertDocument measures ingest throughput: documents of 32 chunks with 8
// entity mentions and 3 relations per chunk, written with UNWIND batches in one
// transaction each.
func BenchmarkUpsertDocument(b *testing.B) {
	s, prefix := newTestStore(b)
	ctx := context.Background()
	const chunks = 32
	rng := rand.New(rand.NewPCG(1, 2))
	next := 1 // document numbers: every run of "new" writes documents not seen before
	b.Run("new", func(b *testing.B) {
		docs := make([]Doc, b.N)
		for i := range docs {
			docs[i] = syntheticDoc(prefix, next, chunks, 8, 5000, rng)
			next++
		}
		b.ResetTimer()
		start := time.Now()
		for i := range b.N {
			if _, err := s.UpsertDocument(ctx, docs[i]); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N*chunks)/time.Since(start).Seconds(), "chunks/s")
	})
	b.Run("replace", func(b *testing.B) {
		// Re-ingest one of the documents written above: delete and rewrite its
		// contribution.
		docs := []Doc{syntheticDoc(prefix, 0, chunks, 8, 5000, rng), syntheticDoc(prefix, 0, chunks, 8, 5000, rng)}
		b.ResetTimer()
		start := time.Now()
		for i := range b.N {
			if _, err := s.UpsertDocument(ctx, docs[i%2]); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N*chunks)/time.Since(start).Seconds(), "chunks/s")
	})
}

// BenchmarkMatchEntities measures entity → chunk matching on the documents that
// BenchmarkUpsertDocument style ingestion produces (200 documents, 6,400 chunks).
func BenchmarkMatchEntities(b *testing.B) {
	s, prefix := newTestStore(b)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 200 {
		if _, err := s.UpsertDocument(ctx, syntheticDoc(prefix, i, 32, 8, 5000, rng)); err != nil {
			b.Fatal(err)
		}
	}
	// Sub-benchmark: the set-up above runs once, not once per b.N round.
	b.Run("entities=2", func(b *testing.B) {
		lat := make([]time.Duration, 0, b.N)
		for range b.N {
			ids := []string{fmt.Sprintf("%se%d", prefix, rng.IntN(5000)), fmt.Sprintf("%se%d", prefix, rng.IntN(5000))}
			t0 := time.Now()
			if _, err := s.MatchEntities(ctx, ids, 50); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(t0))
		}
		reportPercentiles(b, lat)
	})
}

// BenchmarkExpand measures expansion latency on a synthetic graph of 50k entities and
// 500k relations. Building the graph takes a few minutes, so it is opt-in:
//
//	KGS_BENCH_GRAPH=1 go test -run '^$' -bench BenchmarkExpand ./pkg/graph/
//
// KGS_BENCH_KEEP=1 keeps the graph (ids prefixed "bench:") for the next run.
func BenchmarkExpand(b *testing.B) {
	if os.Getenv("KGS_BENCH_GRAPH") != "1" {
		b.Skip("set KGS_BENCH_GRAPH=1 to build the 50k-entity / 500k-relation graph")
	}
	s, _ := newTestStore(b)
	ctx := context.Background()
	const (
		prefix   = "bench:"
		entities = 50_000
		edges    = 500_000
	)
	if err := buildSyntheticGraph(ctx, b, s, prefix, entities, edges); err != nil {
		b.Fatal(err)
	}
	if os.Getenv("KGS_BENCH_KEEP") != "1" {
		b.Cleanup(func() { dropSyntheticGraph(context.Background(), b, s, prefix) })
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for _, hops := range []int{1, 2} {
		b.Run(fmt.Sprintf("hops=%d", hops), func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			results := 0
			for range b.N {
				q := ExpandQuery{EntityIDs: []string{fmt.Sprintf("%se%d", prefix, rng.IntN(entities))}, MaxHops: hops, Limit: 20, MinConfidence: 0.3}
				t0 := time.Now()
				got, err := s.Expand(ctx, q)
				if err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
				results += len(got.Related)
			}
			reportPercentiles(b, lat)
			b.ReportMetric(float64(results)/float64(b.N), "entities/op")
		})
	}
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	pct := func(p float64) float64 {
		i := int(p * float64(len(lat)-1))
		return float64(lat[i].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}

// buildSyntheticGraph writes entities and relations with big UNWIND batches, skipping
// the work when a complete graph with the same shape is already there.
func buildSyntheticGraph(ctx context.Context, b *testing.B, s *Store, prefix string, nEntities, nEdges int) error {
	marker := prefix + "marker"
	res, err := neo4j.ExecuteQuery(ctx, s.driver,
		"MATCH (m:BenchMarker {id: $id}) RETURN m.entities AS e, m.edges AS r",
		map[string]any{"id": marker}, neo4j.EagerResultTransformer)
	if err != nil {
		return err
	}
	if len(res.Records) == 1 && i64(res.Records[0], "e") == int64(nEntities) && i64(res.Records[0], "r") == int64(nEdges) {
		b.Logf("reusing synthetic graph %s (%d entities, %d relations)", prefix, nEntities, nEdges)
		return nil
	}
	dropSyntheticGraph(ctx, b, s, prefix)
	start := time.Now()
	const batch = 10_000
	for lo := 0; lo < nEntities; lo += batch {
		rows := make([]any, 0, batch)
		for k := lo; k < min(lo+batch, nEntities); k++ {
			name := "Entity " + strconv.Itoa(k)
			rows = append(rows, map[string]any{
				"id": prefix + "e" + strconv.Itoa(k), "name": name, "name_lower": "entity " + strconv.Itoa(k),
				"type": benchTypes[k%len(benchTypes)],
			})
		}
		if _, err := neo4j.ExecuteQuery(ctx, s.driver, `
			UNWIND $rows AS row
			CREATE (:Entity {id: row.id, name: row.name, name_lower: row.name_lower, type: row.type,
				aliases: [], confidence: 0.8, doc_freq: 1, chunk_freq: 1, mention_count: 1})`,
			map[string]any{"rows": rows}, neo4j.EagerResultTransformer); err != nil {
			return fmt.Errorf("create entities: %w", err)
		}
	}
	entitiesDone := time.Since(start)
	rng := rand.New(rand.NewPCG(7, 8))
	// Endpoints are skewed (u² over the id range): a few hubs with thousands of
	// relations, most entities with a handful, as in real co-occurrence graphs.
	pick := func() int { u := rng.Float64(); return int(u * u * float64(nEntities)) }
	for lo := 0; lo < nEdges; lo += batch {
		rows := make([]any, 0, batch)
		for k := lo; k < min(lo+batch, nEdges); k++ {
			from, to := pick(), rng.IntN(nEntities)
			if from == to {
				to = (to + 1) % nEntities
			}
			doc := prefix + "doc" + strconv.Itoa(k/20)
			rows = append(rows, map[string]any{
				"a": prefix + "e" + strconv.Itoa(from), "b": prefix + "e" + strconv.Itoa(to),
				"type": benchRelTypes[rng.IntN(len(benchRelTypes))], "doc": doc,
				"confidence": 0.2 + 0.8*rng.Float64(), "weight": float64(1 + rng.IntN(5)),
				"evidence": []string{doc + "#" + strconv.Itoa(rng.IntN(32))},
			})
		}
		if _, err := neo4j.ExecuteQuery(ctx, s.driver, `
			UNWIND $rows AS row
			MATCH (a:Entity {id: row.a})
			MATCH (b:Entity {id: row.b})
			CREATE (a)-[:RELATED {type: row.type, doc: row.doc, source: 'pattern', weight: row.weight,
				confidence: row.confidence, evidence: row.evidence}]->(b)`,
			map[string]any{"rows": rows}, neo4j.EagerResultTransformer); err != nil {
			return fmt.Errorf("create relations: %w", err)
		}
	}
	if _, err := neo4j.ExecuteQuery(ctx, s.driver,
		"MERGE (m:BenchMarker {id: $id}) SET m.entities = $e, m.edges = $r",
		map[string]any{"id": marker, "e": int64(nEntities), "r": int64(nEdges)}, neo4j.EagerResultTransformer); err != nil {
		return err
	}
	total := time.Since(start)
	b.Logf("built synthetic graph: %d entities in %v (%.0f/s), %d relations in %v (%.0f/s)",
		nEntities, entitiesDone.Round(time.Millisecond), float64(nEntities)/entitiesDone.Seconds(),
		nEdges, (total - entitiesDone).Round(time.Millisecond), float64(nEdges)/(total-entitiesDone).Seconds())
	return nil
}

func dropSyntheticGraph(ctx context.Context, b *testing.B, s *Store, prefix string) {
	sess := s.driver.NewSession(ctx, neo4j.SessionConfig{AccessMode: neo4j.AccessModeWrite, DatabaseName: s.database})
	defer sess.Close(ctx)
	// CALL ... IN TRANSACTIONS needs an implicit (auto-commit) transaction: sess.Run.
	for _, q := range []string{
		`MATCH (e:Entity) WHERE e.id STARTS WITH $p CALL (e) { DETACH DELETE e } IN TRANSACTIONS OF 2000 ROWS`,
		`MATCH (m:BenchMarker) WHERE m.id STARTS WITH $p DELETE m`,
	} {
		res, err := sess.Run(ctx, q, map[string]any{"p": prefix})
		if err == nil {
			_, err = res.Consume(ctx)
		}
		if err != nil {
			b.Errorf("drop synthetic graph: %v", err)
			return
		}
	}
}
