package pipeline

import "strings"

// TOONResponse is the response in the shape the TOON format uses: the same fields,
// with each result flattened to primitives so that results encode as one tabular
// array (score_breakdown becomes the columns vector, graph, bm25, recency and
// title_score; tags and entity_mentions become one "; "-joined string each).
type TOONResponse struct {
	Query            QueryInfo       `json:"query"`
	Exploration      Exploration     `json:"exploration"`
	Results          []TOONResult    `json:"results"`
	ResultCount      int             `json:"result_count"`
	TotalTimeMS      float64         `json:"total_time_ms"`
	PhaseMS          PhaseMS         `json:"phase_ms"`
	SuggestedQueries []string        `json:"suggested_queries"`
	RelatedEntities  []RelatedEntity `json:"related_entities"`
	Degraded         []string        `json:"degraded"`
	Tokens           Tokens          `json:"tokens"`
	Explain          *Explain        `json:"explain,omitempty"`
}

// TOONResult is one result row of the TOON table.
type TOONResult struct {
	Rank           int     `json:"rank"`
	URL            string  `json:"url"`
	Title          string  `json:"title"`
	Preview        string  `json:"preview"`
	Score          float64 `json:"score"`
	Vector         float64 `json:"vector"`
	Graph          float64 `json:"graph"`
	BM25           float64 `json:"bm25"`
	Recency        float64 `json:"recency"`
	TitleScore     float64 `json:"title_score"`
	Timestamp      string  `json:"timestamp"`
	Tags           string  `json:"tags"`
	Source         string  `json:"source"`
	EntityMentions string  `json:"entity_mentions"`
	ChunkID        string  `json:"chunk_id"`
	Start          int     `json:"start"`
	End            int     `json:"end"`
}

// ListSeparator joins tags and entity mentions in a TOON result row.
const ListSeparator = "; "

// ToTOON converts the response to its TOON shape.
func (r *Response) ToTOON() *TOONResponse {
	t := &TOONResponse{Query: r.Query, Exploration: r.Exploration, ResultCount: r.ResultCount, TotalTimeMS: r.TotalTimeMS,
		PhaseMS: r.PhaseMS, SuggestedQueries: r.SuggestedQueries, RelatedEntities: r.RelatedEntities,
		Degraded: r.Degraded, Tokens: r.Tokens, Explain: r.Explain, Results: make([]TOONResult, len(r.Results))}
	for i, x := range r.Results {
		t.Results[i] = TOONResult{Rank: x.Rank, URL: x.URL, Title: x.Title, Preview: x.Preview, Score: x.Score,
			Vector: x.ScoreBreakdown.Vector, Graph: x.ScoreBreakdown.Graph, BM25: x.ScoreBreakdown.BM25,
			Recency: x.ScoreBreakdown.Recency, TitleScore: x.ScoreBreakdown.Title, Timestamp: x.Timestamp,
			Tags: strings.Join(x.Tags, ListSeparator), Source: x.Source,
			EntityMentions: strings.Join(x.EntityMentions, ListSeparator), ChunkID: x.ChunkID, Start: x.Start, End: x.End}
	}
	return t
}
