// Package ranker fuses the candidates of the search retrievers (vector, graph, BM25)
// into one ranked list, phase 4 of the search pipeline. It is pure Go and does no I/O:
// the caller passes candidates with raw scores and gets back results with rank, final
// score, the five normalised signals and a preview.
//
//	r, err := ranker.New(ranker.Options{PreviewChars: 240})
//	w, err := ranker.ParseWeights("vector:0.35,graph:0.25,bm25:0.2,recency:0.1,title:0.1")
//	if kgDown { w, err = w.Renormalize(ranker.Graph) }
//	results, err := r.Rank(ranker.Request{Query: q, Weights: w, Limit: 10}, candidates)
//
// # Signals
//
// Every signal is mapped to [0,1] per query; a candidate a retriever did not return
// scores 0 on that retriever's signal (it was not found, which is evidence of lower
// relevance, and it keeps the fusion a plain weighted sum).
//
//   - vector (default, VectorMinMax): min-max over the vector retriever's own hits,
//     (v-min)/(max-min), so the retriever's best chunk scores 1 and its cut-off 0. A
//     raw cosine spans only about 0.3–0.6 among a query's candidates while BM25 and
//     graph span 0–1, so used as is the largest weight (0.35) had the least pull on the
//     order: on the pydocs evaluation (eval/pydocs/RESULTS.md) the raw cosine let BM25
//     and graph override vector search on most queries. If a candidate came from another
//     retriever and carries its embedding, and the query embedding is passed, its
//     similarity is computed here and mapped on the same scale (clamped to [0,1]), so
//     BM25-only and graph-only chunks are compared on the vector signal too.
//     Options.Normalization = MaxScale keeps the clamped raw cosine (and max-scaled
//     graph); MinMax min-maxes every retrieval signal over all candidates.
//   - bm25: divided by the query's maximum — min-max with the theoretical minimum 0 of
//     BM25 instead of the observed one (the "theoretical min-max" of Bruch, Gai and
//     Ingber, "An Analysis of Fusion Functions for Hybrid Retrieval", ACM TOIS 2023).
//     The best hit gets 1, equal scores all get 1, and the weakest hit keeps credit for
//     being found. A maximum <= 0 gives 0. Non-finite raw scores count as missing.
//   - graph (default): the kg match score used as is, clamped to [0,1]. kg already
//     scores in [0,1] with each entity weighted by its specificity (an IDF), so a chunk
//     that only mentions a ubiquitous entity scores low; dividing by the query's
//     maximum (MaxScale) would lift those chunks back to 1 and make every chunk that
//     mentions a common entity tie with the page that defines a rare one.
//   - graph, expansion: a chunk reached only through expanded entities
//     (Candidate.GraphExpandedOnly) gets its normalised graph signal multiplied by 0.7
//     (Options.ExpandedFactor). The ranker applies the factor, after normalisation, so
//     that it holds even when every graph hit came through expansion (scaling raw
//     scores before dividing by their maximum would cancel out). Callers set the flag
//     and pass the unreduced score.
//   - recency: tiers of the age of the most recent of Updated and Published:
//     < 7 d 1.0, < 30 d 0.8, < 90 d 0.6, < 180 d 0.4, < 365 d 0.3, older 0.2. An unknown
//     date scores 0.2 (like "older"): an undated page gets no freshness bonus over a
//     dated one, and when no candidate has a date the signal is a constant that changes
//     no order. Future dates count as age 0. The clock is Options.Now.
//   - title: 1 if the query's content words (stopwords dropped, light stemming) occur as
//     a phrase in the title; otherwise the term overlap (fraction of query terms in the
//     title), averaged half and half with the entity overlap (fraction of query
//     entities whose words occur as a phrase in the title) when the query has entities.
//     A heading match counts at 0.5 of a title match; the larger wins.
//
// # Fusion
//
// Weighted (default): Σ w_s · signal_s with weights normalised to sum 1, so the final
// score is in [0,1]. A weight of 0 switches a signal off; Weights.Renormalize drops
// unavailable signals and rescales the rest.
//
// RRF: (k+1) · Σ w_s / (k + rank_s) with k = 60, where rank_s is the competition rank
// (equal values share a rank) of the candidate among those taking part in signal s:
// found by the retriever, dated for recency, a non-zero title match for title. The
// (k+1) factor puts the score in (0,1], with 1 for a candidate first on every weighted
// signal. With equal weights this is the classic unweighted RRF up to a constant factor.
//
// # After fusion
//
// Candidates are fused per chunk and the best chunk of each document (ContentKey, else
// DocumentID, else URL: copies of one page are one document) is kept as its
// representative, with its offsets and preview. The
// document is then scored on the maximum of each signal over all its chunks
// (per-signal MaxP) and fused again (for RRF, ranks are among documents): a page whose
// best vector chunk is not its best BM25 chunk keeps both strengths. Documents are
// sorted by that score (the representative's chunk id breaks ties). MMR
// (Request.MMR, lambda in [0,1]) then re-orders greedily by
// λ·final − (1−λ)·max(0, max cosine to the results already picked) over the chunk
// embeddings; results keep their fusion score, so with MMR ranks need not follow scores.
// Request.Limit cuts the list; previews are only built for returned results.
package ranker
