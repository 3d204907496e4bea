// Package entitygraph is the kg service's logic, independent of HTTP: it validates
// what clients send (naming the field at fault with a *fielderr.Error), runs the
// extractor (pkg/extract) on ingested documents and on queries, maps extraction
// results to the graph store (pkg/graph), resolves names to entity ids, scores the
// chunks that mention query entities and shapes expansions, in the types of
// pkg/kgapi. The graph is reached through three small interfaces: Writer (upsert,
// delete), Reader (match and expand, the per-query reads, which an in-memory
// projection can serve instead of Neo4j) and Lookup (autocomplete, one entity,
// stats).
//
// # Match score
//
// Names are resolved to entity ids with the extractor's normalisation
// (Extractor.Resolve: case, punctuation, plurals, declared aliases, acronyms); a
// name that looks like an id (no upper case, no spaces) is also tried as given,
// so ids the extractor would not produce still match. A name is listed in
// unknown when none of its candidate ids is in the graph.
// Let Q be the query entities present in the graph, N the number of chunks in
// the graph and cf(e) the number of chunks mentioning entity e. The specificity
// of e is an IDF normalised to (0, 1]:
//
//	w(e) = ln(1 + N/cf(e)) / ln(1 + N)
//
// w is 1 for an entity mentioned by one chunk and falls to ln 2 / ln(1+N) for an
// entity every chunk mentions (0.10 with 1,000 chunks, 0.05 with 1,000,000), so
// an entity mentioned everywhere is worth little. The graph relevance of chunk c
// is
//
//	score(c) = Σ_{e ∈ Q, c mentions e} conf(c, e) · w(e) / |Q|
//
// where conf(c, e) in [0,1] is the extractor's confidence in the mention. The
// score is in [0,1]: it is 1 only when the chunk mentions every query entity with
// full confidence and every one is rare, it grows with the number of query
// entities matched (coverage), with their confidence and with their specificity.
// Dividing by |Q| and not by Σ w keeps a query for one ubiquitous entity from
// scoring its chunks highly. Chunks are returned best first (score, then the
// number of matched entities, then chunk id). The store returns the chunks
// mentioning the most query entities first; the service reads a larger window
// (4× the limit, at least 100) and re-ranks it by score.
//
// # Expansion
//
// Expand asks the graph for entities 1 or 2 hops away over typed relations
// (USES, DEPENDS_ON, IS_A, PART_OF, …), co-occurrence (CO_OCCURS, weight = NPMI
// over chunks, kept at ingest only with at least KG_COOCCUR_MIN_SUPPORT shared
// chunks and NPMI ≥ KG_COOCCUR_MIN_NPMI; its confidence is NPMI·n/(n+1) for n
// shared chunks) and version links. An edge's confidence is the noisy-or of the
// documents supporting it; a related entity's confidence is the product of the
// confidences along its best path. Path steps keep the stored direction of each
// edge, so {from: django, relation: WRITTEN_IN, to: python} reads as a sentence.
//
// # Corpus learning and the live gazetteer
//
// The extractor carries an extract.Learner: every ingested document feeds it the
// candidate terms of its headings, code spans, anchor texts, capitalised names
// and acronym definitions, and the entity sets of its chunks. Terms that recur
// across documents are promoted to entities and found in later documents and in
// queries; the chunk counts give corpus-wide NPMI for co-occurrence. Deleting a
// document forgets its contribution.
//
// Two things survive a restart:
//   - the learner's statistics, saved as JSON to KG_LEARNER_FILE (by default
//     $KGS_STATE/kg/learner.json) every KG_LEARNER_SAVE_INTERVAL when they changed
//     and at shutdown, written to a temporary file and renamed so a crash never
//     leaves half a file; loaded at start (a missing file starts empty, an
//     unreadable one is moved aside and logged);
//   - the entities themselves, in Neo4j: at start and every KG_GAZETTEER_REFRESH
//     the service loads, among the KG_GAZETTEER_SIZE most frequent graph
//     entities, those at least KG_GAZETTEER_MIN_DOCS documents mention into the
//     extractor's live gazetteer (Extractor.AddKnown), so corpus-learned names are
//     recognised in queries even when the learner file was lost, and several
//     replicas share what any of them ingested. Code-level types (identifier,
//     function, file, version, ...) and single lower-case words are left out: a
//     corpus yields entities such as "module" or "default" from code spans, and as
//     gazetteer names they would match all over prose (corpus.Gazetteer).
//
// Neo4j is the system of record for entities; the learner file only holds the
// statistics that decide future promotions. Losing it costs re-learning, not
// data.
package entitygraph
