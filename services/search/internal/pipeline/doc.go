// Package pipeline is the search service's five-phase search. Search reads as the
// phases, each in its own file, passing one request state (search, state.go):
//
//  1. parse.go: validate the request (Request.Validate, types.go) and parse the query
//     (pkg/queryparse): normalisation, typed entities, intent, variants, confidence;
//  2. retrieve.go: the retriever table, indexed by the ranker.Signal each retriever
//     feeds, run in parallel under one deadline, each retriever with its own timeout:
//     vector top-N from the store's HNSW index (the query embedded with the store's
//     model), graph (kg match on the query entities; each chunk's score scaled by the
//     parser's mean confidence in the entities it matched) and BM25 (Bleve). Their hits
//     are merged into candidate chunks in a fixed order (vector, BM25, graph);
//  3. expand.go: expand the query entities through kg: related entities at or above a
//     confidence threshold bring their chunks, which count at 0.7 of their graph score
//     when reached only that way; what was used and why is reported in exploration.
//     The expansion needs only the parse, so Search starts it (startExpansion) before
//     retrieval and it runs beside the retrievers (expand, then match of the related
//     entities); the expand phase awaits it and merges its chunks. When the kg client
//     is a Retriever (kgapi.Client is), the expansion is one kg Retrieve call that also
//     brings the graph retriever's match: one round trip to kg per search;
//     hydrate.go, between expand and rank, completes the candidates: the text, offsets
//     and embeddings of chunks the vector retriever did not return (one ChunksByIDs
//     call), document metadata from the indexer's table, and, beside that, BM25 score
//     completion: candidates the BM25 retriever did not return are scored under the
//     same BM25 query (bm25.Index.ScoreIDs), as the ranker computes the vector
//     similarity of candidates the vector retriever did not return, so every candidate
//     is compared on every signal;
//  4. rank.go: weights renormalised over the available signals, the request's filters,
//     then pkg/ranker (normalised signals, weighted sum or RRF, recency tiers, title
//     match, one result per document scored on each signal's maximum over its chunks,
//     represented by its best chunk and its offsets, optional MMR, previews);
//  5. format.go: results, suggested queries, related entities, explain, phase timings
//     (set once) and the JSON-versus-TOON token counts (toon.go has the TOON shape).
//
// A failing retriever never fails the search: its signal is dropped, the remaining
// weights are renormalised and the signal is listed in degraded. Only when every
// retriever fails does Search return an *UnavailableError. The budgets are for a
// dependency that is down or stuck, not for load (admission control, package
// admission, keeps queued searches out of the pipeline), and every kg call passes a
// circuit breaker (breaker.go) so that a kg that hangs stops costing each search a
// timeout. The phase timings count
// hydration and BM25 score completion under retrieve; expand is the expansion's own
// time (beside the retrievers) plus the merge, so it overlaps retrieve and the phases
// can add up to more than total_time_ms.
package pipeline
