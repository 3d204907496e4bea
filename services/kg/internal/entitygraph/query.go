package entitygraph

import (
	"context"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kgsearch/kgsearch/pkg/extract"
	"github.com/kgsearch/kgsearch/pkg/fielderr"
	"github.com/kgsearch/kgsearch/pkg/graph"
	"github.com/kgsearch/kgsearch/pkg/kgapi"
)

// Match resolves the request's names to entities and returns the chunks that
// mention them, best first by graph relevance (Score). Names that resolve to no
// entity of the graph are listed in Unknown.
func (s *Service) Match(ctx context.Context, req kgapi.MatchRequest) (kgapi.MatchResponse, error) {
	limit, err := limitParam(req.Limit, DefaultLimit, maxMatchLimit)
	if err != nil {
		return kgapi.MatchResponse{}, err
	}
	r, err := s.resolveNames(req.Entities)
	if err != nil {
		return kgapi.MatchResponse{}, err
	}
	out := kgapi.MatchResponse{Chunks: []kgapi.ChunkMatch{}, Resolved: []kgapi.EntityRef{}}
	if len(r.ids) == 0 {
		out.Unknown = r.unknown(nil)
		return out, nil
	}
	ctx, cancel, err := s.graphCtx(ctx)
	if err != nil {
		return kgapi.MatchResponse{}, err
	}
	defer cancel()
	window := max(limit*matchWindowMult, minMatchWindow)
	res, err := s.d.Reader.MatchEntities(ctx, r.ids, window)
	if err != nil {
		return kgapi.MatchResponse{}, err
	}
	for _, e := range res.Entities {
		out.Resolved = append(out.Resolved, ref(e.EntityRef))
	}
	out.Unknown = r.unknown(res.Missing)
	out.Chunks = Score(res, limit)
	return out, nil
}

// expandQuery validates an expand request's options (not its names).
func (s *Service) expandQuery(req kgapi.ExpandRequest) (graph.ExpandQuery, error) {
	q := graph.ExpandQuery{MaxHops: req.MaxHops, MinConfidence: req.MinConfidence, RelationTypes: []string{}}
	if q.MaxHops == 0 {
		q.MaxHops = 1
	}
	if q.MaxHops < 1 || q.MaxHops > 2 {
		return q, fielderr.Newf("max_hops", "max_hops is %d, want 1 or 2", req.MaxHops)
	}
	var err error
	if q.Limit, err = limitParam(req.Limit, DefaultLimit, maxExpandLimit); err != nil {
		return q, err
	}
	if math.IsNaN(req.MinConfidence) || req.MinConfidence < 0 || req.MinConfidence > 1 {
		return q, fielderr.Newf("min_confidence", "min_confidence is %v, want a number in [0,1]", req.MinConfidence)
	}
	for i, t := range req.RelationTypes {
		u := strings.ToUpper(strings.TrimSpace(t))
		if !s.relTypes[u] {
			return q, fielderr.Newf(fieldIndex("relation_types", i), "%s %q is not a relation type; want one of %s",
				fieldIndex("relation_types", i), Clip(t, 64), strings.Join(extract.RelationTypes(), ", "))
		}
		if !slices.Contains(q.RelationTypes, u) {
			q.RelationTypes = append(q.RelationTypes, u)
		}
	}
	return q, nil
}

// Expand resolves the request's names and returns the entities related to them
// in the graph, with the path and evidence of each.
func (s *Service) Expand(ctx context.Context, req kgapi.ExpandRequest) (kgapi.ExpandResponse, error) {
	q, err := s.expandQuery(req)
	if err != nil {
		return kgapi.ExpandResponse{}, err
	}
	r, err := s.resolveNames(req.Entities)
	if err != nil {
		return kgapi.ExpandResponse{}, err
	}
	out := kgapi.ExpandResponse{Resolved: []kgapi.EntityRef{}, Related: []kgapi.RelatedEntity{}}
	if len(r.ids) == 0 {
		out.Unknown = r.unknown(nil)
		return out, nil
	}
	ctx, cancel, err := s.graphCtx(ctx)
	if err != nil {
		return kgapi.ExpandResponse{}, err
	}
	defer cancel()
	q.EntityIDs = r.ids
	res, err := s.d.Reader.Expand(ctx, q)
	if err != nil {
		return kgapi.ExpandResponse{}, err
	}
	out.Unknown = r.unknown(res.Missing)
	for _, e := range res.Found {
		out.Resolved = append(out.Resolved, ref(e))
	}
	for _, rel := range res.Related {
		out.Related = append(out.Related, related(rel))
	}
	return out, nil
}

// Retrieve answers one search's graph questions in one call: the match of the
// request's entities and, when asked, their expansion and the match of the
// related entities used (the first Use of them, best first, whose confidence is
// at least MinConfidence). Each part is what Match and Expand answer.
func (s *Service) Retrieve(ctx context.Context, req kgapi.RetrieveRequest) (kgapi.RetrieveResponse, error) {
	var out kgapi.RetrieveResponse
	var ereq kgapi.ExpandRequest
	if x := req.Expand; x != nil {
		if x.Use < 0 || x.Use > maxQueryNames {
			return out, fielderr.Newf("expand.use", "expand.use is %d, want 0..%d", x.Use, maxQueryNames)
		}
		ereq = kgapi.ExpandRequest{Entities: req.Entities, MaxHops: x.MaxHops, Limit: x.Limit,
			MinConfidence: x.MinConfidence, RelationTypes: x.RelationTypes}
		if _, err := s.expandQuery(ereq); err != nil {
			var fe *fielderr.Error
			if errors.As(err, &fe) {
				return out, &fielderr.Error{Field: "expand." + fe.Field, Reason: "expand." + fe.Reason, Err: fe.Err}
			}
			return out, err
		}
	}
	var err error
	if out.Match, err = s.Match(ctx, kgapi.MatchRequest{Entities: req.Entities, Limit: req.Limit}); err != nil {
		return out, err
	}
	if req.Expand == nil {
		return out, nil
	}
	ex, err := s.Expand(ctx, ereq)
	if err != nil {
		return out, err
	}
	out.Expand = &ex
	for _, r := range ex.Related {
		if len(out.Used) == req.Expand.Use {
			break
		}
		if !math.IsNaN(r.Confidence) && !math.IsInf(r.Confidence, 0) && r.Confidence >= req.Expand.MinConfidence {
			out.Used = append(out.Used, r.ID)
		}
	}
	if len(out.Used) == 0 {
		return out, nil
	}
	m, err := s.Match(ctx, kgapi.MatchRequest{Entities: out.Used, Limit: req.Limit})
	if err != nil {
		return out, err
	}
	out.ExpandMatch = &m
	return out, nil
}

// related maps one expansion result, keeping each edge's stored direction and
// the distinct evidence chunks along the path.
func related(rel graph.Related) kgapi.RelatedEntity {
	re := kgapi.RelatedEntity{
		EntityRef:  ref(rel.Entity),
		Confidence: rel.Score, Hops: rel.Hops, Path: make([]kgapi.PathStep, 0, len(rel.Path)),
	}
	seen := map[string]bool{}
	for _, e := range rel.Path {
		re.Path = append(re.Path, kgapi.PathStep{From: e.From, Relation: e.Type, To: e.To,
			Confidence: e.Confidence, Weight: e.Weight, Support: e.Support})
		for _, ev := range e.Evidence {
			if !seen[ev] {
				seen[ev] = true
				re.Evidence = append(re.Evidence, ev)
			}
		}
	}
	return re
}

// Parse runs the extractor on a query text; it needs no graph.
func (s *Service) Parse(text string) (kgapi.ParseResponse, error) {
	if strings.TrimSpace(text) == "" {
		return kgapi.ParseResponse{}, fielderr.New("text", "text is empty; send the query to parse")
	}
	if len(text) > s.lim.MaxQueryBytes {
		return kgapi.ParseResponse{}, fielderr.Newf("text", "text is %d bytes long, the maximum is %d (KG_MAX_QUERY_BYTES)", len(text), s.lim.MaxQueryBytes)
	}
	if !utf8.ValidString(text) {
		return kgapi.ParseResponse{}, fielderr.New("text", "text is not valid UTF-8")
	}
	ents := s.d.Extractor.Query(text)
	out := kgapi.ParseResponse{Entities: make([]kgapi.QueryEntity, len(ents))}
	for i, e := range ents {
		out.Entities[i] = kgapi.QueryEntity{Text: e.Text, ID: e.ID, Name: e.Name, Type: e.Type, Confidence: e.Confidence, Start: e.Start, End: e.End}
	}
	return out, nil
}

func ref(e graph.EntityRef) kgapi.EntityRef {
	return kgapi.EntityRef{ID: e.ID, Name: e.Name, Type: e.Type}
}

func fieldIndex(name string, i int) string { return name + "[" + strconv.Itoa(i) + "]" }
