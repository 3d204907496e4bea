package projection

import (
	"context"
	"fmt"
	mrand "math/rand/v2"
	"runtime"
	"testing"

	"github.com/kgsearch/kgsearch/pkg/graph"
)

// synthetic builds a graph state of docs documents with chunksPer chunks each,
// mentionsPer mentions per chunk over nEntities entities (Zipf-like: a few are
// mentioned everywhere), and relsPer relation contributions per document, with
// ids of realistic lengths (32-hex document ids, numeric chunk ids, entity ids
// of about 12 bytes).
func synthetic(docs, chunksPer, mentionsPer, relsPer, nEntities int) graph.State {
	r := mrand.New(mrand.NewPCG(1, 2))
	zipf := func() int { return int(float64(nEntities) * r.Float64() * r.Float64() * r.Float64()) }
	eid := func(i int) string { return fmt.Sprintf("entity.%05d", i) }
	var st graph.State
	for i := range nEntities {
		st.Entities = append(st.Entities, graph.EntityState{EntityStats: graph.EntityStats{
			EntityRef: graph.EntityRef{ID: eid(i), Name: fmt.Sprintf("Entity %05d", i), Type: "concept"},
			DocFreq:   int64(1 + r.IntN(50)), ChunkFreq: int64(1 + r.IntN(200)), MentionCount: int64(1 + r.IntN(400)),
		}, NameLower: fmt.Sprintf("entity %05d", i)})
	}
	chunkID := 0
	for d := range docs {
		ds := graph.DocState{ID: fmt.Sprintf("%032x", d), Ingested: true}
		for c := range chunksPer {
			chunkID++
			cs := graph.ChunkState{ID: fmt.Sprint(chunkID), Ordinal: int64(c)}
			seen := map[int]bool{}
			for range mentionsPer {
				e := zipf()
				if seen[e] {
					continue
				}
				seen[e] = true
				cs.Mentions = append(cs.Mentions, graph.ChunkMention{EntityID: eid(e), Count: 1, Confidence: 0.5 + r.Float64()/2})
			}
			ds.Chunks = append(ds.Chunks, cs)
		}
		for range relsPer {
			a, b := zipf(), zipf()
			if a == b {
				continue
			}
			ds.Relations = append(ds.Relations, graph.RelationState{From: eid(a), To: eid(b), Type: "CO_OCCURS",
				Source: graph.SourceCooccurrence, Weight: r.Float64(), Confidence: r.Float64(),
				Evidence: []string{ds.Chunks[r.IntN(len(ds.Chunks))].ID}})
		}
		st.Docs = append(st.Docs, ds)
	}
	return st
}

func heap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkMemory reports the heap the projection holds per million entities,
// chunks, postings (chunk mentions) and relation contributions, measured by
// loading one part at a time: entities alone, then documents with chunks and
// mentions, then with relations too.
func BenchmarkMemory(b *testing.B) {
	const docs, chunksPer, mentionsPer, relsPer, nEntities = 2500, 20, 10, 50, 50000
	// measure loads the state made by mk into a projection and returns the heap it
	// holds once the state itself is garbage (the ids it keeps are counted).
	measure := func(mk func() graph.State) (uint64, Size) {
		base := heap()
		p := New()
		p.Load(mk())
		used := heap() - base
		sz := p.Size()
		runtime.KeepAlive(p)
		return used, sz
	}
	for range b.N {
		hE, sE := measure(func() graph.State {
			return graph.State{Entities: synthetic(0, 0, 0, 0, nEntities).Entities}
		})
		hC, sC := measure(func() graph.State {
			st := synthetic(docs, chunksPer, mentionsPer, relsPer, nEntities)
			for i := range st.Docs {
				st.Docs[i].Relations = nil
				for j := range st.Docs[i].Chunks {
					st.Docs[i].Chunks[j].Mentions = nil
				}
			}
			return st
		})
		hP, sP := measure(func() graph.State {
			st := synthetic(docs, chunksPer, mentionsPer, relsPer, nEntities)
			for i := range st.Docs {
				st.Docs[i].Relations = nil
			}
			return st
		})
		hR, sR := measure(func() graph.State { return synthetic(docs, chunksPer, mentionsPer, relsPer, nEntities) })
		perM := func(bytes uint64, n int64) float64 { return float64(bytes) / float64(n) * 1e6 / (1 << 20) }
		b.ReportMetric(perM(hE, sE.Entities), "MiB/M-entities")
		b.ReportMetric(perM(hC-hE, sC.Chunks), "MiB/M-chunks")
		b.ReportMetric(perM(hP-hC, sP.Postings), "MiB/M-postings")
		b.ReportMetric(perM(hR-hP, sR.Relations), "MiB/M-relations")
		b.ReportMetric(float64(hR)/(1<<20), "MiB-total")
		b.Logf("entities %d, chunks %d, postings %d, relation contributions %d: %.0f MiB (entities alone %.0f, without relations %.0f)",
			sR.Entities, sR.Chunks, sR.Postings, sR.Relations, float64(hR)/(1<<20), float64(hE)/(1<<20), float64(hP)/(1<<20))
	}
}

// BenchmarkQuery times match and expand on a projection the size of the pydocs
// corpus (about 8,000 chunks, 25,000 entities, 90,000 postings, 110,000
// relation contributions).
func BenchmarkQuery(b *testing.B) {
	p := New()
	p.Load(synthetic(450, 18, 11, 250, 25000))
	ctx := context.Background()
	ids := []string{"entity.00001", "entity.00150", "entity.03000"}
	b.Run("match", func(b *testing.B) {
		for range b.N {
			if _, err := p.MatchEntities(ctx, ids, 100); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("expand2", func(b *testing.B) {
		for range b.N {
			if _, err := p.Expand(ctx, graph.ExpandQuery{EntityIDs: ids, MaxHops: 2, Limit: 40}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
