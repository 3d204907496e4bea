package ranker

import "time"

// Candidate is one chunk proposed by a retriever (vector, graph or BM25), with the raw
// score of every retriever that found it. A retriever that did not find the chunk leaves
// its Has* flag false; the chunk then scores 0 on that signal (see doc.go).
type Candidate struct {
	ChunkID    string
	DocumentID string // dedup key when ContentKey is empty; URL is used when both are
	// ContentKey, when set, identifies the document's text (its content hash):
	// documents with the same key are copies of one page at several URLs (an
	// index.html that repeats the first chapter) and make one result, the copy whose
	// chunk ranks best. It takes precedence over DocumentID.
	ContentKey string
	URL        string
	Title      string
	Headings   []string
	Text       string
	Published  time.Time // zero when unknown
	Updated    time.Time // zero when unknown
	Tags       []string
	Source     string
	// History marks a version-history page (IsVersionHistory): Request.HistoryFactor
	// multiplies its final score.
	History bool
	// Generated marks a source listing or a generated index (PageGenerated):
	// Request.SourceFactor or Request.IndexFactor multiplies its final score.
	Generated Generated

	// Chunk offsets in the document text, kept for citations.
	Start, End int

	// VectorSimilarity is the cosine similarity between the query and chunk embeddings,
	// in [-1, 1]. MariaDB returns VEC_DISTANCE_COSINE; convert with SimilarityFromDistance.
	VectorSimilarity float64
	HasVector        bool

	// GraphScore is the kg match score, in [0,1] (used as is by the default
	// normalisation, clamped; MaxScale and MinMax accept any non-negative scale).
	GraphScore float64
	HasGraph   bool
	// GraphExpandedOnly marks a chunk reached only through expanded entities: after
	// normalisation its graph signal is multiplied by Options.ExpandedFactor (0.7).
	// The caller sets the flag and passes the unreduced score.
	GraphExpandedOnly bool

	// BM25Score is the Bleve BM25 score (non-negative, any scale).
	BM25Score float64
	HasBM25   bool

	// EntityMentions are the entities the chunk mentions (from kg), returned as-is.
	EntityMentions []string

	// Embedding is optional. When present it is used by MMR and, if the query has an
	// embedding and the chunk has no VectorSimilarity, to compute the missing similarity.
	Embedding []float32
}

// SimilarityFromDistance converts a cosine distance (MariaDB VEC_DISTANCE_COSINE, in
// [0, 2]) into a cosine similarity in [-1, 1].
func SimilarityFromDistance(d float64) float64 { return 1 - d }

// docKey is the document identity used to keep one chunk per document: the content
// key, else the document id, else the URL, else the chunk id (kind tells them apart
// without concatenating).
type docKey struct {
	kind byte
	id   string
}

func (c *Candidate) dedupKey() docKey {
	if c.ContentKey != "" {
		return docKey{'h', c.ContentKey}
	}
	if c.DocumentID != "" {
		return docKey{'d', c.DocumentID}
	}
	if c.URL != "" {
		return docKey{'u', c.URL}
	}
	return docKey{'c', c.ChunkID}
}

// date returns the most recent known of Updated and Published, or the zero time.
func (c *Candidate) date() time.Time {
	if c.Updated.After(c.Published) {
		return c.Updated
	}
	return c.Published
}

// Breakdown is the score of one result per signal, each in [0, 1], and the final score.
type Breakdown struct {
	Vector  float64 `json:"vector"`
	Graph   float64 `json:"graph"`
	BM25    float64 `json:"bm25"`
	Recency float64 `json:"recency"`
	Title   float64 `json:"title"`
	Final   float64 `json:"final"`
}

// Get returns the normalised value of signal s.
func (b Breakdown) Get(s Signal) float64 {
	switch s {
	case Vector:
		return b.Vector
	case Graph:
		return b.Graph
	case BM25:
		return b.BM25
	case Recency:
		return b.Recency
	case Title:
		return b.Title
	}
	return 0
}

func (b *Breakdown) set(s Signal, v float64) {
	switch s {
	case Vector:
		b.Vector = v
	case Graph:
		b.Graph = v
	case BM25:
		b.BM25 = v
	case Recency:
		b.Recency = v
	case Title:
		b.Title = v
	}
}

// Result is a ranked candidate.
type Result struct {
	Rank      int // 1-based position in the returned list
	Candidate Candidate
	Score     float64 // = Breakdown.Final
	Breakdown Breakdown
	// Preview is the best sentences around the query terms; PreviewStart and PreviewEnd
	// are byte offsets of that span in Candidate.Text. Empty when Options.PreviewChars is 0.
	Preview                  string
	PreviewStart, PreviewEnd int
}
