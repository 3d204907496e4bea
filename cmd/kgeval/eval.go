package main

import (
	"context"
	"fmt"
	"math"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kgsearch/kgsearch/pkg/apiclient"
)

// Method is one way of asking the search service: a name and the request
// parameters that select the signals and the fusion, written as the URL query
// fields of the search API (apiclient.ParseSearchQuery reads them).
type Method struct {
	Name   string
	Params url.Values
	Kind   string // KindOurs, KindAblation or KindVariant
}

// Kinds of method in a report.
const (
	KindOurs     = "ours"     // the full pipeline and the built-in single-signal modes
	KindAblation = "ablation" // the full pipeline with one part switched off
	KindVariant  = "variant"  // a -variant flag
	KindPeer     = "peer"     // a standard engine over the same stored chunks
)

// String is the method's parameters as a readable query string ("" for the
// defaults).
func (m Method) String() string {
	s := m.Params.Encode()
	if u, err := url.QueryUnescape(s); err == nil {
		return u
	}
	return s
}

// BuiltinMethods are the full pipeline and the three baselines. Weights are
// normalised by the service and a weight of 0 switches a signal off; expansion
// is off for the baselines so they use no graph at all.
func BuiltinMethods() []Method {
	return []Method{
		{Name: "full", Params: url.Values{}, Kind: KindOurs},
		{Name: "bm25", Params: url.Values{"weights": {"bm25:1"}, "expand": {"false"}}, Kind: KindOurs},
		{Name: "vector", Params: url.Values{"weights": {"vector:1"}, "expand": {"false"}}, Kind: KindOurs},
		{Name: "rrf", Params: url.Values{"fusion": {"rrf"}, "weights": {"vector:1,bm25:1"}, "expand": {"false"}}, Kind: KindOurs},
	}
}

// ParseVariant reads a -variant flag value, name=param=value&param=value.
func ParseVariant(s string) (Method, error) {
	name, query, ok := strings.Cut(s, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return Method{}, fmt.Errorf("variant %q: want name=param=value&param=value", s)
	}
	v, err := url.ParseQuery(query)
	if err != nil {
		return Method{}, fmt.Errorf("variant %s: parameters %q: %w", name, query, err)
	}
	for _, reserved := range []string{"q", "k", "format"} {
		if v.Has(reserved) {
			return Method{}, fmt.Errorf("variant %s: %q is set by kgeval, leave it out", name, reserved)
		}
	}
	if _, err := apiclient.ParseSearchQuery(v); err != nil {
		return Method{}, fmt.Errorf("variant %s: %w", name, err)
	}
	return Method{Name: name, Params: v, Kind: KindVariant}, nil
}

// Hit is one ranked result, reduced to what the report shows.
type Hit struct {
	Page      string             `json:"page"`
	Grade     int                `json:"grade"`
	Score     float64            `json:"score"`
	Breakdown map[string]float64 `json:"breakdown,omitempty"`
	Source    string             `json:"source,omitempty"`
}

// QueryResult is one query answered by one method.
type QueryResult struct {
	ID       string   `json:"id"`
	NDCG     float64  `json:"ndcg"`
	MRR      float64  `json:"mrr"`
	Recall   float64  `json:"recall"`
	TookMS   float64  `json:"took_ms"`
	Degraded []string `json:"degraded,omitempty"`
	Notes    []string `json:"notes,omitempty"`
	Entities []string `json:"entities,omitempty"`
	// Normalized is the query as the service normalised it (the text it embeds).
	Normalized string `json:"normalized,omitempty"`
	Hits       []Hit  `json:"hits"`
}

// MethodResult is every query answered by one method, with the means.
type MethodResult struct {
	Method    string        `json:"method"`
	Kind      string        `json:"kind"`
	Params    string        `json:"params"`
	NDCG      float64       `json:"ndcg_at_k"`
	MRR       float64       `json:"mrr_at_k"`
	Recall    float64       `json:"recall_at_k"`
	MedianMS  float64       `json:"median_ms"`
	Degraded  int           `json:"degraded_queries"`
	PerQuery  []QueryResult `json:"queries"`
	byQueryID map[string]*QueryResult
}

// Searcher is the part of the search client (apiclient.SearchClient) that
// Evaluate needs.
type Searcher interface {
	SearchJSON(ctx context.Context, req apiclient.SearchRequest) (*apiclient.SearchResponse, error)
}

// Evaluator runs a dataset against a search service.
type Evaluator struct {
	Search Searcher
	Root   *url.URL // site root the judged paths are relative to
	K      int      // metric cut-off, also the number of results asked for
	// Tags restrict every search to the documents carrying all of them (the
	// dataset's corpus when several corpora share the store); not shown in Params.
	Tags []string
}

// Evaluate answers every query with every method. It stops at the first error
// (an unreachable or failing service makes the comparison meaningless); degraded
// answers are counted, not errors, so the caller can report all of them.
func (e *Evaluator) Evaluate(ctx context.Context, d *Dataset, methods []Method) ([]*MethodResult, error) {
	out := make([]*MethodResult, 0, len(methods))
	for _, m := range methods {
		mr := &MethodResult{Method: m.Name, Kind: m.Kind, Params: m.String(), byQueryID: map[string]*QueryResult{}}
		for _, q := range d.Queries {
			qr, err := e.one(ctx, q, m)
			if err != nil {
				return nil, fmt.Errorf("method %s, query %s %q: %w", m.Name, q.ID, q.Query, err)
			}
			mr.PerQuery = append(mr.PerQuery, *qr)
		}
		mr.summarise()
		out = append(out, mr)
	}
	return out, nil
}

func (e *Evaluator) one(ctx context.Context, q Query, m Method) (*QueryResult, error) {
	req, err := apiclient.ParseSearchQuery(m.Params)
	if err != nil {
		return nil, err
	}
	req.Q, req.K, req.Explain = q.Query, e.K, true
	if len(e.Tags) > 0 {
		req.Tags = e.Tags
	}
	start := time.Now()
	resp, err := e.Search.SearchJSON(ctx, req)
	if err != nil {
		return nil, err
	}
	took := float64(time.Since(start).Microseconds()) / 1000
	ranked := make([]string, 0, len(resp.Results))
	hits := make([]Hit, 0, len(resp.Results))
	for _, r := range resp.Results {
		page, err := PageKey(r.URL, e.Root)
		if err != nil {
			return nil, err
		}
		ranked = append(ranked, page)
		hits = append(hits, Hit{Page: page, Grade: q.Relevant[page], Score: r.Score, Breakdown: r.ScoreBreakdown.Map(), Source: r.Source})
	}
	qr := &QueryResult{
		ID:         q.ID,
		NDCG:       NDCG(ranked, q.Relevant, e.K),
		MRR:        MRR(ranked, q.Relevant, e.K),
		Recall:     Recall(ranked, q.Relevant, e.K),
		TookMS:     took,
		Degraded:   resp.Degraded,
		Normalized: resp.Query.Normalized,
		Hits:       hits,
	}
	if resp.Explain != nil {
		qr.Notes = resp.Explain.Notes
	}
	for _, en := range resp.Query.Entities {
		qr.Entities = append(qr.Entities, en.Text+"/"+en.Type)
	}
	return qr, nil
}

func (mr *MethodResult) summarise() {
	n := float64(len(mr.PerQuery))
	var took []float64
	mr.NDCG, mr.MRR, mr.Recall, mr.Degraded = 0, 0, 0, 0
	for i := range mr.PerQuery {
		qr := &mr.PerQuery[i]
		mr.NDCG += qr.NDCG / n
		mr.MRR += qr.MRR / n
		mr.Recall += qr.Recall / n
		if len(qr.Degraded) > 0 {
			mr.Degraded++
		}
		took = append(took, qr.TookMS)
		if mr.byQueryID == nil {
			mr.byQueryID = map[string]*QueryResult{}
		}
		mr.byQueryID[qr.ID] = qr
	}
	mr.MedianMS = median(took)
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Paired compares two methods query by query on nDCG: how often a beats b, ties
// and loses (differences under eps are ties).
type Paired struct {
	A, B               string
	Wins, Ties, Losses int
	MeanDiff           float64
	SignP              float64 // two-sided sign test p-value of Wins against Losses
}

// Compare pairs a against b over the queries both answered.
func Compare(a, b *MethodResult, eps float64) Paired {
	p := Paired{A: a.Method, B: b.Method}
	n := 0
	for _, qa := range a.PerQuery {
		qb, ok := b.byQueryID[qa.ID]
		if !ok {
			continue
		}
		n++
		d := qa.NDCG - qb.NDCG
		p.MeanDiff += d
		switch {
		case d > eps:
			p.Wins++
		case d < -eps:
			p.Losses++
		default:
			p.Ties++
		}
	}
	if n > 0 {
		p.MeanDiff /= float64(n)
	}
	p.SignP = SignTest(p.Wins, p.Losses)
	return p
}

// SignTest is the two-sided exact sign test p-value of wins against losses (ties
// dropped): the probability, if neither method were better, of a split at least
// this uneven.
func SignTest(wins, losses int) float64 {
	n := wins + losses
	if n == 0 {
		return 1
	}
	k := min(wins, losses)
	// P(X <= k) for X ~ Binomial(n, 1/2), summed in log space to stay finite.
	lg := func(x int) float64 { v, _ := math.Lgamma(float64(x + 1)); return v }
	p := 0.0
	for i := 0; i <= k; i++ {
		p += math.Exp(lg(n) - lg(i) - lg(n-i) - float64(n)*math.Ln2)
	}
	return min(1, 2*p)
}
