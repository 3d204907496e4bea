package projection

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/kgsearch/kgsearch/pkg/graph"
)

// ErrNotLoaded means no snapshot has been loaded yet; the caller asks Neo4j instead.
var ErrNotLoaded = errors.New("graph projection not loaded yet")

// MatchEntities answers as graph.Store.MatchEntities does, from memory.
func (p *Projection) MatchEntities(ctx context.Context, entityIDs []string, limit int) (graph.MatchResult, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if !p.loaded {
		return graph.MatchResult{}, ErrNotLoaded
	}
	return graph.MatchWith(ctx, view{p}, entityIDs, limit)
}

// Expand answers as graph.Store.Expand does, from memory.
func (p *Projection) Expand(ctx context.Context, q graph.ExpandQuery) (graph.ExpandResult, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if !p.loaded {
		return graph.ExpandResult{}, ErrNotLoaded
	}
	return graph.ExpandWith(ctx, view{p}, q)
}

// EntitiesByPrefix answers as graph.Store.EntitiesByPrefix does, from memory: up
// to limit entities whose lower-case name starts with the lower-case prefix, of
// type typ when not empty, most documents first, then name and id. It scans every
// entity; the live gazetteer's periodic refresh calls it, not the query path.
func (p *Projection) EntitiesByPrefix(_ context.Context, prefix, typ string, limit int) ([]graph.EntityStats, error) {
	if limit == 0 {
		limit = 20
	}
	if limit < 0 || limit > 1000 {
		return nil, fmt.Errorf("list entities: %w: limit is %d, want 1..1000", graph.ErrInvalid, limit)
	}
	if len(prefix) > 512 {
		return nil, fmt.Errorf("list entities: %w: prefix is longer than 512 bytes", graph.ErrInvalid)
	}
	prefix = strings.ToLower(strings.TrimSpace(prefix))
	p.mu.RLock()
	defer p.mu.RUnlock()
	if !p.loaded {
		return nil, ErrNotLoaded
	}
	var hits []*entity
	for _, e := range p.entities {
		if e.exists && strings.HasPrefix(e.nameLower, prefix) && (typ == "" || e.stats.Type == typ) {
			hits = append(hits, e)
		}
	}
	slices.SortFunc(hits, func(a, b *entity) int {
		if c := cmp.Compare(b.stats.DocFreq, a.stats.DocFreq); c != 0 {
			return c
		}
		if c := cmp.Compare(a.nameLower, b.nameLower); c != 0 {
			return c
		}
		return cmp.Compare(a.stats.ID, b.stats.ID)
	})
	out := make([]graph.EntityStats, 0, min(limit, len(hits)))
	for _, e := range hits[:min(limit, len(hits))] {
		out = append(out, e.stats)
	}
	return out, nil
}

// view reads the projection for graph.MatchWith and graph.ExpandWith; the caller
// holds the read lock.
type view struct{ p *Projection }

func (v view) Totals(context.Context) (int64, int64, error) {
	return v.p.totalChunks, v.p.totalDocs, nil
}

func (v view) EntityStats(_ context.Context, ids []string) (map[string]graph.EntityStats, error) {
	out := make(map[string]graph.EntityStats, len(ids))
	for _, id := range ids {
		if e := v.p.entities[id]; e != nil && e.exists {
			out[id] = e.stats
		}
	}
	return out, nil
}

func (v view) EntityRefs(_ context.Context, ids []string) (map[string]graph.EntityRef, error) {
	out := make(map[string]graph.EntityRef, len(ids))
	for _, id := range ids {
		if e := v.p.entities[id]; e != nil && e.exists {
			out[id] = e.stats.EntityRef
		}
	}
	return out, nil
}

// acc accumulates one chunk's matched entities.
type acc struct {
	slot     int32
	matched  int
	score    float64
	mentions []graph.ChunkMention
}

func (v view) MatchChunks(_ context.Context, ids []string, totalChunks int64, limit int) ([]graph.ChunkMatch, error) {
	n := 0
	for _, id := range ids {
		if e := v.p.entities[id]; e != nil {
			n += len(e.postings)
		}
	}
	byChunk := make(map[int32]int, n)
	accs := make([]acc, 0, n)
	for _, id := range ids {
		e := v.p.entities[id]
		if e == nil || !e.exists {
			continue
		}
		idf := math.Log(1.0 + float64(totalChunks)/float64(max(e.stats.ChunkFreq, 1)))
		for _, pt := range e.postings {
			i, ok := byChunk[pt.chunk]
			if !ok {
				i = len(accs)
				byChunk[pt.chunk] = i
				accs = append(accs, acc{slot: pt.chunk})
			}
			a := &accs[i]
			a.matched++
			a.score += pt.conf * idf
			a.mentions = append(a.mentions, graph.ChunkMention{EntityID: id, Count: pt.count, Confidence: pt.conf})
		}
	}
	chunks := v.p.chunks
	slices.SortFunc(accs, func(a, b acc) int {
		if c := cmp.Compare(b.matched, a.matched); c != 0 {
			return c
		}
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(chunks[a.slot].id, chunks[b.slot].id)
	})
	out := make([]graph.ChunkMatch, 0, min(limit, len(accs)))
	for _, a := range accs[:min(limit, len(accs))] {
		c := chunks[a.slot]
		slices.SortFunc(a.mentions, func(x, y graph.ChunkMention) int { return cmp.Compare(x.EntityID, y.EntityID) })
		out = append(out, graph.ChunkMatch{ChunkID: c.id, DocumentID: c.doc, Ordinal: c.ordinal, Score: a.score, Mentions: a.mentions})
	}
	return out, nil
}

// maxEvidence is how many evidence chunk ids an aggregated edge returns (the
// Store's evidencePerEdge).
const maxEvidence = 20

func (v view) Neighbours(_ context.Context, sources, exclude, types []string, minConf float64, perSource int) ([]graph.Neighbour, error) {
	each := func(fn func(sid string, t *entity, g *group)) {
		for _, sid := range sources {
			s := v.p.entities[sid]
			if s == nil || !s.exists {
				continue
			}
			n := 0
			for _, g := range s.sorted {
				if n == perSource || g.conf < minConf {
					break
				}
				if slices.Contains(exclude, g.key.other) || len(types) > 0 && !slices.Contains(types, g.key.typ) {
					continue
				}
				t := v.p.entities[g.key.other]
				if t == nil || !t.exists {
					continue
				}
				fn(sid, t, g)
				n++
			}
		}
	}
	count := 0 // the answer is allocated once, at its size
	each(func(string, *entity, *group) { count++ })
	if count == 0 {
		return nil, nil
	}
	out := make([]graph.Neighbour, 0, count)
	each(func(sid string, t *entity, g *group) {
		out = append(out, graph.Neighbour{Source: sid, Target: t.stats.EntityRef, Edge: renderedEdge(sid, g)})
	})
	return out, nil
}

// renderedEdge is edge(source, g), built once per change of the group. The
// Sources and Evidence slices are shared by every reader (clipped, so an append
// by a caller copies them).
func renderedEdge(source string, g *group) graph.Edge {
	if e := g.rendered.Load(); e != nil {
		return *e
	}
	e := edge(source, g)
	e.Sources, e.Evidence = slices.Clip(e.Sources), slices.Clip(e.Evidence)
	g.rendered.Store(&e)
	return e
}

// edge renders an aggregated group as the Store does: evidence is the
// concatenation of the contributions' evidence cut at maxEvidence, then
// deduplicated; sources are listed once each, in contribution order.
func edge(source string, g *group) graph.Edge {
	e := graph.Edge{Type: g.key.typ, Confidence: g.conf, Weight: g.weight, Support: int64(len(g.contribs))}
	if g.key.out {
		e.From, e.To = source, g.key.other
	} else {
		e.From, e.To = g.key.other, source
	}
	var ev []string
	for _, c := range g.contribs {
		if !slices.Contains(e.Sources, c.source) {
			e.Sources = append(e.Sources, c.source)
		}
		for _, x := range c.evidence {
			if len(ev) == maxEvidence {
				break
			}
			ev = append(ev, x)
		}
	}
	for _, x := range ev {
		if !slices.Contains(e.Evidence, x) {
			e.Evidence = append(e.Evidence, x)
		}
	}
	return e
}
