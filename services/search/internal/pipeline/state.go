package pipeline

import (
	"strconv"
	"time"

	"github.com/kgsearch/kgsearch/pkg/kgapi"
	"github.com/kgsearch/kgsearch/pkg/queryparse"
	"github.com/kgsearch/kgsearch/pkg/ranker"
	"github.com/kgsearch/kgsearch/pkg/store"
	"github.com/kgsearch/kgsearch/services/search/internal/bm25"
)

// search is one request's state as it passes through the phases. Each phase reads
// what the earlier ones wrote and adds its own part.
type search struct {
	req   Request
	start time.Time
	took  timings

	// parse
	q       queryparse.Query
	keys    []string // the kg keys of the query entities
	resp    *Response
	factors pageFactors // on version-history and generated pages, for both rankings

	// retrieve: one outcome per retriever, indexed by the signal it feeds, and what
	// each retriever returned (written by its own goroutine, read after they all end)
	out     [len(ranker.Signals)]outcome
	vecHits []store.VectorHit
	qvec    []float32
	bmHits  []bm25.Hit
	match   *kgapi.MatchResponse

	// expand
	exp        *expansion // nil when the expansion did not run
	fb         *outcome   // graph feedback; nil when it did not run
	fbEntities []kgapi.WeightedEntity
	fbApplied  bool // feedback scores are in the candidates' graph signal

	// the candidates, filled by retrieve and expand, completed by hydrate
	cands      map[string]*cand
	order      []string // insertion order, for deterministic processing
	hydrateErr error

	// checkAvailable
	unavailable []ranker.Signal

	// rank
	weights    ranker.Weights
	notes      []string
	considered int // candidates given to the ranker
	ranked     []ranker.Result
}

// timings are the phase durations reported in phase_ms.
type timings struct {
	parse, retrieve, expand, rank, format time.Duration
}

// cand is a candidate chunk being assembled from the retrievers.
type cand struct {
	id       int64
	c        ranker.Candidate
	hydrated bool // text, offsets and embedding known
	docKnown bool
	domain   string
	sources  uint8
	mentions []string
}

// The retrievers that found a candidate (cand.sources).
const (
	srcVector uint8 = 1 << iota
	srcGraph
	srcBM25
	srcExpanded
)

// outcome is what one retriever (or the expansion) produced.
type outcome struct {
	took time.Duration
	err  error
	hits int
	ran  bool
}

// ok reports whether the retriever ran and answered.
func (o *outcome) ok() bool { return o.ran && o.err == nil }

// candidate returns the candidate for a chunk id, adding it in order when new; nil when
// the id is not a store chunk id.
func (s *search) candidate(id string) *cand {
	if c, ok := s.cands[id]; ok {
		return c
	}
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || n < 0 {
		return nil
	}
	if s.cands == nil {
		s.cands = map[string]*cand{}
	}
	c := &cand{id: n, c: ranker.Candidate{ChunkID: id}}
	s.cands[id] = c
	s.order = append(s.order, id)
	return c
}
