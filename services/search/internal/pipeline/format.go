package pipeline

import (
	"encoding/json"
	"sort"
	"strings"
	"time"

	"github.com/kgsearch/kgsearch/pkg/kgapi"
	"github.com/kgsearch/kgsearch/pkg/queryparse"
	"github.com/kgsearch/kgsearch/pkg/ranker"
	"github.com/kgsearch/kgsearch/pkg/toon"
)

// format is phase 5: the response's results, related entities, suggested queries,
// explain, timings and token counts. The timings are set once, after the token counts,
// so format_ms includes the counting.
func (p *Pipeline) format(s *search) *Response {
	t := time.Now()
	resp := s.resp
	resp.Results = make([]Result, len(s.ranked))
	for i, r := range s.ranked {
		resp.Results[i] = result(s.req.Offset+i+1, r)
	}
	resp.ResultCount = len(resp.Results)
	resp.RelatedEntities = relatedEntities(s.q, s.fbEntities, s.expanded(), s.ranked)
	resp.SuggestedQueries = suggestions(s.q, resp.RelatedEntities)
	if s.req.Explain {
		resp.Explain = s.explain()
	}
	// The token counts size the response as sent, with the timings it would carry
	// were it sent now (counting cannot include its own time).
	resp.Tokens = p.countTokens(s.timed(*resp, time.Since(t)))
	s.took.format = time.Since(t)
	*resp = s.timed(*resp, s.took.format)
	p.observe("format", s.took.format)
	p.observe("total", time.Since(s.start))
	return resp
}

// timed returns r with the phase timings and the total time so far, the format phase
// having taken format.
func (s *search) timed(r Response, format time.Duration) Response {
	r.PhaseMS = PhaseMS{Parse: ms(s.took.parse), Retrieve: ms(s.took.retrieve), Expand: ms(s.took.expand),
		Rank: ms(s.took.rank), Format: ms(format)}
	r.TotalTimeMS = ms(time.Since(s.start))
	return r
}

// expanded is the kg expansion's answer; nil when the expansion did not run or failed.
func (s *search) expanded() *kgapi.ExpandResponse {
	if s.exp == nil {
		return nil
	}
	return s.exp.expanded
}

// explain reports the weights, fusion and each retriever's contribution.
func (s *search) explain() *Explain {
	req := s.req
	ex := &Explain{Weights: s.weights.String(), Fusion: string(fusionOrDefault(req.Fusion)), MMR: req.MMR,
		Candidates: s.considered, Retrievers: map[string]RetrieverInfo{}, Notes: s.notes}
	if req.MMR {
		ex.Lambda = req.Lambda
	}
	add := func(name string, o outcome) {
		if !o.ran {
			return
		}
		ri := RetrieverInfo{Hits: o.hits, TookMS: ms(o.took)}
		if o.err != nil {
			ri.Error = reason(o.err)
		}
		ex.Retrievers[name] = ri
	}
	for sig, o := range s.out {
		add(ranker.Signal(sig).String(), o)
	}
	if s.exp != nil {
		add(expansionName, s.exp.out)
	}
	if s.fb != nil {
		add(feedbackName, *s.fb)
	}
	if s.hydrateErr != nil {
		ex.Notes = append(ex.Notes, "some candidates could not be read from the store: "+reason(s.hydrateErr))
	}
	return ex
}

func result(rank int, r ranker.Result) Result {
	c := r.Candidate
	res := Result{
		Rank: rank, URL: c.URL, Title: c.Title, Preview: r.Preview, Score: round(r.Score, 4),
		ScoreBreakdown: ScoreBreakdown{Vector: round(r.Breakdown.Vector, 4), Graph: round(r.Breakdown.Graph, 4),
			BM25: round(r.Breakdown.BM25, 4), Recency: round(r.Breakdown.Recency, 4), Title: round(r.Breakdown.Title, 4)},
		Tags: nonNil(c.Tags), Source: c.Source, EntityMentions: nonNil(c.EntityMentions),
		ChunkID: c.ChunkID, Start: c.Start, End: c.End,
	}
	if t := latest(c.Published, c.Updated); !t.IsZero() {
		res.Timestamp = t.UTC().Format(time.RFC3339)
	}
	return res
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func sourceString(s uint8) string {
	var parts []string
	if s&srcVector != 0 {
		parts = append(parts, "vector")
	}
	if s&srcBM25 != 0 {
		parts = append(parts, "bm25")
	}
	if s&srcGraph != 0 {
		parts = append(parts, "graph")
	}
	if s&srcExpanded != 0 {
		parts = append(parts, "expansion")
	}
	return strings.Join(parts, "+")
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func fusionOrDefault(f ranker.Fusion) ranker.Fusion {
	if f == "" {
		return ranker.Weighted
	}
	return f
}

// relatedEntities lists entities related to the query, at most ten: first what the
// top results are about (graph feedback's entities, which several of the top pages
// share, scored by their share of the pages' entity centroid), then those reached by
// expanding the query's entities (scored by confidence). Without feedback, the
// entities the results mention most fill the list (scored by the share of results
// mentioning them).
func relatedEntities(q queryparse.Query, fb []kgapi.WeightedEntity, ex *kgapi.ExpandResponse, ranked []ranker.Result) []RelatedEntity {
	out := []RelatedEntity{}
	seen := map[string]bool{}
	for _, e := range q.Entities {
		seen[strings.ToLower(e.Name)] = true
		seen[strings.ToLower(e.ID)] = true
		seen[strings.ToLower(e.Text)] = true
	}
	add := func(name, id, typ string, score float64, source string) bool {
		k := strings.ToLower(name)
		if k == "" || seen[k] || (id != "" && seen[strings.ToLower(id)]) || !finite(score) {
			return len(out) < 10
		}
		seen[k] = true
		out = append(out, RelatedEntity{Name: name, Type: typ, Score: round(score, 3), Source: source})
		return len(out) < 10
	}
	for _, e := range fb {
		if !add(e.Name, e.ID, e.Type, e.Weight, "results") {
			return out
		}
	}
	if ex != nil {
		for _, r := range ex.Related {
			if !add(r.Name, r.ID, r.Type, r.Confidence, "expansion") {
				return out
			}
		}
	}
	if len(fb) > 0 || len(ranked) == 0 {
		return out
	}
	count := map[string]int{}
	var names []string
	for _, r := range ranked {
		for _, m := range r.Candidate.EntityMentions {
			if seen[strings.ToLower(m)] {
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
		if !add(n, "", "", float64(count[n])/float64(len(ranked)), "results") {
			break
		}
	}
	return out
}

// suggestions builds up to three follow-up queries a person could type next: the
// names of the entities the top results are about (graph feedback), the narrower
// query that names the thing the answer is about ("parse command line arguments" →
// "argparse"). Never the query with a word appended, and not the query with its entity
// swapped for an expansion neighbour either: judged on the dev sets, such rewrites
// read garbled ("start a background thread.join"; 1 useful of 23,
// eval/suggest/README.md). A query whose results share no entity gets no suggestion:
// a short list beats noise.
func suggestions(q queryparse.Query, related []RelatedEntity) []string {
	out := []string{}
	query := strings.ToLower(q.Normalized)
	seen := map[string]bool{query: true}
	for _, r := range related {
		name := strings.ToLower(strings.TrimSpace(r.Name))
		if r.Source != "results" || seen[name] || !suggestible(name) || strings.Contains(query, name) {
			continue
		}
		seen[name] = true
		out = append(out, name)
		if len(out) == 3 {
			break
		}
	}
	return out
}

// suggestible reports whether an entity name reads as something to search for: a
// word with letters, not a bare number or version, and not a fragment of a sentence.
func suggestible(name string) bool {
	if len(name) < 2 || len(name) > 60 || !hasLetter(name) || len(strings.Fields(name)) > 4 {
		return false
	}
	return strings.Trim(name, "0123456789.-_ ") != ""
}

func hasLetter(s string) bool {
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r > 127 {
			return true
		}
	}
	return false
}

// countTokens returns the cl100k token counts of r as JSON and as TOON, both counted
// with the tokens field zero; zero when no counter is configured.
func (p *Pipeline) countTokens(r Response) Tokens {
	if p.opt.Tokens == nil {
		return Tokens{}
	}
	r.Tokens = Tokens{}
	js, err := json.Marshal(&r)
	if err != nil {
		return Tokens{}
	}
	tn, err := toon.Marshal(r.ToTOON())
	if err != nil {
		return Tokens{}
	}
	j, t := p.opt.Tokens(js), p.opt.Tokens(tn)
	tk := Tokens{JSON: j, TOON: t}
	if j > 0 {
		tk.SavedPct = round(100*float64(j-t)/float64(j), 1)
	}
	return tk
}
