// Package bm25 is the search service's full-text index: a Bleve (scorch) index of
// chunks, scored with standard BM25 computed by this package (scoring.go: k1 = 1.2,
// b = 0.75, idf = ln(1 + (N − n + 0.5)/(n + 0.5)), each field's own average length,
// field scores summed with their boosts — as Lucene, Elasticsearch and tantivy score
// it; Bleve's own "bm25" model is not used because it measures average field length
// as dictionary size, takes the square root of term frequencies, squares the idf and
// applies coordination factors). Title, headings and text are analysed with Bleve's
// English analyzer (possessives, lowercase, stop words, Snowball stemming, so
// "connections" finds "connection"); document id, URL, domain and tags are keywords
// and the published time a date, for filters. The index keeps each chunk's field
// lengths and their totals beside the documents, updated in the same batch.
//
// The index is derived from the store and never the system of record. It keeps the
// last applied change sequence number (the watermark) inside itself, written in the
// same Bleve batch as the changes (Apply), so after a restart a tailer resumes from
// Watermark(). Rebuild fills a fresh index in a sibling directory, compacts it to one
// segment and swaps it in; Open completes or discards a rebuild a crash interrupted.
//
// Queries are analysed text, not query-string syntax: Search builds query objects (the
// query's distinct analysed terms scored over title ×1, headings ×0.5 and text ×1, and
// a non-scoring filter for domain, tags and published range), so "title:x OR 1=1" or
// "'; DROP TABLE" are searched as words.
//
// One Index opens a directory at a time: Bleve locks it, and Open gives up with
// ErrLocked after waiting 2 s instead of blocking forever.
//
// Feeding it from the store's change feed: for each store.Change after Watermark(),
// a delete becomes Op{Kind: DeleteDocument}; an insert or update becomes
// Op{Kind: UpsertDocument} with the document's current chunks (or DeleteDocument if the
// document is gone by then), all with Seq = Change.Seq, applied in batches.
package bm25
