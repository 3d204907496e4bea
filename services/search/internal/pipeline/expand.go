package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kgsearch/kgsearch/pkg/kgapi"
	"github.com/kgsearch/kgsearch/pkg/queryparse"
	"github.com/kgsearch/kgsearch/pkg/ranker"
)

// expansionName names the expansion in metrics, degraded and explain.
const expansionName = "expansion"

// Retriever is the kg service's one-round-trip call (*kgapi.Client has it): the
// match of the query entities, their expansion and the match of the related
// entities used, in one request instead of three.
type Retriever interface {
	Retrieve(ctx context.Context, req kgapi.RetrieveRequest) (*kgapi.RetrieveResponse, error)
}

// expansion is phase 3's work on kg, started beside the retrievers by startExpansion
// and awaited by expand: kg expand of the query entities, then kg match of the
// related entities used. When the kg client is a Retriever, it is one Retrieve call
// whose match part the graph retriever takes (graphReady) instead of calling kg.
type expansion struct {
	done     chan struct{} // closed when the fields below are final
	out      outcome
	expanded *kgapi.ExpandResponse
	match    *kgapi.MatchResponse // chunks of the related entities used
	explored Exploration

	graphReady chan struct{} // nil: no Retrieve call; closed when graph and graphErr are set
	graph      *kgapi.MatchResponse
	graphErr   error
}

// startExpansion starts the expansion when the request asks for it and the graph
// retriever runs. It needs only the parse, so it runs beside the retrievers under the
// same deadline (ctx); expand awaits it. It returns nil when the expansion does not run.
func (p *Pipeline) startExpansion(ctx context.Context, s *search) *expansion {
	if !s.req.Expand || len(s.keys) == 0 || p.kg == nil {
		return nil
	}
	e := &expansion{done: make(chan struct{})}
	rt, combined := p.kg.(Retriever)
	if combined {
		e.graphReady = make(chan struct{})
		s.exp = e // the graph retriever takes its match from here
	}
	go func() {
		defer close(e.done)
		e.out = p.timed(ctx, expansionName, p.opt.ExpandTimeout+p.opt.GraphTimeout, func(ctx context.Context) (int, error) {
			if combined {
				return p.runRetrieve(ctx, rt, s, e)
			}
			return p.runExpansion(ctx, s.q, s.keys, e)
		})
	}()
	return e
}

// runRetrieve asks kg once for the match, the expansion and the match of the
// related entities used; the match goes to the graph retriever. When kg used other
// related entities than exploration selects (it should not), their chunks are
// asked for separately.
func (p *Pipeline) runRetrieve(ctx context.Context, rt Retriever, s *search, e *expansion) (int, error) {
	res, err := rt.Retrieve(ctx, kgapi.RetrieveRequest{Entities: s.keys, Limit: p.opt.Candidates,
		Expand: &kgapi.RetrieveExpand{MaxHops: p.opt.ExpandHops, Limit: 4 * p.opt.ExpandLimit,
			MinConfidence: p.opt.ExpandMinConfidence, Use: p.opt.ExpandLimit}})
	if err == nil && res.Expand == nil {
		err = errors.New("kg retrieve answered without the expansion")
	}
	if err != nil {
		e.graphErr = err
	} else {
		e.graph = &res.Match
	}
	close(e.graphReady)
	if err != nil {
		return 0, err
	}
	e.expanded = res.Expand
	used := p.exploration(&e.explored, s.q, res.Expand)
	if len(used) == 0 {
		return 0, nil
	}
	m := res.ExpandMatch
	if m == nil || !slices.Equal(used, res.Used) {
		if m, err = p.kg.Match(ctx, kgapi.MatchRequest{Entities: used, Limit: p.opt.Candidates}); err != nil {
			return 0, err
		}
	}
	e.match = m
	return len(m.Chunks), nil
}

func (p *Pipeline) runExpansion(ctx context.Context, q queryparse.Query, keys []string, e *expansion) (int, error) {
	ectx, cancel := context.WithTimeout(ctx, p.opt.ExpandTimeout)
	ex, err := p.kg.Expand(ectx, kgapi.ExpandRequest{Entities: keys, MaxHops: p.opt.ExpandHops,
		Limit: 4 * p.opt.ExpandLimit, MinConfidence: p.opt.ExpandMinConfidence})
	cancel()
	if err != nil {
		return 0, err
	}
	e.expanded = ex
	used := p.exploration(&e.explored, q, ex)
	if len(used) == 0 {
		return 0, nil
	}
	m, err := p.kg.Match(ctx, kgapi.MatchRequest{Entities: used, Limit: p.opt.Candidates})
	if err != nil {
		return 0, err
	}
	e.match = m
	return len(m.Chunks), nil
}

// expand is phase 3: it awaits the expansion started beside the retrievers, reports
// it in exploration and merges the chunks of the related entities into the candidates
// (only when the graph retriever answered). Its time is the expansion's own plus the
// merge, so it overlaps retrieve.
func (p *Pipeline) expand(s *search, e *expansion) {
	s.exp = e
	if e != nil {
		<-e.done
	}
	t := time.Now()
	if graphOK := s.out[ranker.Graph].ok(); graphOK && e != nil {
		if e.expanded != nil {
			s.resp.Exploration = e.explored
		}
		if e.out.err == nil && e.match != nil {
			s.mergeExpansion(e.match)
		}
	}
	ex := &s.resp.Exploration
	ex.OriginalEntityCount = len(s.q.Entities)
	if ex.ExpansionRelationships == nil {
		ex.ExpansionRelationships = []Relationship{}
	}
	if ex.DiscoveredEntities == nil {
		ex.DiscoveredEntities = []DiscoveredEntity{}
	}
	s.took.expand = time.Since(t)
	if e != nil {
		s.took.expand += e.out.took
	}
}

// mergeExpansion adds the chunks reached only through related entities; a chunk the
// graph retriever reached directly keeps its direct score.
func (s *search) mergeExpansion(m *kgapi.MatchResponse) {
	for _, mc := range m.Chunks {
		c := s.candidate(mc.ChunkID)
		if c == nil || !finite(mc.Score) || mc.Score < 0 {
			continue
		}
		c.mentions = appendUnique(c.mentions, mc.Matched...)
		if c.sources&srcGraph != 0 {
			continue // reached directly: the direct score stands
		}
		c.sources |= srcExpanded
		if !c.c.HasGraph || mc.Score > c.c.GraphScore {
			c.c.GraphScore, c.c.HasGraph = mc.Score, true
		}
		c.c.GraphExpandedOnly = true
		if c.c.DocumentID == "" {
			c.c.DocumentID = mc.DocumentID
		}
	}
}

// exploration fills ex from the expansion and returns the keys of the related
// entities whose chunks are used.
func (p *Pipeline) exploration(ex *Exploration, q queryparse.Query, er *kgapi.ExpandResponse) []string {
	queryIDs := map[string]bool{}
	for _, e := range q.Entities {
		queryIDs[e.ID] = true
	}
	for _, r := range er.Resolved {
		queryIDs[r.ID] = true
	}
	rels := []Relationship{}
	seenRel := map[Relationship]bool{}
	var used []string
	for _, r := range er.Related {
		if queryIDs[r.ID] {
			continue
		}
		d := DiscoveredEntity{Name: r.Name, Type: r.Type, Confidence: round(r.Confidence, 3), Hops: r.Hops}
		switch {
		case !finite(r.Confidence) || r.Confidence < p.opt.ExpandMinConfidence:
			d.Reason = fmt.Sprintf("confidence %.2f is below the threshold %.2f", r.Confidence, p.opt.ExpandMinConfidence)
		case len(used) >= p.opt.ExpandLimit:
			d.Reason = fmt.Sprintf("beyond the %d best related entities", p.opt.ExpandLimit)
		default:
			d.Used = true
			d.Reason = pathReason(r.Path)
			key := r.ID
			if key == "" {
				key = r.Name
			}
			used = append(used, key)
			for _, st := range r.Path {
				rel := Relationship{From: st.From, Relation: st.Relation, To: st.To}
				if !seenRel[rel] {
					seenRel[rel] = true
					rels = append(rels, rel)
				}
			}
		}
		ex.DiscoveredEntities = append(ex.DiscoveredEntities, d)
	}
	ex.ExpandedEntityCount = len(used)
	ex.ExpansionRelationships = rels
	return used
}

// pathReason is why a related entity was used: the path that reached it.
func pathReason(path []kgapi.PathStep) string {
	steps := make([]string, 0, len(path))
	for _, st := range path {
		steps = append(steps, fmt.Sprintf("%s -%s-> %s", st.From, st.Relation, st.To))
	}
	if len(steps) == 0 {
		return "related to the query entities"
	}
	return strings.Join(steps, ", ")
}
