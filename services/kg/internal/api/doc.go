// Package api is the kg service's HTTP API: it decodes requests into the types of
// pkg/kgapi, hands them to the service's logic (entitygraph, behind the small
// interfaces of Deps), maps its errors to problem documents and answers in JSON or
// TOON. Validation, name resolution, scoring and the mapping to the graph live in
// entitygraph.
//
// # Endpoints
//
//	POST   /api/v1/ingest            extract → graph.Doc → upsert (re-ingest replaces)
//	POST   /api/v1/entities/match    names or ids → chunks with a graph relevance score
//	POST   /api/v1/expand/entities   names or ids → related entities with paths and evidence
//	POST   /api/v1/retrieve          match, expand and the match of the related entities used, in one round trip
//	GET    /api/v1/entities          ?prefix=&type=&limit= autocomplete
//	GET    /api/v1/entities/{id}     one entity: aliases, counters, strongest relations
//	GET    /api/v1/stats             what the graph holds
//	DELETE /api/v1/documents/{id}    remove a document and what only it supported
//	POST   /api/v1/parse             the extractor on a query string
//
// Bad input (including a body field the request type does not declare) is
// answered with 400 (413 for an oversized body) and a problem
// document whose field member names the request field at fault; an unknown
// entity id on GET /entities/{id} or document id on DELETE is 404; query
// entities that are not in the graph are listed in unknown of a 200 answer; Neo4j
// unreachable is 503 with Retry-After (and /readyz fails through its ping check).
//
// The match score, expansion and corpus learning are described in entitygraph.
package api
