package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/kgsearch/kgsearch/pkg/apiclient"
	"github.com/kgsearch/kgsearch/pkg/ranker"
)

// Ablations are the full pipeline with one part switched off in turn, everything
// else at the service's defaults (def, the weights the service reports for a
// default request): graph retrieval (graph weight 0), the graph expansion
// (expand=false), the whole graph (both), and each of the BM25, vector, title and
// recency signals (weight 0; the rest keep their default ratios, the service
// renormalises them). A signal whose default weight is already 0 (the title since
// the ninth session) has nothing to switch off: it is switched on instead, as
// "with-<signal>", at a tenth of the total with the rest scaled to nine tenths (for
// the title, the design's weights). keep-history leaves release notes and changelogs
// at their full score (history=keep); keep-generated does the same for source listings
// and generated indexes (generated=keep).
func Ablations(def ranker.Weights) []Method {
	without := func(s ranker.Signal) (string, bool) {
		if def.Get(s) == 0 {
			return "", false
		}
		w := def
		w[s] = 0
		str := w.String()
		return str, str != ""
	}
	var out []Method
	add := func(name string, p url.Values) {
		out = append(out, Method{Name: name, Params: p, Kind: KindAblation})
	}
	if w, ok := without(ranker.Graph); ok {
		add("no-graph", url.Values{"weights": {w}})
	}
	add("no-expand", url.Values{"expand": {"false"}})
	if w, ok := without(ranker.Graph); ok {
		add("graph-off", url.Values{"weights": {w}, "expand": {"false"}})
	}
	for _, s := range []ranker.Signal{ranker.BM25, ranker.Vector, ranker.Title, ranker.Recency} {
		if w, ok := without(s); ok {
			add("no-"+s.String(), url.Values{"weights": {w}})
		} else if def.Get(s) == 0 {
			add("with-"+s.String(), url.Values{"weights": {with(def, s)}})
		}
	}
	// Version-history pages at their full score (ranker.DefaultHistoryFactor off).
	add("keep-history", url.Values{"history": {"keep"}})
	// Source listings and generated indexes at their full score (ranker.DefaultGeneratedFactor off).
	add("keep-generated", url.Values{"generated": {"keep"}})
	return out
}

// with is def with s switched on at a tenth of the total, the other weights scaled
// to nine tenths of it.
func with(def ranker.Weights, s ranker.Signal) string {
	w, err := def.Normalize()
	if err != nil {
		return ranker.Weights{}.String()
	}
	for _, x := range ranker.Signals {
		w[x] *= 0.9
	}
	w[s] = 0.1
	return w.String()
}

// DefaultWeights reads the service's default weights from the explanation of its
// answers to default requests. The service drops a signal that does not apply to a
// query (the graph when the query names no entity, a retriever that failed) from the
// weights it reports, so the queries are tried in turn and the answer naming the
// most signals is taken, stopping at the first that names all five or after
// maxProbes queries.
func DefaultWeights(ctx context.Context, s Searcher, queries []Query, tags []string) (ranker.Weights, error) {
	const maxProbes = 20
	req := apiclient.SearchRequest{K: 1, Tags: tags, Explain: true}
	var best ranker.Weights
	bestN := 0
	for i, q := range queries {
		if i == maxProbes || bestN == len(ranker.Signals) {
			break
		}
		req.Q = q.Query
		resp, err := s.SearchJSON(ctx, req)
		if err != nil {
			return ranker.Weights{}, fmt.Errorf("read the service's default weights: %w", err)
		}
		if resp.Explain == nil || resp.Explain.Weights == "" || len(resp.Degraded) > 0 {
			continue
		}
		w, err := ranker.ParseWeights(resp.Explain.Weights)
		if err != nil {
			return ranker.Weights{}, fmt.Errorf("read the service's default weights %q: %w", resp.Explain.Weights, err)
		}
		n := 0
		for _, sig := range ranker.Signals {
			if w.Get(sig) > 0 {
				n++
			}
		}
		if n > bestN {
			best, bestN = w, n
		}
	}
	if bestN == 0 {
		return ranker.Weights{}, errors.New("read the service's default weights: no answer had explain.weights")
	}
	return best, nil
}
