// Package kgapi is the HTTP contract of the kg service: the request and response
// types of its endpoints and a client for them. The kg service serves these types;
// the crawler (ingest, delete) and the search service (match, expand, parse) call
// them through Client.
package kgapi

// Chunk is one chunk of a document, as stored by the crawler.
type Chunk struct {
	ID          string   `json:"id"`
	Ordinal     int      `json:"ordinal"`
	Text        string   `json:"text"`
	HeadingPath []string `json:"heading_path,omitempty"`
	CodeSpans   []string `json:"code_spans,omitempty"`
}

// Link is an outgoing hyperlink of a document.
type Link struct {
	URL    string `json:"url"`
	Anchor string `json:"anchor,omitempty"`
	// DocumentID is the id the target page gets when it is crawled (the crawler's
	// id of the canonical URL). When empty, the kg service derives it from URL as
	// the crawler does (the first 16 bytes of SHA-256(URL), hex), which matches only
	// when URL is already canonical.
	DocumentID string `json:"document_id,omitempty"`
}

// Document is what the crawler sends after storing a page.
type Document struct {
	ID       string   `json:"id"`
	URL      string   `json:"url"`
	Title    string   `json:"title,omitempty"`
	Headings []string `json:"headings,omitempty"`
	Chunks   []Chunk  `json:"chunks"`
	Links    []Link   `json:"links,omitempty"`
}

// IngestRequest is the body of POST /api/v1/ingest.
type IngestRequest struct {
	Document Document `json:"document"`
}

// IngestResponse reports what the extraction produced.
type IngestResponse struct {
	DocumentID string `json:"document_id"`
	Chunks     int    `json:"chunks"`
	Entities   int    `json:"entities"`
	Mentions   int    `json:"mentions"`
	Relations  int    `json:"relations"`
	Links      int    `json:"links"`
	TookMS     int64  `json:"took_ms"`
}

// MatchRequest is the body of POST /api/v1/entities/match. Entities are entity ids
// or names (names are resolved through the extractor's normalisation).
type MatchRequest struct {
	Entities []string `json:"entities"`
	Limit    int      `json:"limit,omitempty"`
}

// ChunkMatch is one chunk mentioning query entities, with its graph relevance.
type ChunkMatch struct {
	ChunkID    string `json:"chunk_id"`
	DocumentID string `json:"document_id"`
	// Score is the graph relevance in [0,1] (see the kg service's documentation).
	Score float64 `json:"score"`
	// Matched lists the ids of the query entities the chunk mentions.
	Matched []string `json:"matched"`
	Ordinal int      `json:"ordinal,omitempty"`
}

// MatchResponse lists matching chunks, best first, and the entities resolved.
type MatchResponse struct {
	Chunks   []ChunkMatch `json:"chunks"`
	Resolved []EntityRef  `json:"resolved"`
	Unknown  []string     `json:"unknown,omitempty"`
}

// EntityRef names an entity.
type EntityRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Type string `json:"type"`
}

// ExpandRequest is the body of POST /api/v1/expand/entities.
type ExpandRequest struct {
	Entities      []string `json:"entities"`
	MaxHops       int      `json:"max_hops,omitempty"`
	Limit         int      `json:"limit,omitempty"`
	MinConfidence float64  `json:"min_confidence,omitempty"`
	RelationTypes []string `json:"relation_types,omitempty"`
}

// PathStep is one edge on the way from a query entity to a related one.
type PathStep struct {
	From     string `json:"from"`
	Relation string `json:"relation"`
	To       string `json:"to"`
	// Confidence, Weight and Support describe the edge aggregated over the
	// documents supporting it: noisy-or of their confidences, sum of their weights
	// (an evidence count, or the NPMI for CO_OCCURS) and how many documents.
	Confidence float64 `json:"confidence,omitempty"`
	Weight     float64 `json:"weight,omitempty"`
	Support    int64   `json:"support,omitempty"`
}

// RelatedEntity is an entity reached by expansion.
type RelatedEntity struct {
	EntityRef
	Confidence float64    `json:"confidence"`
	Hops       int        `json:"hops"`
	Path       []PathStep `json:"path"`
	Evidence   []string   `json:"evidence,omitempty"` // chunk ids
}

// ExpandResponse lists related entities, best first.
type ExpandResponse struct {
	Resolved []EntityRef     `json:"resolved"`
	Related  []RelatedEntity `json:"related"`
	Unknown  []string        `json:"unknown,omitempty"`
}

// RetrieveRequest is the body of POST /api/v1/retrieve: what one search asks
// the graph, in one round trip. It is a match of Entities and, when Expand is
// set, an expansion of them and a match of the related entities it selects.
type RetrieveRequest struct {
	Entities []string `json:"entities"`
	// Limit is the match's limit (as MatchRequest.Limit).
	Limit  int             `json:"limit,omitempty"`
	Expand *RetrieveExpand `json:"expand,omitempty"`
}

// RetrieveExpand asks for the expansion (as ExpandRequest, whose fields these
// are) and the chunks of the related entities used.
type RetrieveExpand struct {
	MaxHops       int      `json:"max_hops,omitempty"`
	Limit         int      `json:"limit,omitempty"`
	MinConfidence float64  `json:"min_confidence,omitempty"`
	RelationTypes []string `json:"relation_types,omitempty"`
	// Use is how many related entities are used: the first Use of Related (best
	// first) whose confidence is at least MinConfidence; their chunks are matched
	// with the request's Limit. 0 uses none.
	Use int `json:"use,omitempty"`
}

// RetrieveResponse answers RetrieveRequest: the match, and with Expand the
// expansion, the ids of the related entities used and the match of them (absent
// when none was used).
type RetrieveResponse struct {
	Match       MatchResponse   `json:"match"`
	Expand      *ExpandResponse `json:"expand,omitempty"`
	Used        []string        `json:"used,omitempty"`
	ExpandMatch *MatchResponse  `json:"expand_match,omitempty"`
}

// Relation is one edge of an entity, for the entity detail endpoint.
type Relation struct {
	Type       string    `json:"type"`
	Direction  string    `json:"direction"` // "out" or "in"
	Other      EntityRef `json:"other"`
	Weight     float64   `json:"weight"`
	Confidence float64   `json:"confidence"`
}

// Entity is the answer of GET /api/v1/entities/{id}.
type Entity struct {
	EntityRef
	Aliases   []string   `json:"aliases,omitempty"`
	Mentions  int        `json:"mentions"`
	Documents int        `json:"documents"`
	Relations []Relation `json:"relations,omitempty"`
}

// MaxEntityList is the most entities one GET /api/v1/entities answers; kg refuses a
// larger limit with 400.
const MaxEntityList = 1000

// EntityList is the answer of GET /api/v1/entities?prefix=&type=.
type EntityList struct {
	Entities []Entity `json:"entities"`
}

// ParseRequest is the body of POST /api/v1/parse.
type ParseRequest struct {
	Text string `json:"text"`
}

// QueryEntity is an entity found in a query string.
type QueryEntity struct {
	Text       string  `json:"text"`
	ID         string  `json:"id"`
	Name       string  `json:"name"`
	Type       string  `json:"type"`
	Confidence float64 `json:"confidence"`
	Start      int     `json:"start"`
	End        int     `json:"end"`
}

// ParseResponse is the answer of POST /api/v1/parse.
type ParseResponse struct {
	Entities []QueryEntity `json:"entities"`
}

// Stats is the answer of GET /api/v1/stats.
type Stats struct {
	Documents     int64            `json:"documents"`
	Chunks        int64            `json:"chunks"`
	Entities      int64            `json:"entities"`
	Relations     int64            `json:"relations"`
	Mentions      int64            `json:"mentions"`
	EntityTypes   map[string]int64 `json:"entity_types,omitempty"`
	RelationTypes map[string]int64 `json:"relation_types,omitempty"`
	// Placeholders counts linked-to pages not ingested yet; Links the hyperlinks
	// between documents.
	Placeholders int64 `json:"placeholders,omitempty"`
	Links        int64 `json:"links,omitempty"`
	// LearnedTerms counts the terms the corpus learner has promoted to entities,
	// LearnerDocuments the documents it has observed.
	LearnedTerms     int `json:"learned_terms,omitempty"`
	LearnerDocuments int `json:"learner_documents,omitempty"`
}
