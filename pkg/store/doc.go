// Package store is kgsearch's system of record in MariaDB 11.8: documents and their
// chunks with embeddings in a VECTOR(d) column under an HNSW vector index (cosine),
// a change feed the search service tails to keep its BM25 index in sync, an outbox
// for delivery to the kg service, crawl jobs with their persisted frontier, and the
// domain blocklist.
//
// Open applies the embedded, versioned schema migrations (idempotent, serialised
// across processes with GET_LOCK) and registers the embedding model: the first model
// fixes the vector width of the chunks table, and a store created with one model
// refuses another with a *ModelMismatchError, across restarts.
//
// Every statement is parameterised; vectors travel as little-endian float32 bytes.
// Times are stored and returned in UTC. Work queues (jobs, frontier, outbox) are
// claimed with SELECT ... FOR UPDATE SKIP LOCKED and a lease, so several processes
// can share them and a crashed worker's claims come back when the lease expires.
package store
