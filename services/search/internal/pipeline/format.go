package pipeline

import (
	"encoding/json"
	"strings"
	"time"

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
	pages := topPages(s.ranked, s.pageChunks(), s.qvec)
	var considered []RelatedCandidate
	resp.RelatedEntities, considered = relatedWithin(p.opt.RelatedMinConfidence, s.q, s.fbEntities, s.ranked, pages, p.scopeSize(s.req))
	resp.SuggestedQueries = suggestions(s.q, confident(resp.RelatedEntities, considered, p.opt.SuggestMinConfidence), pages)
	if s.req.Explain {
		resp.Explain = s.explain()
		if len(considered) > 0 {
			resp.Explain.Related = considered
			resp.Explain.RelatedFeatures = featureNames[:]
		}
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
