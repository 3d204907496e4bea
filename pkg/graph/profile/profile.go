// Package profile keeps each document's entity profile in memory — which entities the
// document mentions and how often — and answers graph feedback: given the pages a
// first ranking put on top, how close is each candidate page to them in the entity
// graph, and which entities are those top pages about.
//
// Feedback is pseudo-relevance feedback through the Document→Chunk→Entity graph: the
// seed pages' tf-idf entity vectors are summed into a centroid, and a candidate
// scores the cosine of its own vector with it. It
// needs no query entity, so it applies to every query, and it reads only memory: the
// profiles are loaded from Neo4j at start, replaced by every ingest and delete this
// process serves, and reloaded periodically so that changes made through other kg
// processes arrive too (see docs/adr).
package profile

import (
	"cmp"
	"context"
	"log/slog"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/kgsearch/kgsearch/pkg/graph"
)

// Source reads entity profiles from the durable graph (*graph.Store).
type Source interface {
	DocumentProfiles(ctx context.Context, docIDs []string) (map[string][]graph.EntityCount, error)
}

type entity struct {
	name, typ string
	df        int // documents mentioning it
}

// Store is the in-memory copy of the documents' entity profiles. Safe for concurrent use.
type Store struct {
	mu       sync.RWMutex
	docs     map[string]map[string]int64 // document id → entity id → mention count
	entities map[string]*entity
	loaded   bool
	// vecs caches every document's unit tf-idf vector; any change makes them stale
	// (N and the document frequencies move), and the next Feedback recomputes them.
	// The vectors name entities by their index in ids (interned when the vectors are
	// built), so Feedback sums and looks up dense slices instead of string maps.
	vecs  map[string][]weight
	ids   []string // entity index → entity id, for the entities in vecs
	stale bool
	// scratch holds the dense centroid and support slices Feedback borrows.
	scratch sync.Pool
}

// weight is one entity's weight in a document's vector.
type weight struct {
	e int32 // index in Store.ids
	w float64
}

// sums is Feedback's scratch: the centroid weight and the number of seeds
// mentioning each entity index, and the indexes touched (to clear them after).
type sums struct {
	centroid []float64 // every seed once: scores the candidates
	named    []float64 // the entity seeds by weight: names the related entities
	support  []int32   // entity seeds mentioning the entity
	seen     []bool
	touched  []int32
}

// New returns an empty store; Load fills it.
func New() *Store {
	return &Store{docs: map[string]map[string]int64{}, entities: map[string]*entity{}}
}

// Loaded reports whether a full load has completed.
func (s *Store) Loaded() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.loaded
}

// Size returns the number of documents and entities held.
func (s *Store) Size() (docs, entities int) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.docs), len(s.entities)
}

// Load replaces the whole store with every document's profile from src.
func (s *Store) Load(ctx context.Context, src Source) error {
	all, err := src.DocumentProfiles(ctx, nil)
	if err != nil {
		return err
	}
	docs := make(map[string]map[string]int64, len(all))
	ents := map[string]*entity{}
	for doc, list := range all {
		docs[doc] = addProfile(ents, list)
	}
	s.mu.Lock()
	s.docs, s.entities, s.loaded, s.stale = docs, ents, true, true
	s.mu.Unlock()
	return nil
}

// Refresh re-reads one document's profile from src (after an ingest); a document
// without mentions is removed.
func (s *Store) Refresh(ctx context.Context, src Source, docID string) error {
	got, err := src.DocumentProfiles(ctx, []string{docID})
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.removeLocked(docID)
	s.stale = true
	if list := got[docID]; len(list) > 0 {
		s.docs[docID] = addProfile(s.entities, list)
	}
	return nil
}

// Delete forgets a document.
func (s *Store) Delete(docID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.removeLocked(docID)
	s.stale = true
}

func addProfile(ents map[string]*entity, list []graph.EntityCount) map[string]int64 {
	p := make(map[string]int64, len(list))
	for _, ec := range list {
		if ec.Count <= 0 || ec.Entity.ID == "" {
			continue
		}
		p[ec.Entity.ID] += ec.Count
		e := ents[ec.Entity.ID]
		if e == nil {
			e = &entity{}
			ents[ec.Entity.ID] = e
		}
		e.name, e.typ = ec.Entity.Name, ec.Entity.Type
	}
	for id := range p {
		ents[id].df++
	}
	return p
}

func (s *Store) removeLocked(docID string) {
	old, ok := s.docs[docID]
	if !ok {
		return
	}
	for id := range old {
		if e := s.entities[id]; e != nil {
			if e.df--; e.df <= 0 {
				delete(s.entities, id)
			}
		}
	}
	delete(s.docs, docID)
}

// Keep reloads the store from src every interval until ctx ends, so that changes
// written through other kg processes are picked up; until a first load has succeeded
// it retries every few seconds. Failures are logged and retried.
func (s *Store) Keep(ctx context.Context, src Source, interval time.Duration, log *slog.Logger) {
	for {
		wait := interval
		if !s.Loaded() {
			wait = min(interval, 5*time.Second)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		start := time.Now()
		if err := s.Load(ctx, src); err != nil {
			if ctx.Err() == nil {
				log.Warn("entity profiles reload failed; keeping the previous copy", "err", err)
			}
			continue
		}
		d, e := s.Size()
		log.Debug("entity profiles reloaded", "documents", d, "entities", e, "took_ms", time.Since(start).Milliseconds())
	}
}

// docsPerSeed is how many documents the store must hold per seed used by Feedback.
const docsPerSeed = 50

// entitySeeds is how many of the heaviest seeds name the related entities.
const entitySeeds = 5

// nearDuplicate is the cosine between two seeds' entity vectors from which they are
// taken as copies of one page (a mirrored index page, man pages repeating the same
// option sections): such seeds share one seed's weight in the centroid.
const nearDuplicate = 0.5

// Seed is a first-pass result: a document and how strongly it was ranked (> 0).
type Seed struct {
	DocumentID string
	Weight     float64
}

// Entity is one entity of the feedback centroid.
type Entity struct {
	ID, Name, Type string
	Weight         float64 // its share of the centroid, in (0, 1]
	Documents      int     // documents mentioning it (its document frequency)
}

// Result answers Feedback.
type Result struct {
	Scores   map[string]float64 // candidate document id → cosine with the centroid, in [0, 1]
	Entities []Entity           // the centroid's heaviest entities, heaviest first
}

// Feedback scores candidates by the cosine of their tf-idf entity vectors with the
// centroid of the seeds' vectors, every seed counting once (near-copies of one page
// sharing one seed's weight, see seedShares), and returns the top
// entities (at most topEntities) of the centroid of the entitySeeds heaviest seeds
// weighted by their first-pass scores. Unknown documents score 0 and are left out
// of Scores.
//
// The seeds count equally in the score (classic pseudo-relevance feedback): the
// first-pass scores of the top pages are close and not calibrated, and weighting by
// them let the first page pull the centroid towards its own local names; measured
// on the dev sets with eight seeds (docs/adr/0006-graph-feedback.md). The related
// entities keep the weighted centroid of the five heaviest: what the very top pages
// are about.
//
// Two guards keep the feedback from drifting away from the query. Only the
// heaviest seeds score the candidates, one per docsPerSeed documents held (at least
// one): in a small corpus the top pages are a large share of it and their centroid
// describes the corpus, not the query. The related entities still come from the
// entitySeeds heaviest seeds whatever the store's size: they must be shared by two of
// them, so with the scoring seeds alone a store of under 100 documents named only the
// first page's local names, which the search's selection rules then dropped (an
// 80-page store showed no related entity for its own demonstration query). And when
// the heaviest seed has no entity profile, there is no feedback at all: the centroid
// would describe the pages ranked below the best one.
func (s *Store) Feedback(seeds []Seed, candidates []string, topEntities int) Result {
	s.ensureVectors()
	s.mu.RLock()
	defer s.mu.RUnlock()
	seeds = slices.DeleteFunc(slices.Clone(seeds), func(sd Seed) bool { return !(sd.Weight > 0) || math.IsInf(sd.Weight, 0) })
	slices.SortStableFunc(seeds, func(a, b Seed) int { return cmp.Compare(b.Weight, a.Weight) })
	if len(seeds) == 0 || len(s.docs[seeds[0].DocumentID]) == 0 {
		return Result{Scores: map[string]float64{}}
	}
	scoring := min(len(seeds), max(1, len(s.docs)/docsPerSeed))
	seeds = seeds[:max(scoring, min(len(seeds), entitySeeds))]
	sc := s.borrow()
	defer s.giveBack(sc)
	shares := s.seedShares(seeds[:scoring], sc.centroid)
	used := 0 // entity seeds with a profile
	for i, sd := range seeds {
		v := s.vecs[sd.DocumentID]
		named := i < entitySeeds
		if named && len(v) > 0 {
			used++
		}
		for _, x := range v {
			if !sc.seen[x.e] {
				sc.seen[x.e] = true
				sc.touched = append(sc.touched, x.e)
			}
			if i < scoring {
				sc.centroid[x.e] += shares[i] * x.w
			}
			if named {
				sc.named[x.e] += sd.Weight * x.w
				sc.support[x.e]++ // entity seeds mentioning the entity
			}
		}
	}
	res := Result{Scores: map[string]float64{}}
	norm, namedNorm := 0.0, 0.0
	for _, e := range sc.touched {
		norm += sc.centroid[e] * sc.centroid[e]
		namedNorm += sc.named[e] * sc.named[e]
	}
	if norm == 0 {
		return res
	}
	norm = math.Sqrt(norm)
	for _, c := range candidates {
		dot := 0.0
		for _, x := range s.vecs[c] {
			dot += x.w * sc.centroid[x.e]
		}
		if dot > 0 {
			res.Scores[c] = min(dot/norm, 1)
		}
	}
	if namedNorm > 0 {
		res.Entities = s.top(sc, min(used, 2), math.Sqrt(namedNorm), topEntities)
	}
	return res
}

// seedShares is each seed's weight in the scoring centroid: 1 / (1 + the number of
// other seeds whose entity vector has a cosine of at least nearDuplicate with its
// own). A group of near-copies among the seeds then counts about as much as one
// seed, instead of pulling the centroid to what the copies share: on Git's manual
// pages, whose option sections repeat across commands, four diff pages among eight
// seeds made every diff page outrank git-blame for "who last changed each line"
// (docs/adr/0006-graph-feedback.md). Distinct seeds keep 1 each. dense must be all
// zeros and as long as s.ids; it is zero again on return.
func (s *Store) seedShares(seeds []Seed, dense []float64) []float64 {
	shares := make([]float64, len(seeds))
	near := make([]int, len(seeds))
	for i := range seeds {
		vi := s.vecs[seeds[i].DocumentID]
		for _, x := range vi {
			dense[x.e] = x.w
		}
		for j := i + 1; j < len(seeds); j++ {
			dot := 0.0
			for _, x := range s.vecs[seeds[j].DocumentID] {
				dot += x.w * dense[x.e]
			}
			if dot >= nearDuplicate {
				near[i]++
				near[j]++
			}
		}
		for _, x := range vi {
			dense[x.e] = 0
		}
	}
	for i := range shares {
		shares[i] = 1 / float64(1+near[i])
	}
	return shares
}

// borrow returns zeroed centroid and support slices as long as ids (under the read
// lock, so the vectors do not change meanwhile).
func (s *Store) borrow() *sums {
	sc, _ := s.scratch.Get().(*sums)
	if sc == nil || len(sc.centroid) != len(s.ids) {
		sc = &sums{centroid: make([]float64, len(s.ids)), named: make([]float64, len(s.ids)),
			support: make([]int32, len(s.ids)), seen: make([]bool, len(s.ids))}
	}
	return sc
}

// giveBack clears what Feedback touched and returns the slices to the pool.
func (s *Store) giveBack(sc *sums) {
	for _, e := range sc.touched {
		sc.centroid[e], sc.named[e], sc.support[e], sc.seen[e] = 0, 0, 0, false
	}
	sc.touched = sc.touched[:0]
	s.scratch.Put(sc)
}

// ensureVectors recomputes the cached document vectors if the store changed since.
func (s *Store) ensureVectors() {
	s.mu.RLock()
	fresh := !s.stale
	s.mu.RUnlock()
	if fresh {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.stale {
		return
	}
	n := float64(len(s.docs))
	s.vecs = make(map[string][]weight, len(s.docs))
	index := make(map[string]int32, len(s.entities))
	s.ids = s.ids[:0]
	for doc := range s.docs {
		if v := s.vector(doc, n, index); len(v) > 0 {
			s.vecs[doc] = v
		}
	}
	s.stale = false
}

// vector is the document's unit-length tf-idf entity vector: (1 + ln count) ×
// ln(N / df). An entity every document mentions weighs nothing.
// Entities get their index in index (and s.ids) on first use.
func (s *Store) vector(docID string, n float64, index map[string]int32) []weight {
	p := s.docs[docID]
	if len(p) == 0 {
		return nil
	}
	v := make([]weight, 0, len(p))
	sum := 0.0
	for id, count := range p {
		e := s.entities[id]
		if e == nil || e.df <= 0 {
			continue
		}
		w := (1 + math.Log(float64(count))) * math.Log(n/float64(e.df))
		if w <= 0 {
			continue
		}
		x, ok := index[id]
		if !ok {
			x = int32(len(s.ids))
			index[id] = x
			s.ids = append(s.ids, id)
		}
		v = append(v, weight{x, w})
		sum += w * w
	}
	if sum == 0 {
		return nil
	}
	sum = math.Sqrt(sum)
	for i := range v {
		v[i].w /= sum
	}
	return v
}

// top returns the entity seeds' centroid's heaviest entities among those at least
// minSupport of them mention: what the top pages have in common, not one page's
// local names.
func (s *Store) top(sc *sums, minSupport int, norm float64, limit int) []Entity {
	if limit <= 0 {
		return nil
	}
	type cand struct {
		id string
		w  float64
	}
	heavier := func(a, b cand) int { // heaviest first, then by id
		if c := cmp.Compare(b.w, a.w); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	}
	// The best limit candidates, kept sorted: most entities of a centroid never get
	// near the top, so this costs a comparison each instead of a full sort.
	best := make([]cand, 0, limit+1)
	for _, e := range sc.touched {
		if int(sc.support[e]) < minSupport {
			continue
		}
		c := cand{s.ids[e], sc.named[e] / norm}
		if len(best) == limit && heavier(c, best[limit-1]) >= 0 {
			continue
		}
		if s.entities[c.id] == nil {
			continue
		}
		at, _ := slices.BinarySearchFunc(best, c, heavier)
		best = slices.Insert(best, at, c)
		if len(best) > limit {
			best = best[:limit]
		}
	}
	out := make([]Entity, len(best))
	for i, c := range best {
		e := s.entities[c.id]
		out[i] = Entity{ID: c.id, Name: e.name, Type: e.typ, Weight: c.w, Documents: e.df}
	}
	return out
}
