package graph

import (
	"context"
	"fmt"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// # The change feed
//
// Every upsert and delete writes, in its own transaction, a change node
//
//	(:GraphChange {seq, op, doc, entities, at})
//
// where seq is the write lock's sequence number (GraphLock.seq, incremented by the
// transaction while it holds the lock, so sequence numbers commit in order and
// without gaps), doc the document written and entities every entity whose
// properties, counters, mentions or relations the write may have changed. A reader
// that keeps a copy of the graph (the kg service's in-memory projection) loads a
// Snapshot, then follows the feed with Changes, which also re-reads what the
// changes name. PruneChanges removes old changes and records the highest sequence
// number removed in GraphLock.pruned, so a reader that fell behind it knows to load
// a new snapshot.

// Change operations.
const (
	ChangeUpsert = "upsert"
	ChangeDelete = "delete"
)

// logChange appends the transaction's change to the feed. It runs after the write
// lock was taken in the same transaction, so l.seq is this write's number.
const logChange = `
	CALL () {
		MATCH (l:GraphLock {id: 'write'})
		CREATE (:GraphChange {seq: l.seq, op: $op, doc: $id, entities: $touched, at: datetime()})
	}`

// Change is one write of the feed.
type Change struct {
	Seq      int64
	Op       string // ChangeUpsert or ChangeDelete
	Doc      string
	Entities []string
}

// Feed is a page of the change feed with the current state of what it names.
type Feed struct {
	// Head is the sequence number of the last committed write.
	Head int64
	// Pruned is the highest sequence number removed from the feed.
	Pruned  int64
	Changes []Change // after < seq <= Head, ascending
	// State is the current contribution of the documents and the current
	// properties of the entities the changes name: the graph as of Head.
	State State
}

// FeedHead reads the sequence number of the last committed write and the highest
// one pruned. It takes no lock: a follower polls it to learn whether to call
// Changes.
func (s *Store) FeedHead(ctx context.Context) (head, pruned int64, err error) {
	sess := s.session(ctx, neo4j.AccessModeRead)
	defer sess.Close(ctx)
	recs, err := neo4j.ExecuteRead(ctx, sess, func(tx neo4j.ManagedTransaction) ([]*neo4j.Record, error) {
		return run(ctx, tx, `MATCH (l:GraphLock {id: 'write'}) RETURN l.seq AS head, coalesce(l.pruned, 0) AS pruned`, nil)
	})
	if err != nil {
		return 0, 0, fmt.Errorf("read graph feed head: %w", classify(err))
	}
	if len(recs) == 0 {
		return 0, 0, ErrNoSchema
	}
	return i64(recs[0], "head"), i64(recs[0], "pruned"), nil
}

// Changes reads up to limit changes after sequence number after, with the state
// they name, while holding the write lock: no write is in progress, so what it
// reads is the graph exactly as of Feed.Head (or as of the last change returned,
// when there were more than limit). Neo4j's read-committed reads could otherwise
// see a write that is being applied only in part. Writers wait for the duration of
// the read, a few milliseconds for a page of changes.
func (s *Store) Changes(ctx context.Context, after int64, limit int) (Feed, error) {
	sess := s.session(ctx, neo4j.AccessModeWrite)
	defer sess.Close(ctx)
	res, err := neo4j.ExecuteWrite(ctx, sess, func(tx neo4j.ManagedTransaction) (Feed, error) {
		var f Feed
		recs, err := run(ctx, tx, `
			MATCH (l:GraphLock {id: 'write'})
			SET l._LOCK_ = true
			REMOVE l._LOCK_
			WITH l
			RETURN l.seq AS head, coalesce(l.pruned, 0) AS pruned`, nil)
		if err != nil {
			return f, fmt.Errorf("lock graph feed: %w", err)
		}
		if len(recs) == 0 {
			return f, ErrNoSchema
		}
		f.Head, f.Pruned = i64(recs[0], "head"), i64(recs[0], "pruned")
		if f.Head <= after {
			return f, nil
		}
		recs, err = run(ctx, tx, `
			MATCH (c:GraphChange) WHERE c.seq > $after AND c.seq <= $head
			RETURN c.seq AS seq, c.op AS op, c.doc AS doc, c.entities AS entities
			ORDER BY c.seq LIMIT $limit`, map[string]any{"after": after, "head": f.Head, "limit": int64(limit)})
		if err != nil {
			return f, fmt.Errorf("read changes: %w", err)
		}
		var docs, ents []string
		for _, r := range recs {
			c := Change{Seq: i64(r, "seq"), Op: str(r, "op"), Doc: str(r, "doc"), Entities: stringList(r, "entities")}
			f.Changes = append(f.Changes, c)
			docs = append(docs, c.Doc)
			ents = append(ents, c.Entities...)
		}
		if len(f.Changes) == 0 {
			return f, nil
		}
		f.State, err = readState(ctx, tx, unionIDs(docs), orEmptyS(unionIDs(ents)))
		return f, err
	})
	if err != nil {
		return Feed{}, fmt.Errorf("read graph changes: %w", classify(err))
	}
	return res, nil
}

// PruneChanges removes up to limit changes written before before, oldest first,
// and returns how many it removed. It takes the write lock briefly.
func (s *Store) PruneChanges(ctx context.Context, before time.Time, limit int) (int, error) {
	sess := s.session(ctx, neo4j.AccessModeWrite)
	defer sess.Close(ctx)
	n, err := neo4j.ExecuteWrite(ctx, sess, func(tx neo4j.ManagedTransaction) (int, error) {
		recs, err := run(ctx, tx, `
			MATCH (l:GraphLock {id: 'write'})
			SET l._LOCK_ = true
			REMOVE l._LOCK_
			WITH l
			OPTIONAL MATCH (c:GraphChange) WHERE c.seq > coalesce(l.pruned, 0) AND c.at < $before
			WITH l, c ORDER BY c.seq LIMIT $limit
			WITH l, collect(c) AS cs, max(c.seq) AS upto
			FOREACH (x IN cs | DELETE x)
			SET l.pruned = CASE WHEN upto > coalesce(l.pruned, 0) THEN upto ELSE l.pruned END
			RETURN size(cs) AS n`, map[string]any{"before": before.UTC(), "limit": int64(limit)})
		if err != nil {
			return 0, err
		}
		if len(recs) == 0 {
			return 0, ErrNoSchema
		}
		return int(i64(recs[0], "n")), nil
	})
	if err != nil {
		return 0, fmt.Errorf("prune graph changes: %w", classify(err))
	}
	return n, nil
}

// EntityState is an entity as a projection keeps it.
type EntityState struct {
	EntityStats
	NameLower string
}

// ChunkState is a chunk with the mentions it makes.
type ChunkState struct {
	ID       string
	Ordinal  int64
	Mentions []ChunkMention
}

// RelationState is one document's contribution to a relation.
type RelationState struct {
	From, To   string
	Type       string
	Source     string
	Weight     float64
	Confidence float64
	Evidence   []string
}

// DocState is what one document contributes to match and expand.
type DocState struct {
	ID string
	// Ingested: the document exists and is not a placeholder. A document that is
	// not ingested contributes nothing.
	Ingested  bool
	Chunks    []ChunkState
	Relations []RelationState
}

// State is what Changes and Snapshot read.
type State struct {
	// Seq (Snapshot only) is the feed head when the snapshot began.
	Seq      int64
	Docs     []DocState
	Entities []EntityState // the requested entities that exist
	Gone     []string      // the requested entities that do not
}

// Snapshot reads everything match and expand need: every ingested document's
// contribution and every entity. It takes no lock, so writers are not held up by
// a long read; State.Seq is the feed head read first. Every write after Seq may be
// seen in part, and so may the write Seq itself (its lock node can be updated
// before the rest of it is applied): a follower re-reads what the changes from Seq
// on name.
func (s *Store) Snapshot(ctx context.Context) (State, error) {
	sess := s.session(ctx, neo4j.AccessModeRead)
	defer sess.Close(ctx)
	res, err := neo4j.ExecuteRead(ctx, sess, func(tx neo4j.ManagedTransaction) (State, error) {
		recs, err := run(ctx, tx, `MATCH (l:GraphLock {id: 'write'}) RETURN l.seq AS head`, nil)
		if err != nil {
			return State{}, fmt.Errorf("read feed head: %w", err)
		}
		if len(recs) == 0 {
			return State{}, ErrNoSchema
		}
		seq := i64(recs[0], "head")
		st, err := snapshotTx(ctx, tx)
		st.Seq = seq
		return st, err
	})
	if err != nil {
		return State{}, fmt.Errorf("read graph snapshot: %w", classify(err))
	}
	return res, nil
}

// snapshotTx reads every document's contribution with label and relationship
// scans (faster than seeking document by document).
func snapshotTx(ctx context.Context, tx neo4j.ManagedTransaction) (State, error) {
	var st State
	recs, err := run(ctx, tx, `MATCH (d:Document) WHERE NOT d:Placeholder RETURN d.id AS id`, nil)
	if err != nil {
		return st, fmt.Errorf("list documents: %w", err)
	}
	st.Docs = make([]DocState, len(recs))
	byDoc := make(map[string]*DocState, len(recs))
	for i, r := range recs {
		st.Docs[i] = DocState{ID: str(r, "id"), Ingested: true}
		byDoc[st.Docs[i].ID] = &st.Docs[i]
	}
	if err := scanChunks(ctx, tx, `
		MATCH (c:Chunk)
		OPTIONAL MATCH (c)-[m:MENTIONS]->(e:Entity)
		WITH c, collect([e.id, m.count, m.confidence]) AS ms
		RETURN c.doc_id AS id, c.id AS chunk, c.ordinal AS ordinal, ms`, nil, byDoc); err != nil {
		return st, err
	}
	if err := scanRelations(ctx, tx, `
		MATCH (a:Entity)-[r:RELATED]->(b:Entity)
		RETURN r.doc AS id, a.id AS from, b.id AS to, r.type AS type, r.source AS source, r.weight AS weight,
			r.confidence AS confidence, r.evidence AS evidence`, nil, byDoc); err != nil {
		return st, err
	}
	st.Entities, _, err = readEntities(ctx, tx, nil)
	return st, err
}

// readState reads docs and entities; entities nil means all of them.
func readState(ctx context.Context, tx neo4j.ManagedTransaction, docs, entities []string) (State, error) {
	var st State
	byDoc := make(map[string]*DocState, len(docs))
	st.Docs = make([]DocState, len(docs))
	for i, id := range docs {
		st.Docs[i].ID = id
		byDoc[id] = &st.Docs[i]
	}
	recs, err := run(ctx, tx, `
		UNWIND $docs AS id
		MATCH (d:Document {id: id}) WHERE NOT d:Placeholder
		RETURN id`, map[string]any{"docs": docs})
	if err != nil {
		return st, fmt.Errorf("read documents: %w", err)
	}
	for _, r := range recs {
		byDoc[str(r, "id")].Ingested = true
	}
	if err := readChunks(ctx, tx, docs, byDoc); err != nil {
		return st, err
	}
	if err := readRelations(ctx, tx, docs, byDoc); err != nil {
		return st, err
	}
	st.Entities, st.Gone, err = readEntities(ctx, tx, entities)
	return st, err
}

func readChunks(ctx context.Context, tx neo4j.ManagedTransaction, docs []string, byDoc map[string]*DocState) error {
	return scanChunks(ctx, tx, `
		UNWIND $docs AS id
		MATCH (:Document {id: id})-[:HAS_CHUNK]->(c:Chunk)
		OPTIONAL MATCH (c)-[m:MENTIONS]->(e:Entity)
		WITH id, c, collect([e.id, m.count, m.confidence]) AS ms
		RETURN id, c.id AS chunk, c.ordinal AS ordinal, ms`, map[string]any{"docs": docs}, byDoc)
}

// scanChunks adds the chunks of query (id, chunk, ordinal, ms) to the documents
// of byDoc; chunks of other documents are skipped.
func scanChunks(ctx context.Context, tx neo4j.ManagedTransaction, query string, params map[string]any, byDoc map[string]*DocState) error {
	res, err := tx.Run(ctx, query, params)
	if err != nil {
		return fmt.Errorf("read chunks: %w", err)
	}
	for res.Next(ctx) {
		r := res.Record()
		c := ChunkState{ID: str(r, "chunk"), Ordinal: i64(r, "ordinal")}
		v, _ := r.Get("ms")
		list, _ := v.([]any)
		for _, x := range list {
			m, _ := x.([]any)
			if len(m) != 3 || m[0] == nil {
				continue
			}
			c.Mentions = append(c.Mentions, ChunkMention{EntityID: asString(m[0]), Count: asInt(m[1]), Confidence: asFloat(m[2])})
		}
		if d := byDoc[str(r, "id")]; d != nil {
			d.Chunks = append(d.Chunks, c)
		}
	}
	if err := res.Err(); err != nil {
		return fmt.Errorf("read chunks: %w", err)
	}
	return nil
}

func readRelations(ctx context.Context, tx neo4j.ManagedTransaction, docs []string, byDoc map[string]*DocState) error {
	return scanRelations(ctx, tx, `
		UNWIND $docs AS id
		MATCH (a:Entity)-[r:RELATED]->(b:Entity) WHERE r.doc = id
		RETURN id, a.id AS from, b.id AS to, r.type AS type, r.source AS source, r.weight AS weight,
			r.confidence AS confidence, r.evidence AS evidence`, map[string]any{"docs": docs}, byDoc)
}

// scanRelations adds the relations of query to the documents of byDoc.
func scanRelations(ctx context.Context, tx neo4j.ManagedTransaction, query string, params map[string]any, byDoc map[string]*DocState) error {
	res, err := tx.Run(ctx, query, params)
	if err != nil {
		return fmt.Errorf("read relations: %w", err)
	}
	for res.Next(ctx) {
		r := res.Record()
		d := byDoc[str(r, "id")]
		if d == nil {
			continue
		}
		d.Relations = append(d.Relations, RelationState{
			From: str(r, "from"), To: str(r, "to"), Type: str(r, "type"), Source: str(r, "source"),
			Weight: f64(r, "weight"), Confidence: f64(r, "confidence"), Evidence: stringList(r, "evidence"),
		})
	}
	if err := res.Err(); err != nil {
		return fmt.Errorf("read relations: %w", err)
	}
	return nil
}

// readEntities reads the entities ids (nil: all) and lists the requested ones that
// do not exist.
func readEntities(ctx context.Context, tx neo4j.ManagedTransaction, ids []string) ([]EntityState, []string, error) {
	query := `MATCH (e:Entity) RETURN e.id AS id, e.name AS name, e.name_lower AS lower, e.type AS type,
		e.doc_freq AS df, e.chunk_freq AS cf, e.mention_count AS mc`
	if ids != nil {
		query = `UNWIND $ids AS id MATCH (e:Entity {id: id})
			RETURN e.id AS id, e.name AS name, e.name_lower AS lower, e.type AS type,
			e.doc_freq AS df, e.chunk_freq AS cf, e.mention_count AS mc`
	}
	res, err := tx.Run(ctx, query, map[string]any{"ids": ids})
	if err != nil {
		return nil, nil, fmt.Errorf("read entities: %w", err)
	}
	var out []EntityState
	seen := map[string]bool{}
	for res.Next(ctx) {
		r := res.Record()
		e := EntityState{EntityStats: EntityStats{
			EntityRef:    EntityRef{ID: str(r, "id"), Name: str(r, "name"), Type: str(r, "type")},
			DocFreq:      i64(r, "df"),
			ChunkFreq:    i64(r, "cf"),
			MentionCount: i64(r, "mc"),
		}, NameLower: str(r, "lower")}
		seen[e.ID] = true
		out = append(out, e)
	}
	if err := res.Err(); err != nil {
		return nil, nil, fmt.Errorf("read entities: %w", err)
	}
	var gone []string
	for _, id := range ids {
		if !seen[id] {
			gone = append(gone, id)
		}
	}
	return out, gone, nil
}
