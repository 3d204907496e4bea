// Package bm25 is the search service's full-text index: a Bleve (scorch) index of
// chunks scored with BM25 (the index mapping's ScoringModel is "bm25"; Bleve then uses
// k1 = 1.2, b = 0.75 and idf = ln(1 + (N − n + 0.5)/(n + 0.5)) per field). Title,
// headings and text are analysed with Bleve's English analyzer (possessives, lowercase,
// stop words, Snowball stemming, so "connections" finds "connection"); document id,
// URL, domain and tags are keywords and the published time a date, for filters.
//
// The index is derived from the store and never the system of record. It keeps the
// last applied change sequence number (the watermark) inside itself, written in the
// same Bleve batch as the changes (Apply), so after a restart a tailer resumes from
// Watermark(). Rebuild fills a fresh index in a sibling directory and swaps it in.
//
// Queries are analysed text, not query-string syntax: Search builds query objects (a
// disjunction of per-field match queries with boosts title ×3, headings ×2, text ×1,
// and a non-scoring filter for domain, tags and published range), so "title:x OR 1=1"
// or "'; DROP TABLE" are searched as words.
//
// One process opens an index directory at a time (Bleve holds a lock).
package bm25
