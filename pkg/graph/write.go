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
	found       bool // the document exists (DeleteDocument) or existed (UpsertDocument)
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

// A write transaction runs four statements (round trips matter more than statement
// size): 1. take the write lock (see "Writers" in doc.go), lock or create the document
// and read what its stored version contributes; 2. remove that contribution; 3. write
// the new one; 4. remove what is left without support.

// readPrevious is the tail of statement 1: given d (possibly null), it returns the
// entity contributions, relation endpoints and link targets of d's stored version.
const readPrevious = `
	CALL (d) {
		OPTIONAL MATCH (d)-[:HAS_CHUNK]->(:Chunk)-[m:MENTIONS]->(e:Entity)
		WITH e, count(m) AS chunks, sum(m.count) AS mentions
		WHERE e IS NOT NULL
		RETURN collect({id: e.id, chunks: chunks, mentions: mentions}) AS contrib
	}
	CALL () {
		OPTIONAL MATCH (a:Entity)-[r:RELATED]->(b:Entity) WHERE r.doc = $id
		UNWIND [a.id, b.id] AS eid
		RETURN collect(DISTINCT eid) AS rel_ids
	}
	CALL (d) {
		OPTIONAL MATCH (d)-[:LINKS_TO]->(t:Document)
		RETURN collect(t.id) AS targets
	}`

func parsePrevious(r *neo4j.Record) *previous {
	prev := &previous{contrib: map[string]*entityContrib{}}
	prev.found, _, _ = neo4j.GetRecordValue[bool](r, "found")
	v, _ := r.Get("contrib")
	list, _ := v.([]any)
	for _, x := range list {
		m, _ := x.(map[string]any)
		prev.contrib[asString(m["id"])] = &entityContrib{chunks: asInt(m["chunks"]), mentions: asInt(m["mentions"])}
	}
	prev.relEntities = stringList(r, "rel_ids")
	prev.linkTargets = stringList(r, "targets")
	return prev
}

// removePrevious is statement 2: it deletes the relations, links and chunks (with
// their mentions) of document $id. The document node stays.
const removePrevious = `
	CALL () {
		MATCH ()-[r:RELATED]->() WHERE r.doc = $id
		DELETE r
	}
	CALL () {
		MATCH (:Document {id: $id})-[l:LINKS_TO]->()
		DELETE l
	}
	CALL () {
		MATCH (:Document {id: $id})-[:HAS_CHUNK]->(c:Chunk)
		DETACH DELETE c
	}`

// removeOrphans is statement 4: it deletes the candidate entities without any
// relationship and the candidate placeholders nothing links to any more.
const removeOrphans = `
	CALL () {
		UNWIND $entities AS id
		MATCH (e:Entity {id: id})
		WHERE NOT EXISTS { (e)--() }
		DELETE e
		RETURN count(*) AS entities
	}
	CALL () {
		UNWIND $targets AS id
		MATCH (t:Document:Placeholder {id: id})
		WHERE NOT EXISTS { (t)--() }
		DELETE t
		RETURN count(*) AS placeholders
	}
	RETURN entities, placeholders`

// writeCurrent is statement 3 of an upsert.
const writeCurrent = `
	MATCH (d:Document {id: $id})
	CALL () {
		UNWIND $entities AS row
		MERGE (e:Entity {id: row.id})
		ON CREATE SET e.name = row.name, e.name_lower = row.name_lower, e.type = row.type,
			e.aliases = row.aliases, e.confidence = row.confidence,
			e.doc_freq = 0, e.chunk_freq = 0, e.mention_count = 0
		WITH e, row, row.confidence > e.confidence AS better
		SET e.aliases = (e.aliases + [a IN row.aliases WHERE NOT a IN e.aliases AND a <> e.name])[0..64],
			e.name = CASE WHEN better THEN row.name ELSE e.name END,
			e.name_lower = CASE WHEN better THEN row.name_lower ELSE e.name_lower END,
			e.type = CASE WHEN better THEN row.type ELSE e.type END
		SET e.confidence = CASE WHEN better THEN row.confidence ELSE e.confidence END
	}
	CALL (d) {
		UNWIND $chunks AS row
		CREATE (c:Chunk {id: row.id, ordinal: row.ordinal, doc_id: $id})
		CREATE (d)-[:HAS_CHUNK]->(c)
	}
	CALL () {
		UNWIND $mentions AS row
		MATCH (c:Chunk {id: row.chunk})
		MATCH (e:Entity {id: row.entity})
		CREATE (c)-[:MENTIONS {count: row.count, confidence: row.confidence}]->(e)
	}
	CALL () {
		UNWIND $relations AS row
		MATCH (a:Entity {id: row.from})
		MATCH (b:Entity {id: row.to})
		CREATE (a)-[:RELATED {type: row.type, doc: $id, source: row.source, weight: row.weight,
			confidence: row.confidence, evidence: row.evidence}]->(b)
	}
	CALL (d) {
		UNWIND $links AS row
		MERGE (t:Document {id: row.target})
		ON CREATE SET t.url = row.url, t:Placeholder
		CREATE (d)-[:LINKS_TO {anchor: row.anchor}]->(t)
	}` + applyCounters + logChange

// applyCounters moves the entity counters by the deltas in $counters. SET e.x = e.x + d
// is evaluated under the node's write lock.
const applyCounters = `
	CALL () {
		UNWIND $counters AS row
		MATCH (e:Entity {id: row.id})
		SET e.doc_freq = e.doc_freq + row.df, e.chunk_freq = e.chunk_freq + row.cf,
			e.mention_count = e.mention_count + row.mc
	}`

// lockThenCount takes the write lock on l, then increments its sequence number.
// A bare SET l.seq = l.seq + 1 is not enough: the value can be read before the
// lock is granted, and a transaction that waited for the lock then writes a stale
// number (seen with the feed's locked read, which wrote l.seq back). Setting a
// property that is not read takes the lock first, as Neo4j's manual advises
// against lost updates.
const lockThenCount = `
		SET l._LOCK_ = true
		WITH l
		SET l.seq = l.seq + 1
		REMOVE l._LOCK_`

func upsertTx(ctx context.Context, tx neo4j.ManagedTransaction, p *prepared) (UpsertResult, error) {
	var out UpsertResult
	recs, err := run(ctx, tx, `
		MATCH (l:GraphLock {id: 'write'})`+lockThenCount+`
		MERGE (d:Document {id: $id})
		ON CREATE SET d.created = true
		WITH d, coalesce(d.created, false) OR d:Placeholder AS created
		SET d.url = $url, d.title = $title, d.chunk_count = $chunk_count, d.updated_at = datetime()
		REMOVE d:Placeholder, d.created
		WITH d, created, true AS found`+readPrevious+`
		RETURN created, found, contrib, rel_ids, targets`, p.params)
	if err != nil {
		return out, fmt.Errorf("lock document and read its previous version: %w", err)
	}
	if len(recs) == 0 {
		return out, ErrNoSchema
	}
	out.Created, _, _ = neo4j.GetRecordValue[bool](recs[0], "created")
	old := parsePrevious(recs[0])
	if !out.Created {
		if _, err := run(ctx, tx, removePrevious, map[string]any{"id": p.id}); err != nil {
			return out, fmt.Errorf("remove previous version: %w", err)
		}
	}
	candidates := unionIDs(sortedKeys(old.contrib), old.relEntities, p.entityIDs)
	if _, err := run(ctx, tx, writeCurrent, map[string]any{
		"id": p.id, "entities": orEmpty(p.entities), "chunks": orEmpty(p.chunks), "mentions": orEmpty(p.mentions),
		"relations": orEmpty(p.relations), "links": orEmpty(p.links), "counters": counterDeltas(old.contrib, p.contrib),
		"op": ChangeUpsert, "touched": orEmptyS(candidates),
	}); err != nil {
		return out, fmt.Errorf("write document: %w", err)
	}
	if out.RemovedEntities, out.RemovedPlaceholders, err = removeUnsupported(ctx, tx, candidates, old.linkTargets); err != nil {
		return out, err
	}
	out.Chunks, out.Entities, out.Mentions = len(p.chunks), len(p.entities), len(p.mentions)
	out.Relations, out.Links = len(p.relations), len(p.links)
	return out, nil
}

func orEmpty(rows []any) []any {
	if rows == nil {
		return []any{}
	}
	return rows
}

func deleteTx(ctx context.Context, tx neo4j.ManagedTransaction, id string) error {
	recs, err := run(ctx, tx, `
		MATCH (l:GraphLock {id: 'write'})`+lockThenCount+`
		WITH l
		OPTIONAL MATCH (d:Document {id: $id}) WHERE NOT d:Placeholder
		SET d.deleting = true
		WITH d, d IS NOT NULL AS found`+readPrevious+`
		RETURN found, contrib, rel_ids, targets`, map[string]any{"id": id})
	if err != nil {
		return fmt.Errorf("lock document and read it: %w", err)
	}
	if len(recs) == 0 {
		return ErrNoSchema
	}
	old := parsePrevious(recs[0])
	if !old.found {
		return ErrNotFound
	}
	if _, err := run(ctx, tx, removePrevious, map[string]any{"id": id}); err != nil {
		return fmt.Errorf("remove document contribution: %w", err)
	}
	// Keep the node as a placeholder when other documents link to it, else delete it.
	candidates := unionIDs(sortedKeys(old.contrib), old.relEntities)
	if _, err := run(ctx, tx, `
		MATCH (d:Document {id: $id})
		CALL (d) {
			WITH d WHERE EXISTS { (:Document)-[:LINKS_TO]->(d) }
			SET d:Placeholder
			REMOVE d.title, d.chunk_count, d.updated_at, d.deleting
		}
		CALL (d) {
			WITH d WHERE NOT d:Placeholder
			DETACH DELETE d
		}`+applyCounters+logChange, map[string]any{
		"id": id, "counters": counterDeltas(old.contrib, nil), "op": ChangeDelete, "touched": orEmptyS(candidates),
	}); err != nil {
		return fmt.Errorf("delete document node: %w", err)
	}
	_, _, err = removeUnsupported(ctx, tx, candidates, old.linkTargets)
	return err
}

// counterDeltas returns the rows that move the entity counters from the old
// contribution of a document to the new one.
func counterDeltas(old, cur map[string]*entityContrib) []any {
	rows := []any{}
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
	return rows
}

func removeUnsupported(ctx context.Context, tx neo4j.ManagedTransaction, entities, targets []string) (int, int, error) {
	if len(entities) == 0 && len(targets) == 0 {
		return 0, 0, nil
	}
	recs, err := run(ctx, tx, removeOrphans, map[string]any{"entities": orEmptyS(entities), "targets": orEmptyS(targets)})
	if err != nil {
		return 0, 0, fmt.Errorf("remove unsupported entities and placeholders: %w", err)
	}
	if len(recs) == 0 {
		return 0, 0, nil
	}
	return int(i64(recs[0], "entities")), int(i64(recs[0], "placeholders")), nil
}

func orEmptyS(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
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
