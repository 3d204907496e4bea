package pipeline

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kgsearch/kgsearch/pkg/ranker"
)

// rank is phase 4: the weights for the signals available, the candidates that pass
// the filters, pkg/ranker, and the requested page of its results.
func (p *Pipeline) rank(s *search) error {
	t := time.Now()
	if err := s.renormalize(); err != nil {
		return err
	}
	list := p.rankable(s)
	s.considered = len(list)
	ents := make([]string, 0, len(s.q.Entities))
	for _, e := range s.q.Entities {
		ents = append(ents, e.Text)
	}
	req, history, source, index := s.req, s.factors.history, s.factors.source, s.factors.index
	ranked, err := p.rk.Rank(ranker.Request{
		Query:   ranker.Query{Text: s.q.Normalized, Entities: ents, Embedding: s.qvec},
		Weights: s.weights, Fusion: req.Fusion, MMR: req.MMR, Lambda: req.Lambda, Limit: req.Offset + req.K,
		HistoryFactor: history, SourceFactor: source, IndexFactor: index,
	}, list)
	if err != nil {
		if errors.Is(err, ranker.ErrBadRequest) {
			return &FieldError{Field: "weights", Reason: err.Error()}
		}
		return fmt.Errorf("rank: %w", err)
	}
	if req.Offset < len(ranked) {
		s.ranked = ranked[req.Offset:]
	}
	if slices.ContainsFunc(s.ranked, func(r ranker.Result) bool { return r.Candidate.History }) {
		switch {
		case history < 1:
			s.notes = append(s.notes, fmt.Sprintf("version-history pages (release notes, changelogs, what's new) rank lower: their score × %g; history=keep leaves them as they are", history))
		case !req.KeepHistory:
			s.notes = append(s.notes, "the query asks about versions or changes, so version-history pages keep their full score")
		}
	}
	if slices.ContainsFunc(s.ranked, func(r ranker.Result) bool { return r.Candidate.Generated == ranker.SourceListing }) {
		switch {
		case source < 1:
			s.notes = append(s.notes, fmt.Sprintf("source listings rank lower: their score × %g; generated=keep leaves them as they are", source))
		case !req.KeepGenerated:
			s.notes = append(s.notes, "the query asks for source code, so source listings keep their full score")
		}
	}
	if index < 1 && slices.ContainsFunc(s.ranked, func(r ranker.Result) bool { return r.Candidate.Generated == ranker.GeneratedIndex }) {
		s.notes = append(s.notes, fmt.Sprintf("generated indexes and tables of contents rank lower: their score × %g; generated=keep leaves them as they are", index))
	}
	s.took.rank = time.Since(t)
	p.observe("rank", s.took.rank)
	return nil
}

// renormalize sets s.weights: the request's weights (or the defaults) without the
// unavailable signals, and without the graph signal when the query has no entity.
func (s *search) renormalize() error {
	weights := s.requestedWeights()
	off := s.unavailable
	if len(s.keys) == 0 && !s.fbApplied && !slices.Contains(off, ranker.Graph) {
		// No query entity: the graph signal is 0 for every candidate, so its weight
		// would only shrink every score. Not degraded, just not applicable.
		off = append(off, ranker.Graph)
		s.notes = append(s.notes, "the query has no entities, so the graph signal does not apply")
	}
	w, err := weights.Renormalize(off...)
	if err != nil {
		w, err = ranker.DefaultWeights().Renormalize(off...)
		if err != nil {
			return fmt.Errorf("renormalize default weights: %w", err)
		}
		s.notes = append(s.notes, "every weighted signal was unavailable; the default weights were used for the rest")
	}
	s.weights = w
	return nil
}

// rankable returns the hydrated candidates that pass the request's filters, in
// candidate order.
func (p *Pipeline) rankable(s *search) []ranker.Candidate {
	list := make([]ranker.Candidate, 0, len(s.order))
	for _, id := range s.order {
		c := s.cands[id]
		if !c.hydrated || !p.matchesFilter(s.req, c) {
			continue
		}
		c.c.Source = sourceString(c.sources)
		c.c.EntityMentions = c.mentions
		list = append(list, c.c)
	}
	return list
}

// matchesFilter applies the request's filters to every candidate (the vector and BM25
// retrievers filter already; the graph retriever does not).
func (p *Pipeline) matchesFilter(req Request, c *cand) bool {
	if req.Domain != "" && c.docKnown && !strings.EqualFold(c.domain, req.Domain) {
		return false
	}
	if req.Domain != "" && !c.docKnown && c.sources&(srcVector|srcBM25) == 0 {
		return false
	}
	for _, t := range req.Tags {
		if !slices.ContainsFunc(c.c.Tags, func(x string) bool { return strings.EqualFold(x, t) }) {
			if c.docKnown || c.sources&(srcVector|srcBM25) == 0 {
				return false
			}
		}
	}
	if !req.PublishedAfter.IsZero() || !req.PublishedBefore.IsZero() {
		pub := c.c.Published
		if pub.IsZero() {
			return false
		}
		if !req.PublishedAfter.IsZero() && pub.Before(req.PublishedAfter) {
			return false
		}
		if !req.PublishedBefore.IsZero() && !pub.Before(req.PublishedBefore) {
			return false
		}
	}
	return true
}

// pageFactors are the factors this search puts on version-history pages, source
// listings and generated indexes (ranker.Request's HistoryFactor, SourceFactor and
// IndexFactor): the defaults, or 1 where the request keeps those pages (history=keep,
// generated=keep) or the query asks for them (versions or changes; source code).
// Computed once per search, at parse: both rankings (the feedback's first pass and
// the final one) use them.
type pageFactors struct{ history, source, index float64 }

func pageFactorsFor(req Request, normalized string) pageFactors {
	f := pageFactors{ranker.DefaultHistoryFactor, ranker.DefaultGeneratedFactor, ranker.DefaultGeneratedFactor}
	if req.KeepHistory || ranker.AsksAboutHistory(normalized) {
		f.history = 1
	}
	if req.KeepGenerated || ranker.AsksForSource(normalized) {
		f.source = 1
	}
	if req.KeepGenerated {
		f.index = 1
	}
	return f
}
