package graph

import (
	"context"
	"fmt"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// UpsertResult says what an upsert wrote.
type UpsertResult struct {
	Created   bool // the document did not exist (or was a placeholder)
	Chunks    int
	Entities  int
	Mentions  int
	Relations int
	Links     int
	// Removed counts entities and placeholder documents deleted because nothing
	// supports them any more.
	RemovedEntities     int
	RemovedPlaceholders int
}

// UpsertDocument writes d in one transaction, replacing everything a previous version of
// the document contributed: its chunks, their mentions, the relation evidence it gave
// and its outgoing links. Entity counters are adjusted, and entities and placeholders
// left without support are removed. Bad input returns an error wrapping ErrInvalid.
func (s *Store) UpsertDocument(ctx context.Context, d Doc) (UpsertResult, error) {
	p, err := prepare(d)
	if err != nil {
		return UpsertResult{}, fmt.Errorf("upsert document %q: %w", d.ID, err)
	}
	start := time.Now()
	sess := s.session(ctx, neo4j.AccessModeWrite)
	defer sess.Close(ctx)
	res, err := neo4j.ExecuteWrite(ctx, sess, func(tx neo4j.ManagedTransaction) (UpsertResult, error) {
		return upsertTx(ctx, tx, p)
	})
	if err != nil {
		return UpsertResult{}, fmt.Errorf("upsert document %s: %w", d.ID, classify(err))
	}
	s.logger.Debug("graph document upserted", "doc", d.ID, "chunks", res.Chunks, "mentions", res.Mentions,
		"relations", res.Relations, "links", res.Links, "duration", time.Since(start))
	return res, nil
}

// DeleteDocument removes the document with its chunks, mentions, relation evidence and
// outgoing links, then the entities and placeholders nothing supports any more. A
// document other documents still link to stays as a placeholder. ErrNotFound when the
// document was never ingested.
func (s *Store) DeleteDocument(ctx context.Context, id string) error {
	if err := checkID("document id", id); err != nil {
		return fmt.Errorf("delete document %q: %w", id, err)
	}
	sess := s.session(ctx, neo4j.AccessModeWrite)
	defer sess.Close(ctx)
	_, err := neo4j.ExecuteWrite(ctx, sess, func(tx neo4j.ManagedTransaction) (struct{}, error) {
		return struct{}{}, deleteTx(ctx, tx, id)
	})
	if err != nil {
		return fmt.Errorf("delete document %s: %w", id, classify(err))
	}
	return nil
}

// previous is what the stored version of a document contributes.
type previous struct {
	contrib     map[string]*entityContrib
	relEntities []string // endpoints of the relations it contributed
	linkTargets []string
}

func run(ctx context.Context, tx neo4j.ManagedTransaction, query string, params map[string]any) ([]*neo4j.Record, error) {
	res, err := tx.Run(ctx, query, params)
	if err != nil {
		return nil, err
	}
	return res.Collect(ctx)
}

// clearDocument reads what document id contributes, then removes its chunks (with their
// mentions), the relations it contributed and its outgoing links. The document node
// itself stays.
func clearDocument(ctx context.Context, tx neo4j.ManagedTransaction, id string) (*previous, error) {
	prev := &previous{contrib: map[string]*entityContrib{}}
	params := map[string]any{"id": id}
	recs, err := run(ctx, tx, `
		MATCH (:Document {id: $id})-[:HAS_CHUNK]->(:Chunk)-[m:MENTIONS]->(e:Entity)
		RETURN e.id AS id, count(m) AS chunks, sum(m.count) AS mentions`, params)
	if err != nil {
		return nil, fmt.Errorf("read previous mentions: %w", err)
	}
	for _, r := range recs {
		eid, _, _ := neo4j.GetRecordValue[string](r, "id")
		chunks, _, _ := neo4j.GetRecordValue[int64](r, "chunks")
		mentions, _, _ := neo4j.GetRecordValue[int64](r, "mentions")
		prev.contrib[eid] = &entityContrib{chunks: chunks, mentions: mentions}
	}
	if prev.relEntities, err = readRelationEndpoints(ctx, tx, id); err != nil {
		return nil, err
	}
	if _, err := run(ctx, tx, `
		MATCH ()-[r:RELATED]->() WHERE r.doc = $id
		DELETE r`, params); err != nil {
		return nil, fmt.Errorf("delete previous relations: %w", err)
	}
	recs, err = run(ctx, tx, `
		MATCH (d:Document {id: $id})-[l:LINKS_TO]->(t:Document)
		WITH collect(t.id) AS targets, collect(l) AS links
		FOREACH (l IN links | DELETE l)
		RETURN targets`, params)
	if err != nil {
		return nil, fmt.Errorf("delete previous links: %w", err)
	}
	if len(recs) == 1 {
		prev.linkTargets = stringList(recs[0], "targets")
	}
	if _, err := run(ctx, tx, `
		MATCH (:Document {id: $id})-[:HAS_CHUNK]->(c:Chunk)
		DETACH DELETE c`, params); err != nil {
		return nil, fmt.Errorf("delete previous chunks: %w", err)
	}
	return prev, nil
}

func stringList(r *neo4j.Record, key string) []string {
	v, _ := r.Get(key)
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// lockWrites serialises graph writers on one lock node; see "Writers" in doc.go. The
// lock is held until the transaction ends.
func lockWrites(ctx context.Context, tx neo4j.ManagedTransaction) error {
	recs, err := run(ctx, tx, `
		MATCH (l:GraphLock {id: 'write'})
		SET l.seq = l.seq + 1
		RETURN l.seq AS seq`, nil)
	if err != nil {
		return fmt.Errorf("take graph write lock: %w", err)
	}
	if len(recs) == 0 {
		return ErrNoSchema
	}
	return nil
}

func upsertTx(ctx context.Context, tx neo4j.ManagedTransaction, p *prepared) (UpsertResult, error) {
	var out UpsertResult
	if err := lockWrites(ctx, tx); err != nil {
		return out, err
	}
	// MERGE first: it takes the document's lock, so two upserts of one document serialise.
	recs, err := run(ctx, tx, `
		MERGE (d:Document {id: $id})
		ON CREATE SET d.created = true
		WITH d, coalesce(d.created, false) OR d:Placeholder AS created
		SET d.url = $url, d.title = $title, d.chunk_count = $chunk_count, d.updated_at = datetime()
		REMOVE d:Placeholder, d.created
		RETURN created`, p.params)
	if err != nil {
		return out, fmt.Errorf("merge document: %w", err)
	}
	if len(recs) == 1 {
		out.Created, _, _ = neo4j.GetRecordValue[bool](recs[0], "created")
	}
	old, err := clearDocument(ctx, tx, p.id)
	if err != nil {
		return out, err
	}

	if len(p.entities) > 0 {
		if _, err := run(ctx, tx, `
			UNWIND $rows AS row
			MERGE (e:Entity {id: row.id})
			ON CREATE SET e.name = row.name, e.name_lower = row.name_lower, e.type = row.type,
				e.aliases = row.aliases, e.confidence = row.confidence,
				e.doc_freq = 0, e.chunk_freq = 0, e.mention_count = 0
			WITH e, row, row.confidence > e.confidence AS better
			SET e.aliases = (e.aliases + [a IN row.aliases WHERE NOT a IN e.aliases AND a <> e.name])[0..64],
				e.name = CASE WHEN better THEN row.name ELSE e.name END,
				e.name_lower = CASE WHEN better THEN row.name_lower ELSE e.name_lower END,
				e.type = CASE WHEN better THEN row.type ELSE e.type END
			SET e.confidence = CASE WHEN better THEN row.confidence ELSE e.confidence END`,
			map[string]any{"rows": p.entities}); err != nil {
			return out, fmt.Errorf("merge entities: %w", err)
		}
	}
	if len(p.chunks) > 0 {
		if _, err := run(ctx, tx, `
			MATCH (d:Document {id: $id})
			UNWIND $rows AS row
			CREATE (c:Chunk {id: row.id, ordinal: row.ordinal, doc_id: $id})
			CREATE (d)-[:HAS_CHUNK]->(c)`,
			map[string]any{"id": p.id, "rows": p.chunks}); err != nil {
			return out, fmt.Errorf("create chunks: %w", err)
		}
	}
	if len(p.mentions) > 0 {
		if _, err := run(ctx, tx, `
			UNWIND $rows AS row
			MATCH (c:Chunk {id: row.chunk})
			MATCH (e:Entity {id: row.entity})
			CREATE (c)-[:MENTIONS {count: row.count, confidence: row.confidence}]->(e)`,
			map[string]any{"rows": p.mentions}); err != nil {
			return out, fmt.Errorf("create mentions: %w", err)
		}
	}
	if len(p.relations) > 0 {
		if _, err := run(ctx, tx, `
			UNWIND $rows AS row
			MATCH (a:Entity {id: row.from})
			MATCH (b:Entity {id: row.to})
			CREATE (a)-[:RELATED {type: row.type, doc: $id, source: row.source, weight: row.weight,
				confidence: row.confidence, evidence: row.evidence}]->(b)`,
			map[string]any{"id": p.id, "rows": p.relations}); err != nil {
			return out, fmt.Errorf("create relations: %w", err)
		}
	}
	if len(p.links) > 0 {
		if _, err := run(ctx, tx, `
			MATCH (d:Document {id: $id})
			UNWIND $rows AS row
			MERGE (t:Document {id: row.target})
			ON CREATE SET t.url = row.url, t:Placeholder
			CREATE (d)-[:LINKS_TO {anchor: row.anchor}]->(t)`,
			map[string]any{"id": p.id, "rows": p.links}); err != nil {
			return out, fmt.Errorf("create links: %w", err)
		}
	}
	if err := applyCounters(ctx, tx, old.contrib, p.contrib); err != nil {
		return out, err
	}
	candidates := unionIDs(sortedKeys(old.contrib), old.relEntities, p.entityIDs)
	if out.RemovedEntities, err = removeOrphanEntities(ctx, tx, candidates); err != nil {
		return out, err
	}
	if out.RemovedPlaceholders, err = removeOrphanPlaceholders(ctx, tx, old.linkTargets); err != nil {
		return out, err
	}
	out.Chunks, out.Entities, out.Mentions = len(p.chunks), len(p.entities), len(p.mentions)
	out.Relations, out.Links = len(p.relations), len(p.links)
	return out, nil
}

// readRelationEndpoints lists the entities at either end of the relations document id
// contributed.
func readRelationEndpoints(ctx context.Context, tx neo4j.ManagedTransaction, id string) ([]string, error) {
	recs, err := run(ctx, tx, `
		MATCH (a:Entity)-[r:RELATED]->(b:Entity) WHERE r.doc = $id
		UNWIND [a.id, b.id] AS eid
		RETURN collect(DISTINCT eid) AS ids`, map[string]any{"id": id})
	if err != nil {
		return nil, fmt.Errorf("read previous relations: %w", err)
	}
	if len(recs) == 0 {
		return nil, nil
	}
	return stringList(recs[0], "ids"), nil
}

func deleteTx(ctx context.Context, tx neo4j.ManagedTransaction, id string) error {
	if err := lockWrites(ctx, tx); err != nil {
		return err
	}
	recs, err := run(ctx, tx, `
		MATCH (d:Document {id: $id}) WHERE NOT d:Placeholder
		SET d.deleting = true
		RETURN d.id AS id`, map[string]any{"id": id})
	if err != nil {
		return fmt.Errorf("lock document: %w", err)
	}
	if len(recs) == 0 {
		return ErrNotFound
	}
	old, err := clearDocument(ctx, tx, id)
	if err != nil {
		return err
	}
	if err := applyCounters(ctx, tx, old.contrib, nil); err != nil {
		return err
	}
	// Keep the node as a placeholder when other documents link to it, else delete it.
	if _, err := run(ctx, tx, `
		MATCH (d:Document {id: $id}) WHERE EXISTS { (:Document)-[:LINKS_TO]->(d) }
		SET d:Placeholder
		REMOVE d.title, d.chunk_count, d.updated_at, d.deleting`, map[string]any{"id": id}); err != nil {
		return fmt.Errorf("turn document into placeholder: %w", err)
	}
	if _, err := run(ctx, tx, `
		MATCH (d:Document {id: $id}) WHERE NOT d:Placeholder
		DETACH DELETE d`, map[string]any{"id": id}); err != nil {
		return fmt.Errorf("delete document node: %w", err)
	}
	if _, err := removeOrphanEntities(ctx, tx, unionIDs(sortedKeys(old.contrib), old.relEntities)); err != nil {
		return err
	}
	if _, err := removeOrphanPlaceholders(ctx, tx, old.linkTargets); err != nil {
		return err
	}
	return nil
}

// applyCounters moves the entity counters from the old contribution of a document to
// the new one. SET e.x = e.x + delta is evaluated under the write lock, so concurrent
// ingests of other documents do not lose updates.
func applyCounters(ctx context.Context, tx neo4j.ManagedTransaction, old, cur map[string]*entityContrib) error {
	var rows []any
	for _, id := range unionIDs(sortedKeys(old), sortedKeys(cur)) {
		o, n := old[id], cur[id]
		var df, cf, mc int64
		if o != nil {
			df, cf, mc = df-1, cf-o.chunks, mc-o.mentions
		}
		if n != nil {
			df, cf, mc = df+1, cf+n.chunks, mc+n.mentions
		}
		if df == 0 && cf == 0 && mc == 0 {
			continue
		}
		rows = append(rows, map[string]any{"id": id, "df": df, "cf": cf, "mc": mc})
	}
	if len(rows) == 0 {
		return nil
	}
	if _, err := run(ctx, tx, `
		UNWIND $rows AS row
		MATCH (e:Entity {id: row.id})
		SET e.doc_freq = e.doc_freq + row.df, e.chunk_freq = e.chunk_freq + row.cf,
			e.mention_count = e.mention_count + row.mc`, map[string]any{"rows": rows}); err != nil {
		return fmt.Errorf("update entity counters: %w", err)
	}
	return nil
}

func removeOrphanEntities(ctx context.Context, tx neo4j.ManagedTransaction, ids []string) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	recs, err := run(ctx, tx, `
		UNWIND $ids AS id
		MATCH (e:Entity {id: id})
		WHERE NOT EXISTS { (e)--() }
		DELETE e
		RETURN count(*) AS n`, map[string]any{"ids": ids})
	if err != nil {
		return 0, fmt.Errorf("remove orphan entities: %w", err)
	}
	return countOf(recs), nil
}

func removeOrphanPlaceholders(ctx context.Context, tx neo4j.ManagedTransaction, ids []string) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	recs, err := run(ctx, tx, `
		UNWIND $ids AS id
		MATCH (t:Document:Placeholder {id: id})
		WHERE NOT EXISTS { (t)--() }
		DELETE t
		RETURN count(*) AS n`, map[string]any{"ids": ids})
	if err != nil {
		return 0, fmt.Errorf("remove orphan placeholders: %w", err)
	}
	return countOf(recs), nil
}

func countOf(recs []*neo4j.Record) int {
	if len(recs) == 0 {
		return 0
	}
	n, _, _ := neo4j.GetRecordValue[int64](recs[0], "n")
	return int(n)
}

// unionIDs returns the distinct ids of all lists, in first-seen order.
func unionIDs(lists ...[]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range lists {
		for _, id := range l {
			if !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
	}
	return out
}
