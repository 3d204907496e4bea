package graph

import (
	"context"
	"fmt"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// EntityCount is how often a document mentions an entity.
type EntityCount struct {
	Entity EntityRef
	Count  int64 // sum of the mention counts over the document's chunks
}

// DocumentProfiles returns, per document id, the entities its chunks mention with
// their counts: the document's entity profile. With no ids it reads every document
// (used to load an in-memory copy at start); ids that have no mentions are absent.
func (s *Store) DocumentProfiles(ctx context.Context, docIDs []string) (map[string][]EntityCount, error) {
	query := `
		MATCH (c:Chunk)-[m:MENTIONS]->(e:Entity)
		RETURN c.doc_id AS doc, e.id AS id, e.name AS name, e.type AS type, sum(m.count) AS n`
	params := map[string]any{}
	if len(docIDs) > 0 {
		ids, err := checkIDList("document ids", docIDs, maxMatchIDs)
		if err != nil {
			return nil, fmt.Errorf("document profiles: %w", err)
		}
		query = `
			MATCH (c:Chunk)-[m:MENTIONS]->(e:Entity) WHERE c.doc_id IN $ids
			RETURN c.doc_id AS doc, e.id AS id, e.name AS name, e.type AS type, sum(m.count) AS n`
		params["ids"] = ids
	}
	sess := s.session(ctx, neo4j.AccessModeRead)
	defer sess.Close(ctx)
	out, err := neo4j.ExecuteRead(ctx, sess, func(tx neo4j.ManagedTransaction) (map[string][]EntityCount, error) {
		res, err := tx.Run(ctx, query, params)
		if err != nil {
			return nil, err
		}
		out := map[string][]EntityCount{}
		for res.Next(ctx) {
			r := res.Record()
			doc := str(r, "doc")
			out[doc] = append(out[doc], EntityCount{
				Entity: EntityRef{ID: str(r, "id"), Name: str(r, "name"), Type: str(r, "type")},
				Count:  i64(r, "n"),
			})
		}
		return out, res.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("document profiles: %w", classify(err))
	}
	return out, nil
}
