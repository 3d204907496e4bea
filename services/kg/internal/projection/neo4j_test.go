package projection

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"math"
	mrand "math/rand/v2"
	"slices"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kgsearch/kgsearch/internal/testenv"
	"github.com/kgsearch/kgsearch/pkg/graph"
)

// openStore opens the real Neo4j and returns a unique id prefix. The shared
// database holds other data (and other tests write to it concurrently): the
// projection loads all of it, and the queries use this test's ids.
func openStore(t *testing.T) (*graph.Store, string) {
	t.Helper()
	uri, user, password := testenv.Neo4j(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := graph.Open(ctx, graph.Config{URI: uri, User: user, Password: password})
	if err != nil {
		t.Fatalf("open neo4j: %v", err)
	}
	if err := s.EnsureSchema(ctx); err != nil {
		t.Fatalf("ensure schema: %v", err)
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s, "pj" + hex.EncodeToString(b) + ":"
}

// gen builds random documents over a small pool of entities, so that documents
// share entities and relations. Confidences are multiples of 1/8 and weights
// multiples of 1/1024: their noisy-ors, products and sums are exact in float64,
// whatever order Cypher and the projection combine them in, and two different
// aggregated weights are almost never equal (no ties for record order to break).
type gen struct {
	r      *mrand.Rand
	prefix string
}

var relTypes = []string{"USES", "PART_OF", "IS_A", "CO_OCCURS"}

func (g gen) entityID(i int) string { return fmt.Sprintf("%se%02d", g.prefix, i) }
func (g gen) docID(i int) string    { return fmt.Sprintf("%sd%02d", g.prefix, i) }
func (g gen) eighth() float64       { return float64(1+g.r.IntN(8)) / 8 }

func (g gen) doc(i int) graph.Doc {
	id := g.docID(i)
	d := graph.Doc{ID: id, URL: "https://example.test/" + id, Title: "doc " + id}
	pool := g.r.Perm(30)[:3+g.r.IntN(6)]
	for _, e := range pool {
		d.Entities = append(d.Entities, graph.Entity{
			ID: g.entityID(e), Name: fmt.Sprintf("%sEntity %02d v%d", g.prefix, e, g.r.IntN(2)),
			Type: []string{"library", "concept", "tool"}[g.r.IntN(3)], Confidence: g.eighth(),
		})
	}
	for c := range 1 + g.r.IntN(5) {
		cid := fmt.Sprintf("%s#%d", id, c)
		d.Chunks = append(d.Chunks, graph.Chunk{ID: cid, Ordinal: c})
		for _, k := range g.r.Perm(len(pool))[:g.r.IntN(min(5, len(pool)+1))] {
			d.Mentions = append(d.Mentions, graph.Mention{ChunkID: cid, EntityID: g.entityID(pool[k]), Count: 1 + g.r.IntN(3), Confidence: g.eighth()})
		}
	}
	for range g.r.IntN(7) {
		ab := g.r.Perm(len(pool))[:2]
		typ := relTypes[g.r.IntN(len(relTypes))]
		rel := graph.Relation{From: g.entityID(pool[ab[0]]), To: g.entityID(pool[ab[1]]), Type: typ,
			Weight: float64(1+g.r.IntN(1<<20)) / 1024, Confidence: g.eighth(), Source: graph.SourcePattern}
		if typ == "CO_OCCURS" && g.r.IntN(4) > 0 {
			rel.Source = graph.SourceCooccurrence
			if g.r.IntN(3) == 0 {
				rel.Weight = -rel.Weight
			}
		}
		for range g.r.IntN(3) {
			rel.Evidence = append(rel.Evidence, d.Chunks[g.r.IntN(len(d.Chunks))].ID)
		}
		d.Relations = append(d.Relations, rel)
	}
	if g.r.IntN(4) == 0 {
		t := g.docID(g.r.IntN(40)) // ids 25..39 are never ingested: placeholders
		d.Links = append(d.Links, graph.Link{TargetID: t, URL: "https://example.test/" + t})
	}
	return d
}

func (g gen) ids(n int) []string {
	var out []string
	for range n {
		if g.r.IntN(8) == 0 {
			out = append(out, g.prefix+"missing")
			continue
		}
		out = append(out, g.entityID(g.r.IntN(30)))
	}
	return out
}

// TestMatchesCypher applies a random sequence of ingests and deletes to Neo4j
// through pkg/graph, follows them with a projection, and checks that match and
// expand from the projection equal the Store's Cypher answers for many random
// queries.
func TestMatchesCypher(t *testing.T) {
	s, prefix := openStore(t)
	ctx := context.Background()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	g := gen{r: mrand.New(mrand.NewPCG(seed, 13)), prefix: prefix}
	live := map[string]bool{}
	t.Cleanup(func() {
		for id := range live {
			if err := s.DeleteDocument(context.Background(), id); err != nil {
				t.Errorf("clean up %s: %v", id, err)
			}
		}
	})
	logger := slog.New(slog.NewTextHandler(t.Output(), nil))
	// No snapshot loads after the first: writers of an older version on the
	// shared database (no feed) make gaps; the projection then misses their
	// writes, which changes the totals but nothing about this test's entities.
	f := &Follower{P: New(), Src: s, Log: logger, MinReload: time.Hour}
	start := time.Now()
	if err := f.Sync(ctx); err != nil {
		t.Fatalf("initial load: %v", err)
	}
	t.Logf("initial load: %+v in %v", f.P.Size(), time.Since(start))
	// A second process's projection, loaded now and synced every tenth step: it
	// applies changes in larger pages and must answer alike.
	f2 := &Follower{P: New(), Src: s, Batch: 4, Log: logger, MinReload: time.Hour}
	if err := f2.Sync(ctx); err != nil {
		t.Fatalf("initial load of the second projection: %v", err)
	}
	compared := 0
	for step := range 60 {
		i := g.r.IntN(25)
		if live[g.docID(i)] && g.r.IntN(3) == 0 {
			if err := s.DeleteDocument(ctx, g.docID(i)); err != nil {
				t.Fatalf("step %d: delete %s: %v", step, g.docID(i), err)
			}
			delete(live, g.docID(i))
		} else {
			if _, err := s.UpsertDocument(ctx, g.doc(i)); err != nil {
				t.Fatalf("step %d: upsert %s: %v", step, g.docID(i), err)
			}
			live[g.docID(i)] = true
		}
		for range 6 {
			if compareOnce(t, ctx, s, f, g, step) {
				compared++
			}
		}
		if step%10 == 9 {
			for range 6 {
				compareOnce(t, ctx, s, f2, g, step)
			}
		}
	}
	// Concurrent writers to the shared database can make a comparison moot (the
	// graph moved between the two answers); most must have been made.
	if compared < 60*6*3/4 {
		t.Errorf("only %d of %d comparisons were made without a concurrent write", compared, 60*6)
	}
	t.Logf("%d comparisons, %d snapshot loads; stale at the end: %q", compared, f.Reloads(), f.Stale())
}

// compareOnce runs one random match and one random expand on both and compares
// them. It returns false when a write by someone else landed between the answers.
func compareOnce(t *testing.T, ctx context.Context, s *graph.Store, f *Follower, g gen, step int) bool {
	t.Helper()
	mIDs, mLimit := g.ids(1+g.r.IntN(4)), []int{1, 3, 10, 1000}[g.r.IntN(4)]
	q := graph.ExpandQuery{EntityIDs: g.ids(1 + g.r.IntN(3)), MaxHops: 1 + g.r.IntN(2),
		Limit: []int{1, 3, 5, 20}[g.r.IntN(4)], MinConfidence: []float64{0, 0, 0.3, 0.6}[g.r.IntN(4)]}
	if g.r.IntN(4) == 0 {
		q.RelationTypes = []string{relTypes[g.r.IntN(len(relTypes))]}
	}
	for range 5 {
		if err := f.Sync(ctx); err != nil {
			t.Fatalf("step %d: sync: %v", step, err)
		}
		seq := f.P.Seq()
		cm, err := s.MatchEntities(ctx, mIDs, mLimit)
		if err != nil {
			t.Fatalf("cypher match: %v", err)
		}
		ce, err := s.Expand(ctx, q)
		if err != nil {
			t.Fatalf("cypher expand: %v", err)
		}
		pm, err := f.P.MatchEntities(ctx, mIDs, mLimit)
		if err != nil {
			t.Fatalf("projection match: %v", err)
		}
		pe, err := f.P.Expand(ctx, q)
		if err != nil {
			t.Fatalf("projection expand: %v", err)
		}
		// Entity names carry the prefix: the list holds this test's entities only.
		cl, err := s.EntitiesByPrefix(ctx, g.prefix, "", mLimit)
		if err != nil {
			t.Fatalf("cypher entity list: %v", err)
		}
		pl, err := f.P.EntitiesByPrefix(ctx, g.prefix, "", mLimit)
		if err != nil {
			t.Fatalf("projection entity list: %v", err)
		}
		if head, _, err := s.FeedHead(ctx); err != nil || head != seq {
			continue // the graph moved: ask again
		}
		ctxt := fmt.Sprintf("step %d, match(%v, %d)", step, mIDs, mLimit)
		compareMatch(t, ctxt, cm, pm, mLimit, f.Stale() != "")
		compareExpand(t, fmt.Sprintf("step %d, expand(%+v)", step, q), ce, pe)
		if d := gocmp.Diff(cl, pl, cmpopts.EquateEmpty()); d != "" {
			t.Errorf("step %d: entities by prefix, limit %d (-cypher +projection):\n%s", step, mLimit, d)
		}
		return true
	}
	return false
}

// compareMatch compares a match from Cypher and from the projection. When the
// projection is stale (it missed writes of others, see TestMatchesCypher) and
// its totals differ, scores differ with them: the chunks are then compared as a
// set, when the answer was not cut at limit.
func compareMatch(t *testing.T, what string, want, got graph.MatchResult, limit int, stale bool) {
	t.Helper()
	if stale && (want.TotalChunks != got.TotalChunks || want.TotalDocuments != got.TotalDocuments) {
		want.TotalChunks, want.TotalDocuments = got.TotalChunks, got.TotalDocuments
		if len(want.Chunks) == limit {
			want.Chunks, got.Chunks = nil, nil
		}
		for _, cs := range [][]graph.ChunkMatch{want.Chunks, got.Chunks} {
			for i := range cs {
				cs[i].Score = 0
			}
			slices.SortFunc(cs, func(a, b graph.ChunkMatch) int { return cmp.Compare(a.ChunkID, b.ChunkID) })
		}
	}
	if want.TotalChunks != got.TotalChunks || want.TotalDocuments != got.TotalDocuments {
		t.Errorf("%s: totals: cypher %d chunks %d docs, projection %d %d", what,
			want.TotalChunks, want.TotalDocuments, got.TotalChunks, got.TotalDocuments)
	}
	if d := gocmp.Diff(want.Entities, got.Entities, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("%s: entities (-cypher +projection):\n%s", what, d)
	}
	if d := gocmp.Diff(want.Missing, got.Missing, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("%s: missing (-cypher +projection):\n%s", what, d)
	}
	if len(want.Chunks) != len(got.Chunks) {
		t.Errorf("%s: %d chunks from cypher, %d from the projection", what, len(want.Chunks), len(got.Chunks))
		return
	}
	// Scores are sums of inexact terms, added in a different order: equal within
	// 1e-9, and chunks of equal score (to 1e-9) are compared in id order. When the
	// answer is cut at limit, the last class of equal score may hold different
	// chunks of that score.
	if len(want.Chunks) == 0 {
		return
	}
	a, b := canonical(want.Chunks), canonical(got.Chunks)
	last := key(a[len(a)-1:]...)
	for i := range a {
		if len(a) == limit && key(a[i]) == last {
			if key(b[i]) != last {
				t.Errorf("%s: chunk %d: cypher %+v, projection %+v", what, i, a[i], b[i])
			}
			continue
		}
		if d := gocmp.Diff(a[i], b[i], cmpopts.EquateApprox(0, 1e-9)); d != "" {
			t.Errorf("%s: chunk %d (-cypher +projection):\n%s", what, i, d)
		}
	}
}

type scoreKey struct {
	matched int
	score   int64
}

func key(cs ...graph.ChunkMatch) scoreKey {
	if len(cs) == 0 {
		return scoreKey{}
	}
	return scoreKey{len(cs[0].Mentions), int64(math.Round(cs[0].Score * 1e9))}
}

func canonical(cs []graph.ChunkMatch) []graph.ChunkMatch {
	out := slices.Clone(cs)
	slices.SortStableFunc(out, func(a, b graph.ChunkMatch) int {
		ka, kb := key(a), key(b)
		if c := cmp.Compare(kb.matched, ka.matched); c != 0 {
			return c
		}
		if c := cmp.Compare(kb.score, ka.score); c != 0 {
			return c
		}
		return cmp.Compare(a.ChunkID, b.ChunkID)
	})
	return out
}

func compareExpand(t *testing.T, what string, want, got graph.ExpandResult) {
	t.Helper()
	// Cypher lists sources and evidence in storage order, the projection in
	// document order; fewer than 20 evidence ids means none were cut.
	norm := gocmp.Transformer("sorted", func(e graph.Edge) graph.Edge {
		e.Sources = slices.Sorted(slices.Values(e.Sources))
		if len(e.Evidence) < maxEvidence {
			e.Evidence = slices.Sorted(slices.Values(e.Evidence))
		} else {
			e.Evidence = []string{fmt.Sprintf("%d ids", len(e.Evidence))}
		}
		return e
	})
	if d := gocmp.Diff(want, got, norm, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("%s (-cypher +projection):\n%s", what, d)
	}
}
