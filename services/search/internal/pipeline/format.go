package pipeline

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kgsearch/kgsearch/pkg/kgapi"
	"github.com/kgsearch/kgsearch/pkg/queryparse"
	"github.com/kgsearch/kgsearch/pkg/ranker"
	"github.com/kgsearch/kgsearch/pkg/toon"
)

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

// relatedEntities lists entities related to the query: those reached by expansion
// (scored by their confidence) then those mentioned most in the results (scored by
// the share of results mentioning them).
func relatedEntities(q queryparse.Query, ex *kgapi.ExpandResponse, ranked []ranker.Result) []RelatedEntity {
	out := []RelatedEntity{}
	seen := map[string]bool{}
	for _, e := range q.Entities {
		seen[strings.ToLower(e.Name)] = true
		seen[strings.ToLower(e.ID)] = true
		seen[strings.ToLower(e.Text)] = true
	}
	if ex != nil {
		for _, r := range ex.Related {
			k := strings.ToLower(r.Name)
			if k == "" || seen[k] || seen[strings.ToLower(r.ID)] || !finite(r.Confidence) {
				continue
			}
			seen[k] = true
			out = append(out, RelatedEntity{Name: r.Name, Type: r.Type, Score: round(r.Confidence, 3), Source: "expansion"})
			if len(out) >= 10 {
				return out
			}
		}
	}
	if len(ranked) == 0 {
		return out
	}
	count := map[string]int{}
	var names []string
	for _, r := range ranked {
		for _, m := range r.Candidate.EntityMentions {
			k := strings.ToLower(m)
			if seen[k] {
				continue
			}
			if count[m] == 0 {
				names = append(names, m)
			}
			count[m]++
		}
	}
	sort.SliceStable(names, func(i, j int) bool { return count[names[i]] > count[names[j]] })
	for _, n := range names {
		if len(out) >= 10 {
			break
		}
		seen[strings.ToLower(n)] = true
		out = append(out, RelatedEntity{Name: n, Score: round(float64(count[n])/float64(len(ranked)), 3), Source: "results"})
	}
	return out
}

// suggestions builds up to five follow-up queries: the query's main entity (or the
// query) with a related entity, then the query with a term that co-occurs in the
// titles and headings of the top results.
func suggestions(q queryparse.Query, related []RelatedEntity, ranked []ranker.Result) []string {
	out := []string{}
	seen := map[string]bool{q.Normalized: true}
	add := func(s string) {
		s = strings.TrimSpace(s)
		if s != "" && !seen[s] && len(out) < 5 {
			seen[s] = true
			out = append(out, s)
		}
	}
	base := q.Normalized
	if len(q.Entities) > 0 {
		base = strings.ToLower(q.Entities[0].Text)
	}
	for _, r := range related {
		if len(out) >= 3 {
			break
		}
		add(base + " " + strings.ToLower(r.Name))
	}
	qterms := map[string]bool{}
	for _, t := range ranker.Terms(q.Normalized) {
		qterms[t] = true
	}
	count := map[string]int{}
	var terms []string
	top := ranked
	if len(top) > 10 {
		top = top[:10]
	}
	for _, r := range top {
		seenHere := map[string]bool{}
		text := queryparse.Normalize(r.Candidate.Title + " " + strings.Join(r.Candidate.Headings, " "))
		for _, t := range queryparse.Terms(text) {
			stems := ranker.Terms(t)
			if len(stems) != 1 || qterms[stems[0]] || seenHere[t] || len(t) < 3 || !hasLetter(t) {
				continue
			}
			seenHere[t] = true
			if count[t] == 0 {
				terms = append(terms, t)
			}
			count[t]++
		}
	}
	sort.SliceStable(terms, func(i, j int) bool { return count[terms[i]] > count[terms[j]] })
	for _, t := range terms {
		// A term in one title is no co-occurrence; a term in (nearly) every title is
		// site boilerplate ("— Python 3.11 documentation").
		if count[t] < 2 && len(top) > 2 {
			break
		}
		if len(top) >= 3 && (count[t] == len(top) || (len(top) >= 8 && 5*count[t] >= 4*len(top))) {
			continue
		}
		add(q.Normalized + " " + t)
	}
	return out
}

func hasLetter(s string) bool {
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r > 127 {
			return true
		}
	}
	return false
}

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

// countTokens fills resp.Tokens with the cl100k token counts of the response as JSON
// and as TOON, both counted with the tokens field zero.
func (p *Pipeline) countTokens(resp *Response) {
	if p.opt.Tokens == nil {
		return
	}
	resp.Tokens = Tokens{}
	js, err := json.Marshal(resp)
	if err != nil {
		return
	}
	tn, err := toon.Marshal(resp.ToTOON())
	if err != nil {
		return
	}
	j, t := p.opt.Tokens(js), p.opt.Tokens(tn)
	resp.Tokens = Tokens{JSON: j, TOON: t}
	if j > 0 {
		resp.Tokens.SavedPct = round(100*float64(j-t)/float64(j), 1)
	}
}
