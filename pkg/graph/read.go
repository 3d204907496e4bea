package graph

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// EntityRef names an entity.
type EntityRef struct {
	ID   string
	Name string
	Type string
}

// EntityStats is an entity with its corpus counters.
type EntityStats struct {
	EntityRef
	DocFreq      int64 // documents mentioning the entity
	ChunkFreq    int64 // chunks mentioning the entity
	MentionCount int64 // sum of mention counts
}

// ChunkMention is one matched entity in a chunk.
type ChunkMention struct {
	EntityID   string
	Count      int64
	Confidence float64
}

// ChunkMatch is a chunk mentioning at least one of the queried entities.
type ChunkMatch struct {
	ChunkID    string
	DocumentID string
	Ordinal    int64
	// Score is Σ confidence × ln(1 + TotalChunks/ChunkFreq) over the matched entities:
	// more matched entities, more confident mentions and rarer entities score higher.
	Score    float64
	Mentions []ChunkMention // sorted by entity id
}

// MatchResult answers MatchEntities.
type MatchResult struct {
	Chunks         []ChunkMatch  // best first: most matched entities, then Score
	Entities       []EntityStats // the queried entities that exist, in query order
	Missing        []string      // queried ids that are not in the graph
	TotalChunks    int64
	TotalDocuments int64 // ingested documents, placeholders excluded
}

// MatchEntities returns up to limit chunks mentioning any of the entities, with the
// counters needed to weight the entities' specificity. Unknown ids are listed in
// Missing, not treated as errors.
func (s *Store) MatchEntities(ctx context.Context, entityIDs []string, limit int) (MatchResult, error) {
	ids, limit, err := checkMatch(entityIDs, limit)
	if err != nil {
		return MatchResult{}, fmt.Errorf("match entities: %w", err)
	}
	sess := s.session(ctx, neo4j.AccessModeRead)
	defer sess.Close(ctx)
	res, err := neo4j.ExecuteRead(ctx, sess, func(tx neo4j.ManagedTransaction) (MatchResult, error) {
		return matchRead(ctx, txReader{tx}, ids, limit)
	})
	if err != nil {
		return MatchResult{}, fmt.Errorf("match entities: %w", classify(err))
	}
	return res, nil
}

// matchChunks is the Cypher of MatchReader.MatchChunks.
const matchChunks = `
	MATCH (e:Entity) WHERE e.id IN $ids
	MATCH (c:Chunk)-[m:MENTIONS]->(e)
	WITH c, collect({entity: e.id, count: m.count, confidence: m.confidence}) AS ms,
		count(e) AS matched,
		sum(m.confidence * log(1.0 + toFloat($total) / toFloat(CASE WHEN e.chunk_freq > 0 THEN e.chunk_freq ELSE 1 END))) AS score
	ORDER BY matched DESC, score DESC, c.id
	LIMIT $limit
	RETURN c.id AS id, c.doc_id AS doc, c.ordinal AS ordinal, ms, score`

// MatchChunks reads the best chunks mentioning the entities ids.
func (r txReader) MatchChunks(ctx context.Context, ids []string, totalChunks int64, limit int) ([]ChunkMatch, error) {
	recs, err := run(ctx, r.tx, matchChunks, map[string]any{"ids": ids, "total": totalChunks, "limit": int64(limit)})
	if err != nil {
		return nil, fmt.Errorf("match chunks: %w", err)
	}
	out := make([]ChunkMatch, 0, len(recs))
	for _, r := range recs {
		cm := ChunkMatch{
			ChunkID:    str(r, "id"),
			DocumentID: str(r, "doc"),
			Ordinal:    i64(r, "ordinal"),
			Score:      f64(r, "score"),
		}
		v, _ := r.Get("ms")
		list, _ := v.([]any)
		for _, x := range list {
			m, _ := x.(map[string]any)
			cm.Mentions = append(cm.Mentions, ChunkMention{
				EntityID:   asString(m["entity"]),
				Count:      asInt(m["count"]),
				Confidence: asFloat(m["confidence"]),
			})
		}
		slices.SortFunc(cm.Mentions, func(a, b ChunkMention) int { return cmp.Compare(a.EntityID, b.EntityID) })
		out = append(out, cm)
	}
	return out, nil
}

func checkIDList(field string, ids []string, maxN int) ([]string, error) {
	if len(ids) == 0 {
		return nil, invalid("%s is empty", field)
	}
	if len(ids) > maxN {
		return nil, invalid("%s has %d entries, the maximum is %d", field, len(ids), maxN)
	}
	for i, id := range ids {
		if err := checkID(fmt.Sprintf("%s[%d]", field, i), id); err != nil {
			return nil, err
		}
	}
	return unionIDs(ids), nil
}

// Totals counts the chunks and the ingested documents.
func (r txReader) Totals(ctx context.Context) (chunks, docs int64, err error) {
	// Label counts come from Neo4j's count store: constant time.
	recs, err := run(ctx, r.tx, `
		CALL () { MATCH (c:Chunk) RETURN count(c) AS chunks }
		CALL () { MATCH (d:Document) RETURN count(d) AS docs }
		CALL () { MATCH (p:Placeholder) RETURN count(p) AS placeholders }
		RETURN chunks, docs - placeholders AS docs`, nil)
	if err != nil {
		return 0, 0, fmt.Errorf("count chunks and documents: %w", err)
	}
	if len(recs) != 1 {
		return 0, 0, nil
	}
	return i64(recs[0], "chunks"), i64(recs[0], "docs"), nil
}

// EntityStats reads the entities ids that exist.
func (r txReader) EntityStats(ctx context.Context, ids []string) (map[string]EntityStats, error) {
	recs, err := run(ctx, r.tx, `
		MATCH (e:Entity) WHERE e.id IN $ids
		RETURN e.id AS id, e.name AS name, e.type AS type, e.doc_freq AS df,
			e.chunk_freq AS cf, e.mention_count AS mc`, map[string]any{"ids": ids})
	if err != nil {
		return nil, fmt.Errorf("read entities: %w", err)
	}
	out := make(map[string]EntityStats, len(recs))
	for _, r := range recs {
		st := EntityStats{
			EntityRef:    EntityRef{ID: str(r, "id"), Name: str(r, "name"), Type: str(r, "type")},
			DocFreq:      i64(r, "df"),
			ChunkFreq:    i64(r, "cf"),
			MentionCount: i64(r, "mc"),
		}
		out[st.ID] = st
	}
	return out, nil
}

// Edge is a relation between two entities aggregated over the documents supporting it.
type Edge struct {
	From, To   string // entity ids, in the stored direction
	Type       string
	Confidence float64 // noisy-or of the documents' confidences (co-occurrence: see Expand)
	Weight     float64 // sum of the documents' weights (co-occurrence: see Expand)
	Support    int64   // documents contributing the relation
	Sources    []string
	Evidence   []string // chunk ids, at most 20
}

// Related is an entity reached by Expand.
type Related struct {
	Entity EntityRef
	Hops   int
	// Score is the product of the path's edge confidences.
	Score float64
	// Via is the intermediate entity of a two-hop path.
	Via *EntityRef
	// Path lists the edges from a query entity to Entity.
	Path []Edge
}

// ExpandQuery asks for the entities related to EntityIDs.
type ExpandQuery struct {
	EntityIDs     []string
	MaxHops       int      // 1 or 2 (0 means 1)
	Limit         int      // 1..1000 (0 means 20)
	MinConfidence float64  // minimum aggregated confidence of every edge on the path
	RelationTypes []string // only these relation types (empty: all)
}

func (q ExpandQuery) normalise() (ExpandQuery, error) {
	ids, err := checkIDList("entity ids", q.EntityIDs, maxExpandSeeds)
	if err != nil {
		return q, err
	}
	q.EntityIDs = ids
	if q.MaxHops == 0 {
		q.MaxHops = 1
	}
	if q.MaxHops < 1 || q.MaxHops > 2 {
		return q, invalid("max hops is %d, want 1 or 2", q.MaxHops)
	}
	if q.Limit == 0 {
		q.Limit = defaultLimit
	}
	if q.Limit < 0 || q.Limit > maxExpandLimit {
		return q, invalid("limit is %d, want 1..%d", q.Limit, maxExpandLimit)
	}
	if err := checkUnit("min confidence", q.MinConfidence); err != nil {
		return q, err
	}
	for i, t := range q.RelationTypes {
		if strings.TrimSpace(t) == "" {
			return q, invalid("relation types[%d] is empty", i)
		}
	}
	if q.RelationTypes == nil {
		q.RelationTypes = []string{}
	}
	return q, nil
}

// frontier is how many one-hop entities a two-hop expansion continues from.
const frontier = 32

// ExpandResult answers Expand.
type ExpandResult struct {
	Related []Related   // best first
	Found   []EntityRef // query entities that are in the graph, in query order
	Missing []string    // query entity ids that are not in the graph
}

// Expand returns up to Limit entities related to the query entities, best first, each
// with its best path. Query entities themselves are never returned; unknown ones are
// listed in Missing. A two-hop expansion continues from the best one-hop entities only,
// which bounds its cost around hubs.
func (s *Store) Expand(ctx context.Context, q ExpandQuery) (ExpandResult, error) {
	q, err := q.normalise()
	if err != nil {
		return ExpandResult{}, fmt.Errorf("expand entities: %w", err)
	}
	sess := s.session(ctx, neo4j.AccessModeRead)
	defer sess.Close(ctx)
	res, err := neo4j.ExecuteRead(ctx, sess, func(tx neo4j.ManagedTransaction) (ExpandResult, error) {
		return expandRead(ctx, txReader{tx}, q)
	})
	if err != nil {
		return ExpandResult{}, fmt.Errorf("expand entities: %w", classify(err))
	}
	return res, nil
}

// EntityRefs reads the entities ids that exist.
func (r txReader) EntityRefs(ctx context.Context, ids []string) (map[string]EntityRef, error) {
	recs, err := run(ctx, r.tx, `
		MATCH (e:Entity) WHERE e.id IN $ids
		RETURN e.id AS id, e.name AS name, e.type AS type`, map[string]any{"ids": ids})
	if err != nil {
		return nil, fmt.Errorf("read query entities: %w", err)
	}
	found := make(map[string]EntityRef, len(recs))
	for _, r := range recs {
		found[str(r, "id")] = EntityRef{ID: str(r, "id"), Name: str(r, "name"), Type: str(r, "type")}
	}
	return found, nil
}

// Neighbours reads, per source entity, its best perSource neighbours (see
// ExpandReader).
func (r txReader) Neighbours(ctx context.Context, sources, exclude, types []string, minConf float64, perSource int) ([]Neighbour, error) {
	recs, err := run(ctx, r.tx, `
		UNWIND $sources AS sid
		MATCH (s:Entity {id: sid})
		CALL (s) {
			MATCH (s)-[r:RELATED]-(t:Entity)
			WHERE NOT t.id IN $exclude AND (size($types) = 0 OR r.type IN $types)
			WITH t, r.type AS type, startNode(r) = s AS outgoing, collect(r) AS rs
			WITH t, type, outgoing, rs,
				[x IN rs WHERE x.source <> $cooccurrence] AS claims,
				[x IN rs WHERE x.source = $cooccurrence] AS stats
			WITH t, type, outgoing, rs,
				1.0 - reduce(p = 1.0, x IN claims | p * (1.0 - x.confidence))
					* (1.0 - reduce(m = 0.0, x IN stats | CASE WHEN x.confidence > m THEN x.confidence ELSE m END)) AS confidence,
				reduce(w = 0.0, x IN claims | w + x.weight)
					+ reduce(m = 0.0, x IN stats | CASE WHEN abs(x.weight) > abs(m) THEN x.weight ELSE m END) AS weight
			WHERE confidence >= $min
			ORDER BY confidence DESC, weight DESC, t.id
			LIMIT $per
			RETURN t, type, outgoing, confidence, weight, size(rs) AS support,
				reduce(ev = [], x IN rs | ev + x.evidence)[0..$evidence] AS evidence,
				reduce(src = [], x IN rs | CASE WHEN x.source IN src THEN src ELSE src + x.source END) AS sources
		}
		RETURN s.id AS source, t.id AS id, t.name AS name, t.type AS etype, type, outgoing,
			confidence, weight, support, evidence, sources`,
		map[string]any{
			"sources": sources, "exclude": exclude, "types": types, "min": minConf, "cooccurrence": SourceCooccurrence,
			"per": int64(perSource), "evidence": int64(evidencePerEdge),
		})
	if err != nil {
		return nil, fmt.Errorf("read neighbours: %w", err)
	}
	out := make([]Neighbour, 0, len(recs))
	for _, r := range recs {
		h := Neighbour{
			Source: str(r, "source"),
			Target: EntityRef{ID: str(r, "id"), Name: str(r, "name"), Type: str(r, "etype")},
			Edge: Edge{
				Type:       str(r, "type"),
				Confidence: f64(r, "confidence"),
				Weight:     f64(r, "weight"),
				Support:    i64(r, "support"),
				Sources:    stringList(r, "sources"),
				Evidence:   unionIDs(stringList(r, "evidence")),
			},
		}
		if out, _ := r.Get("outgoing"); out == true {
			h.Edge.From, h.Edge.To = h.Source, h.Target.ID
		} else {
			h.Edge.From, h.Edge.To = h.Target.ID, h.Source
		}
		out = append(out, h)
	}
	return out, nil
}

func expandPaths(ctx context.Context, r ExpandReader, q ExpandQuery) ([]Related, error) {
	first, err := r.Neighbours(ctx, q.EntityIDs, q.EntityIDs, q.RelationTypes, q.MinConfidence, q.Limit)
	if err != nil {
		return nil, err
	}
	best := map[string]*Related{}
	better := func(r *Related) {
		cur, ok := best[r.Entity.ID]
		if !ok || r.Score > cur.Score || r.Score == cur.Score && pathWeight(r) > pathWeight(cur) {
			best[r.Entity.ID] = r
		}
	}
	for _, h := range first {
		better(&Related{Entity: h.Target, Hops: 1, Score: h.Edge.Confidence, Path: []Edge{h.Edge}})
	}
	if q.MaxHops == 2 && len(best) > 0 {
		hop1 := rank(best)
		if len(hop1) > frontier {
			hop1 = hop1[:frontier]
		}
		via := make(map[string]Related, len(hop1))
		mids := make([]string, 0, len(hop1))
		for _, r := range hop1 {
			via[r.Entity.ID] = r
			mids = append(mids, r.Entity.ID)
		}
		second, err := r.Neighbours(ctx, mids, q.EntityIDs, q.RelationTypes, q.MinConfidence, q.Limit)
		if err != nil {
			return nil, err
		}
		for _, h := range second {
			m := via[h.Source]
			if h.Target.ID == m.Entity.ID {
				continue
			}
			mid := m.Entity
			better(&Related{
				Entity: h.Target, Hops: 2, Score: m.Score * h.Edge.Confidence, Via: &mid,
				Path: []Edge{m.Path[0], h.Edge},
			})
		}
	}
	out := rank(best)
	if len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, nil
}

func pathWeight(r *Related) float64 {
	w := 0.0
	for _, e := range r.Path {
		w += e.Weight
	}
	return w
}

// rank orders by score, then path weight, then fewer hops, then id.
func rank(m map[string]*Related) []Related {
	out := make([]Related, 0, len(m))
	for _, r := range m {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b Related) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		if c := cmp.Compare(pathWeight(&b), pathWeight(&a)); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Hops, b.Hops); c != 0 {
			return c
		}
		return cmp.Compare(a.Entity.ID, b.Entity.ID)
	})
	return out
}

// RelatedEdge is an aggregated relation of an entity with the entity at its other end.
type RelatedEdge struct {
	Edge
	Other EntityRef
}

// EntityDetail describes one entity.
type EntityDetail struct {
	EntityStats
	Aliases   []string
	Relations []RelatedEdge // strongest first, at most 20
}

// Entity returns the entity with its aliases, counters and strongest relations, or
// ErrNotFound.
func (s *Store) Entity(ctx context.Context, id string) (EntityDetail, error) {
	if err := checkID("entity id", id); err != nil {
		return EntityDetail{}, fmt.Errorf("get entity: %w", err)
	}
	sess := s.session(ctx, neo4j.AccessModeRead)
	defer sess.Close(ctx)
	res, err := neo4j.ExecuteRead(ctx, sess, func(tx neo4j.ManagedTransaction) (EntityDetail, error) {
		var out EntityDetail
		recs, err := run(ctx, tx, `
			MATCH (e:Entity {id: $id})
			RETURN e.id AS id, e.name AS name, e.type AS type, e.aliases AS aliases,
				e.doc_freq AS df, e.chunk_freq AS cf, e.mention_count AS mc`, map[string]any{"id": id})
		if err != nil {
			return out, fmt.Errorf("read entity: %w", err)
		}
		if len(recs) == 0 {
			return out, ErrNotFound
		}
		r := recs[0]
		out.EntityStats = EntityStats{
			EntityRef:    EntityRef{ID: str(r, "id"), Name: str(r, "name"), Type: str(r, "type")},
			DocFreq:      i64(r, "df"),
			ChunkFreq:    i64(r, "cf"),
			MentionCount: i64(r, "mc"),
		}
		out.Aliases = stringList(r, "aliases")
		hops, err := txReader{tx}.Neighbours(ctx, []string{id}, []string{id}, []string{}, 0, defaultLimit)
		if err != nil {
			return out, err
		}
		for _, h := range hops {
			out.Relations = append(out.Relations, RelatedEdge{Edge: h.Edge, Other: h.Target})
		}
		return out, nil
	})
	if err != nil {
		return EntityDetail{}, fmt.Errorf("get entity %s: %w", id, classify(err))
	}
	return res, nil
}

// EntitiesByPrefix returns up to limit entities whose name starts with prefix (case
// insensitive), optionally of one type, most frequent first. An empty prefix lists the
// most frequent entities.
func (s *Store) EntitiesByPrefix(ctx context.Context, prefix, typ string, limit int) ([]EntityStats, error) {
	if limit == 0 {
		limit = defaultLimit
	}
	if limit < 0 || limit > maxExpandLimit {
		return nil, fmt.Errorf("list entities: %w", invalid("limit is %d, want 1..%d", limit, maxExpandLimit))
	}
	if len(prefix) > maxNameLen {
		return nil, fmt.Errorf("list entities: %w", invalid("prefix is longer than %d bytes", maxNameLen))
	}
	sess := s.session(ctx, neo4j.AccessModeRead)
	defer sess.Close(ctx)
	recs, err := neo4j.ExecuteRead(ctx, sess, func(tx neo4j.ManagedTransaction) ([]*neo4j.Record, error) {
		return run(ctx, tx, `
			MATCH (e:Entity)
			WHERE e.name_lower STARTS WITH $prefix AND ($type = '' OR e.type = $type)
			RETURN e.id AS id, e.name AS name, e.type AS type, e.doc_freq AS df,
				e.chunk_freq AS cf, e.mention_count AS mc
			ORDER BY df DESC, e.name_lower, e.id
			LIMIT $limit`,
			map[string]any{"prefix": strings.ToLower(strings.TrimSpace(prefix)), "type": typ, "limit": int64(limit)})
	})
	if err != nil {
		return nil, fmt.Errorf("list entities with prefix %q: %w", prefix, classify(err))
	}
	out := make([]EntityStats, 0, len(recs))
	for _, r := range recs {
		out = append(out, EntityStats{
			EntityRef:    EntityRef{ID: str(r, "id"), Name: str(r, "name"), Type: str(r, "type")},
			DocFreq:      i64(r, "df"),
			ChunkFreq:    i64(r, "cf"),
			MentionCount: i64(r, "mc"),
		})
	}
	return out, nil
}

// Stats counts what the graph holds.
type Stats struct {
	Documents    int64 // ingested documents
	Placeholders int64 // linked-to documents not ingested
	Chunks       int64
	Entities     int64
	Mentions     int64
	// Relations counts RELATED relationships: one per relation per supporting document.
	Relations       int64
	Links           int64
	EntitiesByType  map[string]int64
	RelationsByType map[string]int64
}

// Stats counts nodes and relationships by label and type. The per-type counts scan
// the entities and relations.
func (s *Store) Stats(ctx context.Context) (Stats, error) {
	sess := s.session(ctx, neo4j.AccessModeRead)
	defer sess.Close(ctx)
	res, err := neo4j.ExecuteRead(ctx, sess, func(tx neo4j.ManagedTransaction) (Stats, error) {
		st := Stats{EntitiesByType: map[string]int64{}, RelationsByType: map[string]int64{}}
		recs, err := run(ctx, tx, `
			CALL () { MATCH (n:Document) RETURN count(n) AS docs }
			CALL () { MATCH (n:Placeholder) RETURN count(n) AS placeholders }
			CALL () { MATCH (n:Chunk) RETURN count(n) AS chunks }
			CALL () { MATCH (n:Entity) RETURN count(n) AS entities }
			CALL () { MATCH ()-[r:MENTIONS]->() RETURN count(r) AS mentions }
			CALL () { MATCH ()-[r:RELATED]->() RETURN count(r) AS relations }
			CALL () { MATCH ()-[r:LINKS_TO]->() RETURN count(r) AS links }
			RETURN docs, placeholders, chunks, entities, mentions, relations, links`, nil)
		if err != nil {
			return st, fmt.Errorf("count nodes: %w", err)
		}
		if len(recs) == 1 {
			r := recs[0]
			st.Placeholders = i64(r, "placeholders")
			st.Documents = i64(r, "docs") - st.Placeholders
			st.Chunks, st.Entities, st.Mentions = i64(r, "chunks"), i64(r, "entities"), i64(r, "mentions")
			st.Relations, st.Links = i64(r, "relations"), i64(r, "links")
		}
		recs, err = run(ctx, tx, `MATCH (e:Entity) RETURN e.type AS type, count(*) AS n`, nil)
		if err != nil {
			return st, fmt.Errorf("count entities by type: %w", err)
		}
		for _, r := range recs {
			st.EntitiesByType[str(r, "type")] = i64(r, "n")
		}
		recs, err = run(ctx, tx, `MATCH ()-[r:RELATED]->() RETURN r.type AS type, count(*) AS n`, nil)
		if err != nil {
			return st, fmt.Errorf("count relations by type: %w", err)
		}
		for _, r := range recs {
			st.RelationsByType[str(r, "type")] = i64(r, "n")
		}
		return st, nil
	})
	if err != nil {
		return Stats{}, fmt.Errorf("graph stats: %w", classify(err))
	}
	return res, nil
}

func str(r *neo4j.Record, key string) string {
	v, _ := r.Get(key)
	return asString(v)
}

func i64(r *neo4j.Record, key string) int64 {
	v, _ := r.Get(key)
	return asInt(v)
}

func f64(r *neo4j.Record, key string) float64 {
	v, _ := r.Get(key)
	return asFloat(v)
}

func asString(v any) string {
	s, _ := v.(string)
	return s
}

func asInt(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case float64:
		return int64(x)
	}
	return 0
}

func asFloat(v any) float64 {
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) {
			return 0
		}
		return x
	case int64:
		return float64(x)
	}
	return 0
}
