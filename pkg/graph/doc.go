// Package graph is the Neo4j store of the entity graph: documents, their chunks, the
// entities the chunks mention and the typed relations between entities, with the
// evidence that supports each relation. The kg service owns it; search reaches it
// through the kg service.
//
// # Model
//
//	(:Document {id, url, title, chunk_count})-[:HAS_CHUNK]->(:Chunk {id, ordinal, doc_id})
//	(:Chunk)-[:MENTIONS {count, confidence}]->(:Entity {id, name, name_lower, type, aliases,
//	                                                    doc_freq, chunk_freq, mention_count})
//	(:Entity)-[:RELATED {type, doc, source, weight, confidence, evidence}]->(:Entity)
//	(:Document)-[:LINKS_TO {anchor}]->(:Document)
//
// A link to a page that has not been crawled yet creates a placeholder document
// (labels Document and Placeholder, no chunks). Ingesting that page later turns the
// placeholder into a full document; a placeholder that loses its last incoming link is
// removed.
//
// # Evidence is kept per document
//
// A relation stored in Neo4j is one contribution of one document: a RELATED
// relationship per (from, to, type, document), its doc property naming the document,
// with that document's weight, confidence and evidence chunk ids. Readers aggregate the
// contributions of a pair (Expand, Entity): weights add up, confidences combine as a
// noisy-or (1 - Π(1 - cᵢ), independent documents each make the relation more likely),
// evidence lists are concatenated and support counts the documents.
//
// Co-occurrence contributions (source "cooccurrence") are the exception: each document
// reports the same corpus statistic (the NPMI over all chunks seen so far, when the
// extractor has a corpus learner), not independent evidence, so a noisy-or would
// saturate at 1 for any pair of common entities and a sum would multiply the NPMI by
// the number of documents. Their confidence is the largest contributed and their weight
// the contributed NPMI of largest magnitude; these combine with any pattern
// contributions of the same type by noisy-or and sum.
//
// This was chosen over one relationship per (from, to, type) carrying a map of evidence
// keyed by document (or a separate Evidence node) because:
//   - re-ingesting or deleting a document is exact and local: delete the relationships
//     whose doc is the document (a relationship property index makes that a seek), then
//     write the new ones; no read-modify-write of properties shared with other
//     documents, so concurrent ingests of different documents cannot lose each other's
//     evidence and a relation supported by two documents survives deleting one;
//   - Neo4j has no map-typed properties, so a per-document evidence map would have to be
//     encoded in parallel lists or strings, which Cypher cannot filter cheaply;
//   - Evidence nodes would add a node and two relationships per contribution and a hop
//     to every expansion.
//
// The cost is one relationship per contributing document, so a pair mentioned together
// in many documents is traversed once per document; Expand aggregates per neighbour in
// a subquery and caps the fan-out per source.
//
// The relation type is a property (RELATED.type) and not a relationship type because
// Cypher cannot take relationship types as parameters: keeping one relationship type
// keeps every query parameterised.
//
// # Counters
//
// Entity.doc_freq (documents mentioning the entity), chunk_freq (chunks mentioning it)
// and mention_count (sum of mention counts) are maintained incrementally in the same
// write transaction as the mentions: an upsert subtracts what the previous version of
// the document contributed and adds what the new one does. They feed the specificity
// (IDF-like) weighting of MatchEntities without counting a popular entity's mentions on
// every query.
//
// # Orphans
//
// Entities that no longer have a mention or a relation after an upsert or a delete are
// removed, and so are placeholder documents that no longer have an incoming link. A
// deleted document that other documents still link to stays as a placeholder.
//
// # Writers
//
// Upserts and deletes are serialised on one lock node, (:GraphLock {id: 'write'}),
// created by EnsureSchema: each write transaction first sets a property on it and so
// holds its lock until commit. Without it, concurrent documents sharing an entity
// deadlock: MERGE on a uniquely constrained property takes a shared lock on the index
// entry and upgrades it to create the node or its relationships, and two transactions
// holding the shared lock both wait for the upgrade. Measured on the local server, 12
// concurrent upserts sharing one entity spent 10-25 s in deadlock detection and driver
// retries (one run exceeded the retry budget); serialised they finish in about 1 s.
// Readers take no locks and are not blocked. Ingest throughput is therefore that of one
// writer, which the UNWIND batching keeps high (see the benchmarks).
//
// All Cypher is parameterised; writes are batched with UNWIND $rows in one managed write
// transaction per document (retried by the driver on transient errors such as
// deadlocks).
package graph
