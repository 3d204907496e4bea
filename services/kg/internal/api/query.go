package api

import (
	"cmp"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/kgsearch/kgsearch/pkg/extract"
	"github.com/kgsearch/kgsearch/pkg/graph"
	"github.com/kgsearch/kgsearch/pkg/httpserver"
	"github.com/kgsearch/kgsearch/pkg/kgapi"
)

// resolved is the outcome of resolving the names of a match or expand request.
type resolved struct {
	ids   []string   // distinct candidate entity ids, in request order
	names []string   // the request names, trimmed
	cands [][]string // per name, its candidate ids (none: no usable key)
}

// resolveNames validates the entities field and maps each name to candidate
// entity ids: the id the extractor resolves it to ("Postgres" → postgresql) and,
// when the name itself looks like an id (no upper case, no spaces) and differs,
// the name as given, so ids the extractor would not produce still match.
func (s *Service) resolveNames(names []string) (resolved, error) {
	if len(names) == 0 {
		return resolved{}, httpserver.BadRequest("entities", "entities is empty; send at least one entity name or id")
	}
	if len(names) > maxQueryNames {
		return resolved{}, httpserver.BadRequest("entities", fmt.Sprintf("entities has %d entries, the maximum is %d", len(names), maxQueryNames))
	}
	r := resolved{names: make([]string, len(names)), cands: make([][]string, len(names))}
	seen := map[string]bool{}
	add := func(i int, id string) {
		r.cands[i] = append(r.cands[i], id)
		if !seen[id] {
			seen[id] = true
			r.ids = append(r.ids, id)
		}
	}
	for i, n := range names {
		f := fmt.Sprintf("entities[%d]", i)
		n = strings.TrimSpace(n)
		if n == "" {
			return resolved{}, httpserver.BadRequest(f, f+" is empty")
		}
		if len(n) > maxNameBytes || !utf8.ValidString(n) {
			return resolved{}, httpserver.BadRequest(f, fmt.Sprintf("%s must be UTF-8 text of at most %d bytes", f, maxNameBytes))
		}
		r.names[i] = n
		if extract.Key(n) == "" {
			continue
		}
		id := s.x.Resolve(n)
		add(i, id)
		if n != id && n == strings.ToLower(n) && !strings.ContainsAny(n, " \t") {
			add(i, n)
		}
	}
	if len(r.ids) > maxQueryNames {
		return resolved{}, httpserver.BadRequest("entities", fmt.Sprintf("entities resolve to %d candidate ids, the maximum is %d; send fewer names", len(r.ids), maxQueryNames))
	}
	return r, nil
}

// unknown lists the request names none of whose candidate ids the graph holds.
func (r resolved) unknown(missing []string) []string {
	var out []string
	for i, n := range r.names {
		found := false
		for _, id := range r.cands[i] {
			if !slices.Contains(missing, id) {
				found = true
				break
			}
		}
		if !found {
			out = append(out, n)
		}
	}
	return out
}

// limitParam checks a limit: 0 means def, negative or above maxN is refused.
func limitParam(v, def, maxN int) (int, error) {
	if v == 0 {
		return def, nil
	}
	if v < 0 || v > maxN {
		return 0, httpserver.BadRequest("limit", fmt.Sprintf("limit is %d, want 1..%d (0 or absent means %d)", v, maxN, def))
	}
	return v, nil
}

func (s *Service) match(c *gin.Context) error {
	var req kgapi.MatchRequest
	if err := httpserver.DecodeJSON(c.Request.Body, &req); err != nil {
		return err
	}
	limit, err := limitParam(req.Limit, defaultLimit, maxMatchLimit)
	if err != nil {
		return err
	}
	r, err := s.resolveNames(req.Entities)
	if err != nil {
		return err
	}
	out := kgapi.MatchResponse{Chunks: []kgapi.ChunkMatch{}, Resolved: []kgapi.EntityRef{}}
	if len(r.ids) == 0 {
		out.Unknown = r.unknown(nil)
		return reply(c, http.StatusOK, out)
	}
	if err := s.needGraph(); err != nil {
		return err
	}
	ctx, cancel := s.graphCtx(c)
	defer cancel()
	window := max(limit*matchWindowMult, minMatchWindow)
	res, err := s.g.MatchEntities(ctx, r.ids, window)
	if err != nil {
		return graphError(err)
	}
	for _, e := range res.Entities {
		out.Resolved = append(out.Resolved, kgapi.EntityRef{ID: e.ID, Name: e.Name, Type: e.Type})
	}
	out.Unknown = r.unknown(res.Missing)
	out.Chunks = Score(res, limit)
	return reply(c, http.StatusOK, out)
}

// Specificity is the IDF-like weight of an entity mentioned by chunkFreq of
// totalChunks chunks: ln(1 + N/cf) / ln(1 + N), in (0, 1].
func Specificity(chunkFreq, totalChunks int64) float64 {
	n := float64(max(totalChunks, 1))
	cf := float64(min(max(chunkFreq, 1), max(totalChunks, 1)))
	return math.Log1p(n/cf) / math.Log1p(n)
}

// Score computes the graph relevance of the matched chunks (see the package
// documentation) and returns the best limit of them.
func Score(res graph.MatchResult, limit int) []kgapi.ChunkMatch {
	q := len(res.Entities)
	if q == 0 {
		return []kgapi.ChunkMatch{}
	}
	w := make(map[string]float64, q)
	for _, e := range res.Entities {
		w[e.ID] = Specificity(e.ChunkFreq, res.TotalChunks)
	}
	out := make([]kgapi.ChunkMatch, 0, len(res.Chunks))
	for _, ch := range res.Chunks {
		m := kgapi.ChunkMatch{ChunkID: ch.ChunkID, DocumentID: ch.DocumentID, Ordinal: int(ch.Ordinal), Matched: []string{}}
		sum := 0.0
		for _, mn := range ch.Mentions {
			we, ok := w[mn.EntityID]
			if !ok {
				continue
			}
			sum += unit(mn.Confidence) * we
			m.Matched = append(m.Matched, mn.EntityID)
		}
		if len(m.Matched) == 0 {
			continue
		}
		m.Score = sum / float64(q)
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b kgapi.ChunkMatch) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		if c := cmp.Compare(len(b.Matched), len(a.Matched)); c != 0 {
			return c
		}
		return cmp.Compare(a.ChunkID, b.ChunkID)
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

func (s *Service) expand(c *gin.Context) error {
	var req kgapi.ExpandRequest
	if err := httpserver.DecodeJSON(c.Request.Body, &req); err != nil {
		return err
	}
	hops := req.MaxHops
	if hops == 0 {
		hops = 1
	}
	if hops < 1 || hops > 2 {
		return httpserver.BadRequest("max_hops", fmt.Sprintf("max_hops is %d, want 1 or 2", req.MaxHops))
	}
	limit, err := limitParam(req.Limit, defaultLimit, maxExpandLimit)
	if err != nil {
		return err
	}
	if math.IsNaN(req.MinConfidence) || req.MinConfidence < 0 || req.MinConfidence > 1 {
		return httpserver.BadRequest("min_confidence", fmt.Sprintf("min_confidence is %v, want a number in [0,1]", req.MinConfidence))
	}
	types := make([]string, 0, len(req.RelationTypes))
	for i, t := range req.RelationTypes {
		u := strings.ToUpper(strings.TrimSpace(t))
		if !s.relTypes[u] {
			f := fmt.Sprintf("relation_types[%d]", i)
			return httpserver.BadRequest(f, fmt.Sprintf("%s %q is not a relation type; want one of %s", f, clip(t, 64), strings.Join(extract.RelationTypes(), ", ")))
		}
		if !slices.Contains(types, u) {
			types = append(types, u)
		}
	}
	r, err := s.resolveNames(req.Entities)
	if err != nil {
		return err
	}
	out := kgapi.ExpandResponse{Resolved: []kgapi.EntityRef{}, Related: []kgapi.RelatedEntity{}}
	if len(r.ids) == 0 {
		out.Unknown = r.unknown(nil)
		return reply(c, http.StatusOK, out)
	}
	if err := s.needGraph(); err != nil {
		return err
	}
	ctx, cancel := s.graphCtx(c)
	defer cancel()
	res, err := s.g.Expand(ctx, graph.ExpandQuery{
		EntityIDs: r.ids, MaxHops: hops, Limit: limit, MinConfidence: req.MinConfidence, RelationTypes: types,
	})
	if err != nil {
		return graphError(err)
	}
	out.Unknown = r.unknown(res.Missing)
	for _, e := range res.Found {
		out.Resolved = append(out.Resolved, kgapi.EntityRef{ID: e.ID, Name: e.Name, Type: e.Type})
	}
	for _, rel := range res.Related {
		re := kgapi.RelatedEntity{
			EntityRef:  kgapi.EntityRef{ID: rel.Entity.ID, Name: rel.Entity.Name, Type: rel.Entity.Type},
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
		out.Related = append(out.Related, re)
	}
	return reply(c, http.StatusOK, out)
}

func (s *Service) parse(c *gin.Context) error {
	var req kgapi.ParseRequest
	if err := httpserver.DecodeJSON(c.Request.Body, &req); err != nil {
		return err
	}
	if strings.TrimSpace(req.Text) == "" {
		return httpserver.BadRequest("text", "text is empty; send the query to parse")
	}
	if len(req.Text) > s.lim.MaxQueryBytes {
		return httpserver.BadRequest("text", fmt.Sprintf("text is %d bytes long, the maximum is %d (KG_MAX_QUERY_BYTES)", len(req.Text), s.lim.MaxQueryBytes))
	}
	if !utf8.ValidString(req.Text) {
		return httpserver.BadRequest("text", "text is not valid UTF-8")
	}
	ents := s.x.Query(req.Text)
	out := kgapi.ParseResponse{Entities: make([]kgapi.QueryEntity, len(ents))}
	for i, e := range ents {
		out.Entities[i] = kgapi.QueryEntity{Text: e.Text, ID: e.ID, Name: e.Name, Type: e.Type, Confidence: e.Confidence, Start: e.Start, End: e.End}
	}
	return reply(c, http.StatusOK, out)
}
