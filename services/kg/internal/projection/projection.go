// Package projection keeps, in the kg service's memory, exactly what the match and
// expand endpoints read from the graph: entity → chunk postings with mention
// counts and confidences, entity adjacency (relations grouped by neighbour, type
// and direction, with each document's contribution), the entities' names, types
// and counters, and the corpus totals. Neo4j stays the durable graph and answers
// everything else; a query served from the projection costs microseconds instead
// of a Cypher round trip.
//
// # Keeping it current
//
// The projection loads a snapshot of the graph (graph.Store.Snapshot) and then
// follows the graph's change feed (graph.Store.Changes): every upsert and delete
// writes a numbered change in its own transaction, and each kg process applies the
// changes in order, its own writes included, as each search replica's Bleve copy
// follows MariaDB's change feed. Several kg processes behind a load balancer
// therefore converge on the same projection. A gap in the feed (changes pruned
// before this process read them, or written by a version that wrote no feed)
// makes the process load a new snapshot. While Neo4j is unreachable the projection
// keeps answering from memory and the follower retries; it resumes from its last
// sequence number.
//
// # Same answers as Cypher
//
// The projection implements graph.MatchReader and graph.ExpandReader, and its
// MatchEntities and Expand run graph.MatchWith and graph.ExpandWith: the
// validation, the two-hop frontier, the ranking and the tie-breaks are the
// Store's own code. Only the per-source aggregation of Neighbours and the chunk
// accumulation of MatchChunks are reimplemented, in the same arithmetic order
// where the result depends on it (contributions are taken in document id order;
// Cypher takes them in storage order, so sums of several inexact floating-point
// values may differ in the last bit).
package projection

import (
	"cmp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kgsearch/kgsearch/pkg/graph"
)

// Projection is the in-memory copy. It is safe for concurrent use: queries share a
// read lock, changes are applied under the write lock.
type Projection struct {
	mu          sync.RWMutex
	seq         int64 // feed position applied
	loaded      bool
	entities    map[string]*entity
	docs        map[string]*document
	chunks      []chunk // slots; a free slot has an empty id
	free        []int32
	totalChunks int64
	totalDocs   int64
	dirty       []*entity // entities whose groups changed since they were sorted
	// words interns the few distinct entity types, relation types and sources, so
	// that each contribution does not keep its own copy.
	words map[string]string
}

// New returns an empty projection; it answers once Load or Sync has run.
func New() *Projection {
	return &Projection{entities: map[string]*entity{}, docs: map[string]*document{}, words: map[string]string{}}
}

func (p *Projection) word(s string) string {
	if w, ok := p.words[s]; ok {
		return w
	}
	if len(p.words) < 10000 {
		p.words[s] = s
	}
	return s
}

type chunk struct {
	id, doc string
	ordinal int64
}

type entity struct {
	stats     graph.EntityStats
	nameLower string
	exists    bool // in the graph; false while only a torn read refers to it
	postings  []posting
	groups    map[groupKey]*group
	sorted    []*group // groups best first (see sortGroups)
	dirty     bool
}

type posting struct {
	chunk int32
	count int64
	conf  float64
}

// groupKey is the grouping of graph.ExpandReader.Neighbours: neighbour, type and
// whether the relations point from this entity to the neighbour.
type groupKey struct {
	other, typ string
	out        bool
}

type group struct {
	key      groupKey
	contribs []*contrib // by document id
	conf     float64
	weight   float64
	// rendered is the group as a graph.Edge from its entity's side, built by the
	// first read after a change (readers share it; aggregate, which every change
	// of contribs goes through under the write lock, drops it).
	rendered atomic.Pointer[graph.Edge]
}

// contrib is one document's contribution to a relation, shared by the groups of
// both ends.
type contrib struct {
	from, to, typ string
	doc, source   string
	weight, conf  float64
	evidence      []string
}

type document struct {
	ingested  bool
	chunks    []int32
	mentioned []string // entities with postings from the document
	relations []*contrib
}

// Loaded reports whether a snapshot has been loaded.
func (p *Projection) Loaded() bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.loaded
}

// Seq is the feed position the projection has applied.
func (p *Projection) Seq() int64 {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.seq
}

// Size counts what the projection holds.
type Size struct {
	Entities, Chunks, Documents, Postings, Relations int64
}

// Size counts entities, chunks, ingested documents, postings (chunk mentions) and
// relation contributions.
func (p *Projection) Size() Size {
	p.mu.RLock()
	defer p.mu.RUnlock()
	s := Size{Chunks: p.totalChunks, Documents: p.totalDocs}
	for _, e := range p.entities {
		if e.exists {
			s.Entities++
		}
		s.Postings += int64(len(e.postings))
	}
	for _, d := range p.docs {
		s.Relations += int64(len(d.relations))
	}
	return s
}

// Load replaces the projection's content with a snapshot.
func (p *Projection) Load(st graph.State) {
	fresh := New()
	fresh.apply(st)
	fresh.seq = st.Seq
	p.mu.Lock()
	defer p.mu.Unlock()
	p.entities, p.docs, p.chunks, p.free, p.words = fresh.entities, fresh.docs, fresh.chunks, fresh.free, fresh.words
	p.totalChunks, p.totalDocs, p.seq, p.loaded = fresh.totalChunks, fresh.totalDocs, st.Seq, true
}

// Apply applies the state read for changes up to seq.
func (p *Projection) Apply(st graph.State, seq int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.apply(st)
	p.seq = max(p.seq, seq)
}

// apply replaces the contribution of every document of st and the properties of
// its entities. The caller holds the write lock (or owns p).
func (p *Projection) apply(st graph.State) {
	for _, d := range st.Docs {
		p.removeDoc(d.ID)
		p.addDoc(d)
	}
	for _, es := range st.Entities {
		e := p.entity(es.ID)
		id := e.stats.ID // the map's key: one copy of the id
		e.stats, e.nameLower, e.exists = es.EntityStats, es.NameLower, true
		e.stats.ID, e.stats.Type = id, p.word(es.Type)
		if es.NameLower == strings.ToLower(es.Name) && es.NameLower == es.Name {
			e.nameLower = e.stats.Name
		}
	}
	for _, id := range st.Gone {
		if e := p.entities[id]; e != nil {
			e.exists = false
			p.dropIfEmpty(id, e)
		}
	}
	for _, e := range p.dirty {
		sortGroups(e)
	}
	p.dirty = p.dirty[:0]
}

func (p *Projection) entity(id string) *entity {
	e := p.entities[id]
	if e == nil {
		e = &entity{stats: graph.EntityStats{EntityRef: graph.EntityRef{ID: id}}}
		p.entities[id] = e
	}
	return e
}

func (p *Projection) dropIfEmpty(id string, e *entity) {
	if !e.exists && len(e.postings) == 0 && len(e.groups) == 0 {
		delete(p.entities, id)
	}
}

func (p *Projection) removeDoc(id string) {
	d := p.docs[id]
	if d == nil {
		return
	}
	delete(p.docs, id)
	if d.ingested {
		p.totalDocs--
	}
	gone := make(map[int32]bool, len(d.chunks))
	for _, c := range d.chunks {
		gone[c] = true
		p.chunks[c] = chunk{}
		p.free = append(p.free, c)
		p.totalChunks--
	}
	for _, eid := range d.mentioned {
		e := p.entities[eid]
		if e == nil {
			continue
		}
		e.postings = slices.DeleteFunc(e.postings, func(x posting) bool { return gone[x.chunk] })
		if len(e.postings) == 0 {
			e.postings = nil
		}
		p.dropIfEmpty(eid, e)
	}
	for _, c := range d.relations {
		p.unlink(c.from, groupKey{c.to, c.typ, true}, c)
		p.unlink(c.to, groupKey{c.from, c.typ, false}, c)
	}
}

func (p *Projection) unlink(eid string, k groupKey, c *contrib) {
	e := p.entities[eid]
	if e == nil {
		return
	}
	g := e.groups[k]
	if g == nil {
		return
	}
	g.contribs = slices.DeleteFunc(g.contribs, func(x *contrib) bool { return x == c })
	if len(g.contribs) == 0 {
		delete(e.groups, k)
	} else {
		aggregate(g)
	}
	p.touch(e)
	p.dropIfEmpty(eid, e)
}

func (p *Projection) addDoc(ds graph.DocState) {
	if !ds.Ingested {
		return
	}
	d := &document{ingested: true}
	p.docs[ds.ID] = d
	p.totalDocs++
	seen := map[string]bool{}
	ids := make(map[string]string, len(ds.Chunks)) // chunk ids, for evidence
	for _, c := range ds.Chunks {
		slot := p.slot(chunk{id: c.ID, doc: ds.ID, ordinal: c.Ordinal})
		ids[c.ID] = c.ID
		d.chunks = append(d.chunks, slot)
		for _, m := range c.Mentions {
			e := p.entity(m.EntityID)
			e.postings = append(e.postings, posting{chunk: slot, count: m.Count, conf: m.Confidence})
			if !seen[m.EntityID] {
				seen[m.EntityID] = true
				d.mentioned = append(d.mentioned, e.stats.ID)
			}
		}
	}
	for _, r := range ds.Relations {
		ev := make([]string, len(r.Evidence))
		for i, x := range r.Evidence {
			if id, ok := ids[x]; ok {
				x = id
			}
			ev[i] = x
		}
		c := &contrib{from: p.entity(r.From).stats.ID, to: p.entity(r.To).stats.ID, typ: p.word(r.Type), doc: ds.ID,
			source: p.word(r.Source), weight: r.Weight, conf: r.Confidence, evidence: ev}
		d.relations = append(d.relations, c)
		p.link(r.From, groupKey{r.To, r.Type, true}, c)
		p.link(r.To, groupKey{r.From, r.Type, false}, c)
	}
}

func (p *Projection) slot(c chunk) int32 {
	p.totalChunks++
	if n := len(p.free); n > 0 {
		s := p.free[n-1]
		p.free = p.free[:n-1]
		p.chunks[s] = c
		return s
	}
	p.chunks = append(p.chunks, c)
	return int32(len(p.chunks) - 1)
}

func (p *Projection) link(eid string, k groupKey, c *contrib) {
	e := p.entity(eid)
	if e.groups == nil {
		e.groups = map[groupKey]*group{}
	}
	g := e.groups[k]
	if g == nil {
		g = &group{key: k}
		e.groups[k] = g
	}
	i, _ := slices.BinarySearchFunc(g.contribs, c.doc, func(x *contrib, doc string) int { return cmp.Compare(x.doc, doc) })
	g.contribs = slices.Insert(g.contribs, i, c)
	aggregate(g)
	p.touch(e)
}

func (p *Projection) touch(e *entity) {
	if !e.dirty {
		e.dirty = true
		p.dirty = append(p.dirty, e)
	}
}

// aggregate combines a group's contributions as the Store's Cypher does (see
// "Evidence is kept per document" in pkg/graph): pattern and link claims by
// noisy-or and sum, co-occurrence statistics by maximum.
func aggregate(g *group) {
	p, maxConf, w, maxW := 1.0, 0.0, 0.0, 0.0
	for _, c := range g.contribs {
		if c.source == graph.SourceCooccurrence {
			maxConf = max(maxConf, c.conf)
			if abs(c.weight) > abs(maxW) {
				maxW = c.weight
			}
			continue
		}
		p *= 1.0 - c.conf
		w += c.weight
	}
	g.conf = 1.0 - p*(1.0-maxConf)
	g.weight = w + maxW
	g.rendered.Store(nil)
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// sortGroups orders an entity's groups as Neighbours ranks them: confidence,
// then weight (highest first), then neighbour id, type and direction.
func sortGroups(e *entity) {
	e.dirty = false
	e.sorted = e.sorted[:0]
	for _, g := range e.groups {
		e.sorted = append(e.sorted, g)
	}
	slices.SortFunc(e.sorted, func(a, b *group) int {
		if c := cmp.Compare(b.conf, a.conf); c != 0 {
			return c
		}
		if c := cmp.Compare(b.weight, a.weight); c != 0 {
			return c
		}
		if c := cmp.Compare(a.key.other, b.key.other); c != 0 {
			return c
		}
		if c := cmp.Compare(a.key.typ, b.key.typ); c != 0 {
			return c
		}
		if a.key.out == b.key.out {
			return 0
		}
		if a.key.out {
			return -1
		}
		return 1
	})
	if len(e.sorted) == 0 {
		e.sorted = nil
	}
}
