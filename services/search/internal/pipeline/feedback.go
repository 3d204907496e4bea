package pipeline

import (
	"context"
	"time"

	"github.com/kgsearch/kgsearch/pkg/kgapi"
	"github.com/kgsearch/kgsearch/pkg/ranker"
)

// feedbackName names graph feedback in metrics, degraded and explain.
const feedbackName = "feedback"

// Graph feedback limits.
const (
	// feedbackSeeds first-pass pages seed the feedback, each counting once in the
	// scores (near-copies sharing one seed's weight; kg's related entities come from
	// the five heaviest). Eight was chosen across both dev corpora; ADR 0006 has the
	// measurements.
	feedbackSeeds      = 8
	feedbackEntities   = 40   // entities the seeds are about: the candidates for related entities
	feedbackCandidates = 2000 // documents scored (kg's limit)
)

// graphFeedback is the second half of phase 3: expansion seeded by the results
// rather than by the query's entities. A first ranking without the graph signal picks
// the top pages; kg sums their entity profiles, each page once, into a centroid and
// scores every candidate page by how close its own profile is (pkg/graph/profile). A
// candidate's graph signal becomes the larger of its direct match score and its
// feedback score scaled so that the closest page has 1. It needs no query entity, so the graph signal
// applies to every query. It runs when expansion is asked for, the graph weight is
// not 0 and the graph retriever did not fail; a failure leaves the direct scores and
// is reported as degraded "feedback".
func (p *Pipeline) graphFeedback(ctx context.Context, s *search) {
	if p.kg == nil || !s.req.Expand || s.requestedWeights().Get(ranker.Graph) == 0 || s.out[ranker.Graph].err != nil {
		return
	}
	t := time.Now()
	defer func() { s.took.expand += time.Since(t) }()
	list := p.rankable(s)
	seeds, err := p.feedbackSeeds(s, list)
	if err != nil || len(seeds) == 0 {
		return
	}
	docs := make([]string, 0, len(list))
	seen := map[string]bool{}
	for _, c := range list {
		if c.DocumentID != "" && !seen[c.DocumentID] && len(docs) < feedbackCandidates {
			seen[c.DocumentID] = true
			docs = append(docs, c.DocumentID)
		}
	}
	var res *kgapi.FeedbackResponse
	o := p.timed(ctx, feedbackName, p.opt.GraphTimeout, func(ctx context.Context) (int, error) {
		var err error
		res, err = p.kg.Feedback(ctx, kgapi.FeedbackRequest{Seeds: seeds, Candidates: docs, Entities: feedbackEntities})
		if err != nil {
			return 0, err
		}
		return len(res.Scores), nil
	})
	s.fb = &o
	if o.err != nil {
		s.resp.Degraded = append(s.resp.Degraded, feedbackName)
		p.degradedInc(feedbackName)
		return
	}
	s.fbEntities = res.Entities
	top := 0.0
	for _, d := range res.Scores {
		if finite(d.Score) && d.Score > top {
			top = d.Score
		}
	}
	if top <= 0 {
		return
	}
	byDoc := make(map[string]float64, len(res.Scores))
	for _, d := range res.Scores {
		if finite(d.Score) && d.Score > 0 {
			byDoc[d.DocumentID] = d.Score / top
		}
	}
	for _, id := range s.order {
		c := s.cands[id]
		if g, ok := byDoc[c.c.DocumentID]; ok && (!c.c.HasGraph || g > c.c.GraphScore) {
			c.c.GraphScore, c.c.HasGraph, c.c.GraphExpandedOnly = g, true, false
		}
	}
	s.fbApplied = true
}

// feedbackSeeds ranks the candidates without the graph signal and returns the top
// pages with their first-pass scores.
func (p *Pipeline) feedbackSeeds(s *search, list []ranker.Candidate) ([]kgapi.FeedbackSeed, error) {
	w, err := s.requestedWeights().Renormalize(append([]ranker.Signal{ranker.Graph}, s.unavailable...)...)
	if err != nil {
		return nil, err // no other signal: nothing to seed from
	}
	ranked, err := p.rk.Rank(ranker.Request{
		Query:   ranker.Query{Text: s.q.Normalized, Embedding: s.qvec},
		Weights: w, Fusion: s.req.Fusion, Limit: feedbackSeeds, HistoryFactor: s.factors.history,
		SourceFactor: s.factors.source, IndexFactor: s.factors.index,
	}, list)
	if err != nil {
		return nil, err
	}
	seeds := make([]kgapi.FeedbackSeed, 0, len(ranked))
	for _, r := range ranked {
		if r.Candidate.DocumentID != "" && finite(r.Score) && r.Score > 0 {
			seeds = append(seeds, kgapi.FeedbackSeed{DocumentID: r.Candidate.DocumentID, Weight: r.Score})
		}
	}
	return seeds, nil
}

// requestedWeights are the request's weights, or the defaults.
func (s *search) requestedWeights() ranker.Weights {
	if s.req.Weights == (ranker.Weights{}) {
		return ranker.DefaultWeights()
	}
	return s.req.Weights
}
