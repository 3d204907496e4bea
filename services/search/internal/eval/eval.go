// Package eval measures search relevance against judged queries: nDCG@10, MRR@10 and
// Recall@10 of the full pipeline and, in the same run, of BM25 only, vector only and
// the reciprocal rank fusion of the two, all through a running search service's HTTP
// API (the single-signal systems are the same service asked with weights=bm25:1 or
// weights=vector:1 and expand=false; a result that signal did not find is dropped, so a
// single-signal list is that retriever's own ranking, deduplicated by document).
package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"time"
)

// Query is one judged query: relevant page paths with grades (2 = answers it, 1 = helps).
type Query struct {
	Q        string         `json:"q"`
	Relevant map[string]int `json:"relevant"`
}

// Set is a file of judged queries.
type Set struct {
	Site    string  `json:"site"`
	Note    string  `json:"note"`
	Queries []Query `json:"queries"`
}

// Load reads a query set.
func Load(path string) (Set, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Set{}, err
	}
	var s Set
	if err := json.Unmarshal(raw, &s); err != nil {
		return Set{}, fmt.Errorf("parse %s: %w", path, err)
	}
	for i, q := range s.Queries {
		if strings.TrimSpace(q.Q) == "" || len(q.Relevant) == 0 {
			return Set{}, fmt.Errorf("%s: query %d needs q and at least one relevant page", path, i+1)
		}
	}
	return s, nil
}

// System is one way of asking the service.
type System struct {
	Name   string
	Params url.Values
	Signal string // keep only results with this breakdown signal > 0 ("" keeps all)
}

// Systems are the four compared in one run; full adds parameters to the full
// pipeline's requests (for example weights or fusion), nil for the defaults.
func Systems(full url.Values) []System {
	if full == nil {
		full = url.Values{}
	}
	return []System{
		{Name: "full pipeline", Params: full},
		{Name: "BM25 only", Params: url.Values{"weights": {"bm25:1"}, "expand": {"false"}}, Signal: "bm25"},
		{Name: "vector only", Params: url.Values{"weights": {"vector:1"}, "expand": {"false"}}, Signal: "vector"},
		{Name: "RRF(BM25, vector)", Params: url.Values{"weights": {"vector:1,bm25:1"}, "fusion": {"rrf"}, "expand": {"false"}}},
	}
}

// Scores are the mean metrics of one system.
type Scores struct {
	System            string
	NDCG, MRR, Recall float64
	Queries, Degraded int
	PerQuery          []QueryScore
}

// QueryScore is one query's metrics and ranked paths.
type QueryScore struct {
	Q                 string
	NDCG, MRR, Recall float64
	Got               []string
}

// NDCG returns nDCG@k of the ranked paths with gain 2^grade − 1 and log2 discounts.
func NDCG(ranked []string, rel map[string]int, k int) float64 {
	dcg := 0.0
	seen := map[string]bool{}
	for i, p := range ranked {
		if i >= k {
			break
		}
		if g := rel[p]; g > 0 && !seen[p] {
			dcg += (math.Pow(2, float64(g)) - 1) / math.Log2(float64(i)+2)
		}
		seen[p] = true
	}
	grades := make([]int, 0, len(rel))
	for _, g := range rel {
		if g > 0 {
			grades = append(grades, g)
		}
	}
	sort.Sort(sort.Reverse(sort.IntSlice(grades)))
	idcg := 0.0
	for i, g := range grades {
		if i >= k {
			break
		}
		idcg += (math.Pow(2, float64(g)) - 1) / math.Log2(float64(i)+2)
	}
	if idcg == 0 {
		return 0
	}
	return dcg / idcg
}

// MRR returns 1/rank of the first relevant path within k, or 0.
func MRR(ranked []string, rel map[string]int, k int) float64 {
	for i, p := range ranked {
		if i >= k {
			break
		}
		if rel[p] > 0 {
			return 1 / float64(i+1)
		}
	}
	return 0
}

// Recall returns the share of relevant paths found within k.
func Recall(ranked []string, rel map[string]int, k int) float64 {
	n := 0
	for _, g := range rel {
		if g > 0 {
			n++
		}
	}
	if n == 0 {
		return 0
	}
	found := map[string]bool{}
	for i, p := range ranked {
		if i >= k {
			break
		}
		if rel[p] > 0 {
			found[p] = true
		}
	}
	return float64(len(found)) / float64(n)
}

// PathOf reduces a result URL to the path relative to the site root as judged: the
// part after the first path segment that the judged paths start with, else the path
// without its leading slash; fragments and queries are dropped.
func PathOf(raw string, roots map[string]bool) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	segs := strings.Split(strings.TrimPrefix(u.Path, "/"), "/")
	for i, s := range segs {
		if roots[s] {
			return strings.Join(segs[i:], "/")
		}
	}
	return strings.TrimPrefix(u.Path, "/")
}

type apiResult struct {
	URL            string             `json:"url"`
	ScoreBreakdown map[string]float64 `json:"score_breakdown"`
}

type apiResponse struct {
	Results  []apiResult `json:"results"`
	Degraded []string    `json:"degraded"`
}

// Run asks the service at base every query with every system and returns the scores.
// full adds parameters to the full pipeline's requests (nil: the service's defaults).
func Run(ctx context.Context, base string, set Set, k int, full url.Values, client *http.Client) ([]Scores, error) {
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	roots := map[string]bool{}
	for _, q := range set.Queries {
		for p := range q.Relevant {
			roots[strings.SplitN(p, "/", 2)[0]] = true
		}
	}
	var out []Scores
	for _, sys := range Systems(full) {
		sc := Scores{System: sys.Name}
		for _, q := range set.Queries {
			v := url.Values{}
			for key, vals := range sys.Params {
				v[key] = vals
			}
			v.Set("q", q.Q)
			v.Set("k", fmt.Sprint(k))
			v.Set("format", "json")
			resp, err := get(ctx, client, strings.TrimRight(base, "/")+"/api/v1/search?"+v.Encode())
			if err != nil {
				return nil, fmt.Errorf("%s: %q: %w", sys.Name, q.Q, err)
			}
			if len(resp.Degraded) > 0 {
				sc.Degraded++
			}
			var ranked []string
			for _, r := range resp.Results {
				if sys.Signal != "" && r.ScoreBreakdown[sys.Signal] <= 0 {
					continue
				}
				ranked = append(ranked, PathOf(r.URL, roots))
			}
			qs := QueryScore{Q: q.Q, NDCG: NDCG(ranked, q.Relevant, k), MRR: MRR(ranked, q.Relevant, k),
				Recall: Recall(ranked, q.Relevant, k), Got: ranked}
			sc.PerQuery = append(sc.PerQuery, qs)
			sc.NDCG += qs.NDCG
			sc.MRR += qs.MRR
			sc.Recall += qs.Recall
		}
		n := float64(len(set.Queries))
		sc.Queries = len(set.Queries)
		sc.NDCG, sc.MRR, sc.Recall = sc.NDCG/n, sc.MRR/n, sc.Recall/n
		out = append(out, sc)
	}
	return out, nil
}

func get(ctx context.Context, c *http.Client, u string) (apiResponse, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return apiResponse{}, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return apiResponse{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return apiResponse{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return apiResponse{}, fmt.Errorf("status %d: %.300s", resp.StatusCode, body)
	}
	var r apiResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return apiResponse{}, fmt.Errorf("decode response: %w", err)
	}
	return r, nil
}

// Table formats the scores as a Markdown table.
func Table(scores []Scores, k int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| system | nDCG@%d | MRR@%d | Recall@%d | queries | degraded answers |\n|---|---|---|---|---|---|\n", k, k, k)
	for _, s := range scores {
		fmt.Fprintf(&b, "| %s | %.3f | %.3f | %.3f | %d | %d |\n", s.System, s.NDCG, s.MRR, s.Recall, s.Queries, s.Degraded)
	}
	return b.String()
}
