package ranker

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Fusion selects how the five normalised signals become one score.
type Fusion string

const (
	// Weighted is the weighted sum of the normalised signals (the default).
	Weighted Fusion = "weighted"
	// RRF is weighted reciprocal rank fusion over the per-signal rankings.
	RRF Fusion = "rrf"
)

// ParseFusion reads "weighted" or "rrf" (case-insensitive); "" means Weighted.
func ParseFusion(s string) (Fusion, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "weighted":
		return Weighted, nil
	case "rrf":
		return RRF, nil
	}
	return "", fmt.Errorf("unknown fusion %q (want weighted or rrf)", s)
}

// Normalization selects how the BM25 and graph scores (and, with MinMax, the vector
// similarity) are mapped to [0, 1] per query. See doc.go for the reasoning.
type Normalization int

const (
	// VectorMinMax (the default) maps the vector similarity to (v-min)/(max-min) over
	// the candidates that have it and divides BM25 and graph scores by the query's
	// maximum.
	VectorMinMax Normalization = iota
	// MaxScale divides BM25 and graph scores by the query's maximum (a min-max whose
	// minimum is the theoretical 0) and uses the clamped cosine similarity as is.
	MaxScale
	// MinMax maps every retrieval signal, vector included, to (v-min)/(max-min) over
	// the candidates that have it.
	MinMax
)

// Defaults used when the corresponding Options field is zero.
const (
	DefaultRRFK           = 60.0
	DefaultExpandedFactor = 0.7
	// UnknownRecency is the recency signal of a candidate without any date: the value
	// of the oldest tier, so an undated page never gains on a dated one.
	UnknownRecency = 0.2
	// HeadingFactor scales a title-signal match found only in the chunk's headings.
	HeadingFactor = 0.5
)

// Options configures a Ranker. The zero value is usable: time.Now, k=60, factor 0.7,
// VectorMinMax normalisation, no previews.
type Options struct {
	Now            func() time.Time // clock for recency; time.Now when nil
	RRFK           float64          // RRF constant k; 60 when 0
	ExpandedFactor float64          // graph factor for expansion-only chunks, in (0,1]; 0.7 when 0
	Normalization  Normalization
	PreviewChars   int // maximum preview length in characters; 0 disables previews
}

// Ranker fuses retriever candidates into one ranked list. It is safe for concurrent use.
type Ranker struct {
	now            func() time.Time
	k              float64
	expandedFactor float64
	norm           Normalization
	previewChars   int
}

// New returns a Ranker, or an error naming the invalid option.
func New(opts Options) (*Ranker, error) {
	r := &Ranker{now: opts.Now, k: opts.RRFK, expandedFactor: opts.ExpandedFactor,
		norm: opts.Normalization, previewChars: opts.PreviewChars}
	if r.now == nil {
		r.now = time.Now
	}
	if r.k == 0 {
		r.k = DefaultRRFK
	}
	if r.expandedFactor == 0 {
		r.expandedFactor = DefaultExpandedFactor
	}
	switch {
	case math.IsNaN(r.k) || math.IsInf(r.k, 0) || r.k < 0:
		return nil, fmt.Errorf("ranker options: RRFK must be a finite number >= 0, got %g", opts.RRFK)
	case math.IsNaN(r.expandedFactor) || r.expandedFactor < 0 || r.expandedFactor > 1:
		return nil, fmt.Errorf("ranker options: ExpandedFactor must be in (0,1], got %g", opts.ExpandedFactor)
	case r.norm != VectorMinMax && r.norm != MaxScale && r.norm != MinMax:
		return nil, fmt.Errorf("ranker options: unknown Normalization %d", r.norm)
	case r.previewChars < 0:
		return nil, fmt.Errorf("ranker options: PreviewChars must be >= 0, got %d", r.previewChars)
	}
	return r, nil
}

// Query is what the ranker needs to know about the user's query.
type Query struct {
	Text      string    // the (normalised) query text; terms are derived from it
	Entities  []string  // entity surface forms found in the query (used by title and previews)
	Embedding []float32 // optional; fills missing vector similarities from candidate embeddings
}

// Request is one ranking call.
type Request struct {
	Query   Query
	Weights Weights // all zero means DefaultWeights; normalised to sum 1
	Fusion  Fusion  // "" means Weighted
	MMR     bool    // re-order with maximal marginal relevance
	Lambda  float64 // MMR trade-off in [0,1]: 1 = relevance only, 0 = diversity only
	Limit   int     // number of results to return after dedup; 0 = all
	// HistoryFactor, in [0,1], multiplies the final score of the candidates marked
	// History; 0 leaves them as they are (the same as 1).
	HistoryFactor float64
	// SourceFactor and IndexFactor, in [0,1], multiply the final score of the
	// candidates marked SourceListing and GeneratedIndex; 0 leaves them as they are
	// (the same as 1).
	SourceFactor, IndexFactor float64
}

// pageFactor is the product of the request's factors that apply to c: 1 when none does.
func (req Request) pageFactor(c *Candidate) float64 {
	f := 1.0
	apply := func(x float64) {
		if x > 0 && x < 1 {
			f *= x
		}
	}
	if c.History {
		apply(req.HistoryFactor)
	}
	switch c.Generated {
	case SourceListing:
		apply(req.SourceFactor)
	case GeneratedIndex:
		apply(req.IndexFactor)
	}
	return f
}

// ErrBadRequest is wrapped by every error Rank returns for invalid request fields.
var ErrBadRequest = errors.New("invalid ranking request")

// Rank scores the candidates, keeps the best chunk of each document, optionally
// re-orders with MMR and returns at most req.Limit results with rank, score breakdown
// and preview. The candidates slice is not modified.
func (r *Ranker) Rank(req Request, cands []Candidate) ([]Result, error) {
	w := req.Weights
	if w == (Weights{}) {
		w = DefaultWeights()
	}
	w, err := w.Normalize()
	if err != nil {
		return nil, fmt.Errorf("%w: weights: %w", ErrBadRequest, err)
	}
	fusion, err := ParseFusion(string(req.Fusion))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	if req.MMR && (math.IsNaN(req.Lambda) || req.Lambda < 0 || req.Lambda > 1) {
		return nil, fmt.Errorf("%w: mmr lambda must be in [0,1], got %g", ErrBadRequest, req.Lambda)
	}
	if req.Limit < 0 {
		return nil, fmt.Errorf("%w: limit must be >= 0, got %d", ErrBadRequest, req.Limit)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"history", req.HistoryFactor}, {"source", req.SourceFactor}, {"index", req.IndexFactor}} {
		if math.IsNaN(f.v) || f.v < 0 || f.v > 1 {
			return nil, fmt.Errorf("%w: %s factor must be in [0,1], got %g", ErrBadRequest, f.name, f.v)
		}
	}
	if len(cands) == 0 {
		return []Result{}, nil
	}

	bd, present := r.signals(req.Query, cands)
	r.fuse(fusion, w, bd, present, nil)

	// The best chunk of each document (by its own fused score) represents it: its text,
	// offsets and preview are returned.
	order := make([]int, len(cands))
	for i := range order {
		order[i] = i
	}
	byFinal := func(scores []Breakdown) func(a, b int) int {
		return func(a, b int) int {
			if c := cmp.Compare(scores[b].Final, scores[a].Final); c != 0 {
				return c
			}
			return strings.Compare(cands[a].ChunkID, cands[b].ChunkID)
		}
	}
	slices.SortFunc(order, byFinal(bd))
	order = dedup(order, cands)

	// The document is scored on each signal's maximum over its chunks (per-signal
	// MaxP), fused again, so a page whose best vector chunk is not its best BM25 chunk
	// keeps both strengths.
	doc := aggregate(order, cands, bd, present)
	r.fuse(fusion, w, doc.bd, doc.present, order)
	for _, i := range order {
		if f := req.pageFactor(&cands[i]); f != 1 {
			doc.bd[i].Final *= f
		}
	}
	slices.SortFunc(order, byFinal(doc.bd))
	bd = doc.bd

	limit := req.Limit
	if limit == 0 || limit > len(order) {
		limit = len(order)
	}
	if req.MMR {
		order = mmr(order, cands, bd, req.Lambda, limit)
	}
	order = order[:limit]

	var want wantSet
	if r.previewChars > 0 {
		want = newWantSet(append(Terms(req.Query.Text), req.Query.Entities...))
	}
	out := make([]Result, len(order))
	for pos, i := range order {
		out[pos] = Result{Rank: pos + 1, Candidate: cands[i], Score: bd[i].Final, Breakdown: bd[i]}
		if r.previewChars > 0 {
			out[pos].Preview, out[pos].PreviewStart, out[pos].PreviewEnd = want.preview(cands[i].Text, r.previewChars)
		}
	}
	return out, nil
}

// presence is a bit set of the signals a candidate takes part in (bit s for Signal s).
type presence uint8

func (p presence) has(s Signal) bool { return p&(1<<s) != 0 }

// signals computes the five normalised signals of every candidate and which signals
// each candidate takes part in for RRF: the retrieval signals when the retriever found
// it (or, for vector, its similarity could be computed), recency when it has a date,
// title when the title signal is above 0.
func (r *Ranker) signals(q Query, cands []Candidate) ([]Breakdown, []presence) {
	n := len(cands)
	bd := make([]Breakdown, n)
	present := make([]presence, n)

	// Raw values and presence per retrieval signal.
	vec := make([]float64, n)
	hasVec := make([]bool, n)
	var qnorm float64
	if len(q.Embedding) > 0 {
		qnorm = norm(q.Embedding)
	}
	for i := range cands {
		c := &cands[i]
		switch {
		case c.HasVector:
			vec[i], hasVec[i] = c.VectorSimilarity, true
		case qnorm > 0 && len(c.Embedding) == len(q.Embedding):
			if d, cn := dotAndNorm(q.Embedding, c.Embedding); cn > 0 {
				vec[i], hasVec[i] = d/(qnorm*cn), true
			}
		}
	}
	graph := make([]float64, n)
	hasGraph := make([]bool, n)
	bm := make([]float64, n)
	hasBM := make([]bool, n)
	for i := range cands {
		graph[i], hasGraph[i] = cands[i].GraphScore, cands[i].HasGraph && finite(cands[i].GraphScore)
		bm[i], hasBM[i] = cands[i].BM25Score, cands[i].HasBM25 && finite(cands[i].BM25Score)
		hasVec[i] = hasVec[i] && finite(vec[i])
	}
	// The vector retriever's own hits set the vector scale; similarities computed here
	// for other retrievers' candidates are mapped on it (and clamped).
	fromRetriever := make([]bool, n)
	for i := range cands {
		fromRetriever[i] = hasVec[i] && cands[i].HasVector
	}

	var nv, ng, nb []float64
	switch r.norm {
	case MinMax:
		nv = minMax(vec, hasVec)
		ng = minMax(graph, hasGraph)
		nb = minMax(bm, hasBM)
	case MaxScale:
		nv = make([]float64, n)
		for i := range vec {
			if hasVec[i] {
				nv[i] = Clamp01(vec[i])
			}
		}
		ng = maxScale(graph, hasGraph)
		nb = maxScale(bm, hasBM)
	default:
		nv = minMaxOver(vec, hasVec, fromRetriever)
		ng = make([]float64, n)
		for i := range graph {
			if hasGraph[i] {
				ng[i] = Clamp01(graph[i])
			}
		}
		nb = maxScale(bm, hasBM)
	}

	now := r.now()
	tq := newTitleQuery(q, n)
	for i := range cands {
		c := &cands[i]
		g := ng[i]
		if c.GraphExpandedOnly {
			g *= r.expandedFactor
		}
		bd[i] = Breakdown{
			Vector:  nv[i],
			Graph:   g,
			BM25:    nb[i],
			Recency: RecencyScore(c.date(), now),
			Title:   tq.score(c.Title, c.Headings),
		}
		var p presence
		if hasVec[i] {
			p |= 1 << Vector
		}
		if hasGraph[i] {
			p |= 1 << Graph
		}
		if hasBM[i] {
			p |= 1 << BM25
		}
		if !c.date().IsZero() {
			p |= 1 << Recency
		}
		if bd[i].Title > 0 {
			p |= 1 << Title
		}
		present[i] = p
	}
	return bd, present
}

// fuse sets Final of the candidates listed in idx (every candidate when idx is nil)
// with the chosen fusion.
func (r *Ranker) fuse(f Fusion, w Weights, bd []Breakdown, present []presence, idx []int) {
	if f == RRF {
		r.fuseRRF(w, bd, present)
		return
	}
	if idx == nil {
		for i := range bd {
			bd[i].Final = weightedSum(w, bd[i])
		}
		return
	}
	for _, i := range idx {
		bd[i].Final = weightedSum(w, bd[i])
	}
}

// docSignals holds, at the index of each document's representative chunk, the
// maximum of every signal over the document's chunks and the union of their
// presence; every other index is zero (takes part in no signal).
type docSignals struct {
	bd      []Breakdown
	present []presence
}

// aggregate computes the per-document maxima for the representatives in reps.
func aggregate(reps []int, cands []Candidate, bd []Breakdown, present []presence) docSignals {
	out := docSignals{bd: make([]Breakdown, len(cands)), present: make([]presence, len(cands))}
	rep := make(map[docKey]int, len(reps))
	for _, i := range reps {
		rep[cands[i].dedupKey()] = i
	}
	for i := range cands {
		j, ok := rep[cands[i].dedupKey()]
		if !ok {
			continue
		}
		a, b := &out.bd[j], bd[i]
		a.Vector = max(a.Vector, b.Vector)
		a.Graph = max(a.Graph, b.Graph)
		a.BM25 = max(a.BM25, b.BM25)
		a.Recency = max(a.Recency, b.Recency)
		a.Title = max(a.Title, b.Title)
		out.present[j] |= present[i]
	}
	return out
}

// weightedSum is Σ w_s · signal_s.
func weightedSum(w Weights, b Breakdown) float64 {
	return w[Vector]*b.Vector + w[Graph]*b.Graph + w[BM25]*b.BM25 + w[Recency]*b.Recency + w[Title]*b.Title
}

// fuseRRF sets Final to the weighted reciprocal rank fusion score
// (k+1) · Σ_s w_s / (k + rank_s), where rank_s is the 1-based competition rank of the
// candidate in the ranking by signal s (equal values share a rank) and signals the
// candidate does not take part in (see signals) contribute nothing. The (k+1) factor
// makes a candidate ranked first by every weighted signal score exactly 1.
func (r *Ranker) fuseRRF(w Weights, bd []Breakdown, present []presence) {
	idx := make([]int, 0, len(bd))
	for _, s := range Signals {
		if w[s] == 0 {
			continue
		}
		idx = idx[:0]
		for i := range bd {
			if present[i].has(s) {
				idx = append(idx, i)
			}
		}
		slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(bd[b].Get(s), bd[a].Get(s)) })
		rank := 0
		for pos, i := range idx {
			if pos == 0 || bd[i].Get(s) != bd[idx[pos-1]].Get(s) {
				rank = pos + 1
			}
			bd[i].Final += w[s] * (r.k + 1) / (r.k + float64(rank))
		}
	}
}

// dedup keeps the first (best) chunk of each document in the sorted order.
func dedup(order []int, cands []Candidate) []int {
	seen := make(map[docKey]struct{}, len(order))
	out := order[:0]
	for _, i := range order {
		k := cands[i].dedupKey()
		if _, dup := seen[k]; dup {
			continue
		}
		seen[k] = struct{}{}
		out = append(out, i)
	}
	return out
}

// maxScale maps present values to v/max, clamped to [0,1]; absent values and every
// value when max <= 0 become 0.
func maxScale(v []float64, has []bool) []float64 {
	out := make([]float64, len(v))
	mx := math.Inf(-1)
	for i, x := range v {
		if has[i] && x > mx {
			mx = x
		}
	}
	if mx <= 0 {
		return out
	}
	for i, x := range v {
		if has[i] {
			out[i] = Clamp01(x / mx)
		}
	}
	return out
}

// minMax maps present values to (v-min)/(max-min). When all present values are equal
// (including a single candidate) they become 1 if positive, else 0: being found by the
// retriever is the only evidence there is.
func minMax(v []float64, has []bool) []float64 {
	out := make([]float64, len(v))
	mn, mx := math.Inf(1), math.Inf(-1)
	for i, x := range v {
		if !has[i] {
			continue
		}
		mn = min(mn, x)
		mx = max(mx, x)
	}
	if math.IsInf(mx, -1) {
		return out
	}
	for i, x := range v {
		if !has[i] {
			continue
		}
		switch {
		case mx > mn:
			out[i] = (x - mn) / (mx - mn)
		case mx > 0:
			out[i] = 1
		}
	}
	return out
}

// minMaxOver maps the present values to (v-min)/(max-min) clamped to [0,1], where min
// and max are taken over the reference values (ref), or over all present values when
// no value is a reference. Equal extremes behave as in minMax.
func minMaxOver(v []float64, has, ref []bool) []float64 {
	if !slices.Contains(ref, true) {
		return minMax(v, has)
	}
	mn, mx := math.Inf(1), math.Inf(-1)
	for i, x := range v {
		if ref[i] {
			mn, mx = min(mn, x), max(mx, x)
		}
	}
	out := make([]float64, len(v))
	for i, x := range v {
		if !has[i] {
			continue
		}
		switch {
		case mx > mn:
			out[i] = Clamp01((x - mn) / (mx - mn))
		case mx > 0 && x >= mx:
			out[i] = 1
		}
	}
	return out
}

// Clamp01 clamps x to [0,1], NaN to 0: a score or a confidence from outside
// made safe to weigh (kg's graph scores and ingested confidences use it too).
func Clamp01(x float64) float64 {
	switch {
	case math.IsNaN(x) || x < 0:
		return 0
	case x > 1:
		return 1
	}
	return x
}

// finite reports whether x is neither NaN nor infinite; non-finite raw scores are
// treated as missing.
func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
