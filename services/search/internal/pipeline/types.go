package pipeline

import (
	"errors"
	"fmt"
	"github.com/kgsearch/kgsearch/pkg/fielderr"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kgsearch/kgsearch/pkg/ranker"
)

// Request is one search, validated by the API layer (Validate checks it again).
type Request struct {
	Query           string
	K               int // results per page, 1..MaxK (0 means DefaultK)
	Offset          int // results to skip, 0..MaxOffset
	Tags            []string
	Domain          string
	PublishedAfter  time.Time      // inclusive; zero: no bound
	PublishedBefore time.Time      // exclusive; zero: no bound
	Weights         ranker.Weights // zero value: the defaults
	Fusion          ranker.Fusion  // "" means weighted
	MMR             bool
	Lambda          float64 // MMR lambda in [0,1]
	Expand          bool
	KeepHistory     bool // version-history pages keep their full score (ranker.IsVersionHistory)
	KeepGenerated   bool // source listings and generated indexes keep their full score (ranker.PageGenerated)
	Explain         bool
}

// Validate checks the request's fields and names the first one at fault.
func (r Request) Validate() error {
	switch {
	case r.K < 0 || r.K > MaxK:
		return &FieldError{Field: "k", Reason: fmt.Sprintf("%d is outside 1..%d", r.K, MaxK)}
	case r.Offset < 0 || r.Offset > MaxOffset:
		return &FieldError{Field: "offset", Reason: fmt.Sprintf("%d is outside 0..%d", r.Offset, MaxOffset)}
	case len(r.Tags) > MaxTags:
		return &FieldError{Field: "tags", Reason: fmt.Sprintf("%d tags; at most %d", len(r.Tags), MaxTags)}
	case len(r.Domain) > MaxDomain:
		return &FieldError{Field: "domain", Reason: fmt.Sprintf("%d bytes; at most %d", len(r.Domain), MaxDomain)}
	case r.MMR && (math.IsNaN(r.Lambda) || r.Lambda < 0 || r.Lambda > 1):
		return &FieldError{Field: "mmr", Reason: fmt.Sprintf("lambda %g is outside [0,1]", r.Lambda)}
	case !r.PublishedAfter.IsZero() && !r.PublishedBefore.IsZero() && !r.PublishedAfter.Before(r.PublishedBefore):
		return &FieldError{Field: "published_after", Reason: "must be before published_before"}
	}
	for _, t := range r.Tags {
		if strings.TrimSpace(t) == "" || len(t) > MaxTagLen || !utf8.ValidString(t) {
			return &FieldError{Field: "tags", Reason: fmt.Sprintf("each tag must be 1..%d bytes of UTF-8 text", MaxTagLen)}
		}
	}
	if r.Domain != "" && (!utf8.ValidString(r.Domain) || strings.ContainsAny(r.Domain, " \t\r\n/\\'\";")) {
		return &FieldError{Field: "domain", Reason: "must be a host name such as docs.python.org"}
	}
	for _, d := range []struct {
		name string
		t    time.Time
	}{{"published_after", r.PublishedAfter}, {"published_before", r.PublishedBefore}} {
		if !d.t.IsZero() && (d.t.Year() < 1678 || d.t.Year() > 2261) {
			return &FieldError{Field: d.name, Reason: "the year must be within 1678..2261"}
		}
	}
	if err := r.Weights.Validate(); r.Weights != (ranker.Weights{}) && err != nil {
		return &FieldError{Field: "weights", Reason: err.Error()}
	}
	if _, err := ranker.ParseFusion(string(r.Fusion)); err != nil {
		return &FieldError{Field: "fusion", Reason: err.Error()}
	}
	return nil
}

// Limits on Request fields.
const (
	DefaultK  = 10
	MaxK      = 100
	MaxOffset = 1000
	MaxTags   = 16
	MaxTagLen = 128
	MaxDomain = 253
)

// FieldError is a request field the client must fix: the one field-error type,
// which the shared error mapper answers with a 400 naming the field.
type FieldError = fielderr.Error

// ErrUnavailable means nothing can be answered: every retriever failed, or the
// store holding the candidates' text could not be read.
var ErrUnavailable = errors.New("no retriever is available")

// UnavailableError lists why each retriever failed, and "store" when the candidates
// were found but their text could not be read.
type UnavailableError struct {
	Reasons map[string]string // retriever or "store" → short reason
}

func (e *UnavailableError) Error() string {
	msg := "every retriever failed:"
	if _, ok := e.Reasons[storeName]; ok {
		msg = "the document store could not be read:"
	}
	for _, s := range []string{"vector", "graph", "bm25", storeName} {
		if r, ok := e.Reasons[s]; ok {
			msg += " " + s + ": " + r + ";"
		}
	}
	return msg
}

// Is makes every UnavailableError match ErrUnavailable.
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

// Response is the answer of a search, in the shape the JSON format uses (see
// ToTOON for the TOON shape).
type Response struct {
	Query            QueryInfo       `json:"query"`
	Exploration      Exploration     `json:"exploration"`
	Results          []Result        `json:"results"`
	ResultCount      int             `json:"result_count"`
	TotalTimeMS      float64         `json:"total_time_ms"`
	PhaseMS          PhaseMS         `json:"phase_ms"`
	SuggestedQueries []string        `json:"suggested_queries"`
	RelatedEntities  []RelatedEntity `json:"related_entities"`
	Degraded         []string        `json:"degraded"`
	Tokens           Tokens          `json:"tokens"`
	Explain          *Explain        `json:"explain,omitempty"`
}

// QueryInfo is the parsed query.
type QueryInfo struct {
	Original   string        `json:"original"`
	Normalized string        `json:"normalized"`
	Entities   []QueryEntity `json:"entities"`
	Intent     string        `json:"intent"`
	Confidence float64       `json:"confidence"`
	Variants   Variants      `json:"variants"`
}

// QueryEntity is an entity found in the query.
type QueryEntity struct {
	Text       string  `json:"text"`
	Type       string  `json:"type"`
	Confidence float64 `json:"confidence"`
}

// Variants are the query forms used for retrieval.
type Variants struct {
	Original         string `json:"original"`
	EntityEmphasised string `json:"entity_emphasised"`
	EntityOnly       string `json:"entity_only"`
}

// Exploration reports the entity expansion.
type Exploration struct {
	OriginalEntityCount    int                `json:"original_entity_count"`
	ExpandedEntityCount    int                `json:"expanded_entity_count"`
	ExpansionRelationships []Relationship     `json:"expansion_relationships"`
	DiscoveredEntities     []DiscoveredEntity `json:"discovered_entities"`
}

// Relationship is one edge followed during expansion.
type Relationship struct {
	From     string `json:"from"`
	Relation string `json:"relation"`
	To       string `json:"to"`
}

// DiscoveredEntity is an entity reached by expansion and why it was used.
type DiscoveredEntity struct {
	Name       string  `json:"name"`
	Type       string  `json:"type"`
	Confidence float64 `json:"confidence"`
	Hops       int     `json:"hops"`
	Used       bool    `json:"used"`   // its chunks took part in ranking
	Reason     string  `json:"reason"` // the path, or why it was not used
}

// Result is one ranked hit.
type Result struct {
	Rank           int            `json:"rank"`
	URL            string         `json:"url"`
	Title          string         `json:"title"`
	Preview        string         `json:"preview"`
	Score          float64        `json:"score"`
	ScoreBreakdown ScoreBreakdown `json:"score_breakdown"`
	Timestamp      string         `json:"timestamp"` // RFC 3339, "" when unknown
	Tags           []string       `json:"tags"`
	Source         string         `json:"source"` // retrievers that found the chunk, e.g. "vector+bm25"
	EntityMentions []string       `json:"entity_mentions"`
	ChunkID        string         `json:"chunk_id"`
	Start          int            `json:"start"` // chunk byte offsets in the document text
	End            int            `json:"end"`
}

// ScoreBreakdown holds the normalised signals of a result.
type ScoreBreakdown struct {
	Vector  float64 `json:"vector"`
	Graph   float64 `json:"graph"`
	BM25    float64 `json:"bm25"`
	Recency float64 `json:"recency"`
	Title   float64 `json:"title"`
}

// PhaseMS are the phase timings in milliseconds.
type PhaseMS struct {
	Parse    float64 `json:"parse"`
	Retrieve float64 `json:"retrieve"`
	Expand   float64 `json:"expand"`
	Rank     float64 `json:"rank"`
	Format   float64 `json:"format"`
}

// RelatedEntity is an entity related to the query.
type RelatedEntity struct {
	Name   string  `json:"name"`
	Type   string  `json:"type"`
	Score  float64 `json:"score"`
	Source string  `json:"source"` // "expansion" or "results"
}

// Tokens compares the response's size in cl100k tokens as JSON and as TOON (both
// counted without the tokens field itself).
type Tokens struct {
	JSON     int     `json:"json"`
	TOON     int     `json:"toon"`
	SavedPct float64 `json:"saved_pct"`
}

// Explain is returned with explain=true.
type Explain struct {
	Weights    string                   `json:"weights"`
	Fusion     string                   `json:"fusion"`
	MMR        bool                     `json:"mmr"`
	Lambda     float64                  `json:"lambda,omitempty"`
	Candidates int                      `json:"candidates"`
	Retrievers map[string]RetrieverInfo `json:"retrievers"`
	Notes      []string                 `json:"notes,omitempty"`
	// Related lists the related entities the selection's rules kept, each with the
	// confidence model's probability and features (named by RelatedFeatures), and
	// whether it cleared the confidence cut and is shown.
	Related         []RelatedCandidate `json:"related,omitempty"`
	RelatedFeatures []string           `json:"related_features,omitempty"`
}

// RelatedCandidate is a related entity the rules kept, before the confidence cut.
type RelatedCandidate struct {
	Name       string    `json:"name"`
	Confidence float64   `json:"confidence"`
	Shown      bool      `json:"shown"`
	Features   []float64 `json:"features"`
}

// RetrieverInfo is one retriever's contribution.
type RetrieverInfo struct {
	Hits   int     `json:"hits"`
	TookMS float64 `json:"took_ms"`
	Error  string  `json:"error,omitempty"`
}
