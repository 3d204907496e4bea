package extract

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
)

// Sources of learned terms.
const (
	TermHeading     = "heading"     // a name found in a title or heading
	TermCode        = "code"        // an identifier in a code span
	TermAnchor      = "anchor"      // the anchor text of a link
	TermCapitalised = "capitalised" // a capitalised multi-word name in prose
	TermAcronym     = "acronym"     // an acronym defined in the text, or its expansion
)

var termWeights = map[string]float64{TermHeading: 1, TermCode: 1, TermAnchor: 1, TermCapitalised: 1, TermAcronym: 2}

// Term is one candidate name seen in a document.
type Term struct {
	Name   string `json:"name"`
	Type   string `json:"type"`
	Source string `json:"source"`
}

// LearnedTerm is a term the Learner has promoted to a known entity.
type LearnedTerm struct {
	ID        string  `json:"id"`
	Name      string  `json:"name"`
	Type      string  `json:"type"`
	Documents int     `json:"documents"`
	Score     float64 `json:"score"`
}

// LearnerConfig sets when a term is promoted and bounds the memory used.
type LearnerConfig struct {
	MinDocuments int     // distinct documents a term must appear in (default 2)
	MinScore     float64 // summed source weights (heading, code, anchor, capitalised 1; acronym 2; default 3)
	MaxTerms     int     // terms tracked at most (default 200 000); new terms beyond are ignored
	MaxPairs     int     // entity pairs counted at most (default 2 000 000)
	// MaxDocShare: a term of several words, or one without an identifier's
	// shape (no underscore, dot, digit or inner capital), found or matched in
	// more than this share of the documents is not specific enough to be a name
	// (navigation links, boilerplate) (default 0.3; applied from
	// minDocsForShare documents on; 1 disables it).
	MaxDocShare float64
}

// minDocsForShare is the corpus size from which MaxDocShare applies.
const minDocsForShare = 20

// Learner accumulates corpus statistics across documents: candidate terms (from
// headings, code spans, anchor texts, capitalised names and acronym
// definitions), promoted once they recur, and the chunk counts of entities and
// entity pairs that co-occurrence NPMI needs. Observing a document again
// replaces its earlier contribution. Safe for concurrent use.
type Learner struct {
	cfg LearnerConfig

	mu       sync.RWMutex
	terms    map[string]*termStats
	docs     map[string]*docContribution
	chunks   int
	entities map[string]int // chunks holding each entity
	// entityDocs counts the documents holding each entity: a promoted term
	// matched all over the corpus is not specific (MaxDocShare)
	entityDocs map[string]int
	pairs      map[[2]string]int
	promoted   map[string]*entry
	dict       *dictionary
	touched    []string // keys changed since the last refresh
}

type termStats struct {
	name  string
	types map[string]float64
	docs  int
	score float64
}

type docContribution struct {
	terms  map[string]termContribution
	chunks [][]string
}

type termContribution struct {
	name   string
	typ    string
	weight float64
}

// NewLearner returns an empty Learner; zero config fields take the defaults.
func NewLearner(cfg LearnerConfig) *Learner {
	if cfg.MinDocuments <= 0 {
		cfg.MinDocuments = 2
	}
	if cfg.MinScore <= 0 {
		cfg.MinScore = 3
	}
	if cfg.MaxTerms <= 0 {
		cfg.MaxTerms = 200_000
	}
	if cfg.MaxPairs <= 0 {
		cfg.MaxPairs = 2_000_000
	}
	if cfg.MaxDocShare <= 0 || cfg.MaxDocShare > 1 {
		cfg.MaxDocShare = 0.3
	}
	return &Learner{cfg: cfg, terms: make(map[string]*termStats), docs: make(map[string]*docContribution),
		entities: make(map[string]int), entityDocs: make(map[string]int), pairs: make(map[[2]string]int), promoted: make(map[string]*entry), dict: newDictionary()}
}

// Observe records a document's terms and the entity ids of each of its chunks,
// replacing what an earlier Observe of the same document recorded.
func (l *Learner) Observe(docID string, terms []Term, chunkEntities [][]string) {
	contrib := &docContribution{terms: make(map[string]termContribution)}
	for _, t := range terms {
		k := Key(t.Name)
		if k == "" {
			continue
		}
		w := termWeights[t.Source]
		if w == 0 {
			w = 0.5
		}
		c := contrib.terms[k]
		if c.name == "" {
			c.name, c.typ = t.Name, t.Type
		}
		c.weight += w
		contrib.terms[k] = c
	}
	for _, set := range chunkEntities {
		contrib.chunks = append(contrib.chunks, dedup(set))
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if old, ok := l.docs[docID]; ok {
		l.apply(old, -1)
	}
	l.docs[docID] = contrib
	l.apply(contrib, +1)
	l.refresh()
}

// Forget removes a document's contribution (for a deleted document).
func (l *Learner) Forget(docID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if old, ok := l.docs[docID]; ok {
		l.apply(old, -1)
		delete(l.docs, docID)
		l.refresh()
	}
}

func (l *Learner) apply(c *docContribution, sign int) {
	for k, tc := range c.terms {
		l.touched = append(l.touched, k)
		ts, ok := l.terms[k]
		if !ok {
			if sign < 0 || len(l.terms) >= l.cfg.MaxTerms {
				continue
			}
			ts = &termStats{name: tc.name, types: make(map[string]float64)}
			l.terms[k] = ts
		}
		ts.docs += sign
		ts.score += float64(sign) * tc.weight
		if tc.typ != "" {
			ts.types[tc.typ] += float64(sign) * tc.weight
		}
		if ts.docs <= 0 {
			delete(l.terms, k)
		}
	}
	l.chunks += sign * len(c.chunks)
	inDoc := make(map[string]bool)
	for _, set := range c.chunks {
		for _, e := range set {
			inDoc[e] = true
		}
	}
	for e := range inDoc {
		if _, ok := l.promoted[e]; ok {
			l.touched = append(l.touched, e) // its document share changed
		}
		l.entityDocs[e] += sign
		if l.entityDocs[e] <= 0 {
			delete(l.entityDocs, e)
		}
	}
	for _, set := range c.chunks {
		for i, a := range set {
			l.entities[a] += sign
			if l.entities[a] <= 0 {
				delete(l.entities, a)
			}
			for _, b := range set[i+1:] {
				p := [2]string{a, b}
				if _, ok := l.pairs[p]; !ok && (sign < 0 || len(l.pairs) >= l.cfg.MaxPairs) {
					continue
				}
				l.pairs[p] += sign
				if l.pairs[p] <= 0 {
					delete(l.pairs, p)
				}
			}
		}
	}
}

// refresh updates the promotion of the terms touched since the last call. It
// costs O(touched terms): a published keyInfo is never changed, only replaced.
func (l *Learner) refresh() {
	for _, k := range l.touched {
		ts := l.terms[k]
		should := ts != nil && ts.docs >= l.cfg.MinDocuments && ts.score >= l.cfg.MinScore
		if should && len(l.docs) >= minDocsForShare && (!identifierShaped(ts.name) || strings.Contains(ts.name, " ")) &&
			float64(max(ts.docs, l.entityDocs[k])) > l.cfg.MaxDocShare*float64(len(l.docs)) {
			should = false // everywhere: not specific
		}
		if should && proseKey(ts.name) {
			should = false // "default", "/a", "--file": would match the everyday word
		}
		cur, promoted := l.promoted[k]
		switch {
		case should && (!promoted || cur.typ != bestType(ts.types) || cur.name != ts.name):
			e := &entry{id: k, name: ts.name, typ: bestType(ts.types), source: SourceLearned}
			delete(l.dict.keys, k)
			level := learnedLevel(e.name)
			l.dict.add(e, level, []string{e.name})
			l.promoted[k] = e
		case !should && promoted:
			delete(l.promoted, k)
			delete(l.dict.keys, k)
		}
	}
	l.touched = l.touched[:0]
}

// learnedLevel is how much evidence a promoted term needs to match (everyday
// words are never promoted). A single plain word may be a code name that is
// also a verb or a noun of prose (split, extract, lineno): in lower case it
// matches only in code, before '(' or next to a cue word; capitalised
// (Quillmesh, Hashable) only as written, and in code. Names of several words or
// with an identifier's shape match in any case.
func learnedLevel(name string) matchLevel {
	switch {
	case !isPlainWord(name):
		return levelDefault
	case !hasUpper(name):
		return levelCode
	}
	return levelNone
}

func bestType(votes map[string]float64) string {
	best, bw := "concept", 0.0
	keys := make([]string, 0, len(votes))
	for t := range votes {
		keys = append(keys, t)
	}
	slices.Sort(keys)
	for _, t := range keys {
		if votes[t] > bw {
			best, bw = t, votes[t]
		}
	}
	return best
}

func (l *Learner) lookup(key string) (*keyInfo, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.dict.lookup(key)
}

func (l *Learner) maxAtoms(firstKey string) int {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.dict.maxAtoms(firstKey)
}

// Promoted lists the promoted terms, most documents first.
func (l *Learner) Promoted() []LearnedTerm {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := make([]LearnedTerm, 0, len(l.promoted))
	for k, e := range l.promoted {
		ts := l.terms[k]
		out = append(out, LearnedTerm{ID: k, Name: e.name, Type: e.typ, Documents: ts.docs, Score: ts.score})
	}
	slices.SortFunc(out, func(a, b LearnedTerm) int {
		if a.Documents != b.Documents {
			return b.Documents - a.Documents
		}
		if a.ID < b.ID {
			return -1
		}
		return 1
	})
	return out
}

// Documents is the number of documents observed.
func (l *Learner) Documents() int {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return len(l.docs)
}

// Counts returns the corpus counts behind the NPMI of entities a and b: chunks
// holding a, holding b, holding both, and all chunks.
func (l *Learner) Counts(a, b string) (countA, countB, countAB, chunks int) {
	p := [2]string{a, b}
	if b < a {
		p = [2]string{b, a}
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.entities[a], l.entities[b], l.pairs[p], l.chunks
}

// learnerState is the saved form of a Learner: the contribution of every
// document; the counts are recomputed on load.
type learnerState struct {
	Version int                      `json:"version"`
	Config  LearnerConfig            `json:"config"`
	Docs    map[string]savedDocument `json:"docs"`
}

type savedDocument struct {
	Terms  map[string]savedTerm `json:"terms,omitempty"`
	Chunks [][]string           `json:"chunks,omitempty"`
}

type savedTerm struct {
	Name   string  `json:"name"`
	Type   string  `json:"type,omitempty"`
	Weight float64 `json:"weight"`
}

// ErrBadLearnerState is returned by LoadLearner for data it cannot use.
var ErrBadLearnerState = errors.New("bad learner state")

// Save writes the learner's state as JSON, for LoadLearner after a restart.
func (l *Learner) Save(w io.Writer) error {
	l.mu.RLock()
	st := learnerState{Version: 1, Config: l.cfg, Docs: make(map[string]savedDocument, len(l.docs))}
	for id, d := range l.docs {
		sd := savedDocument{Terms: make(map[string]savedTerm, len(d.terms)), Chunks: d.chunks}
		for k, t := range d.terms {
			sd.Terms[k] = savedTerm{Name: t.name, Type: t.typ, Weight: t.weight}
		}
		st.Docs[id] = sd
	}
	l.mu.RUnlock()
	if err := json.NewEncoder(w).Encode(st); err != nil {
		return fmt.Errorf("save learner: %w", err)
	}
	return nil
}

// LoadLearner reads a state written by Save.
func LoadLearner(r io.Reader) (*Learner, error) {
	var st learnerState
	if err := json.NewDecoder(r).Decode(&st); err != nil {
		return nil, fmt.Errorf("load learner: %w: %v", ErrBadLearnerState, err) //nolint:errorlint // the sentinel classifies the input as invalid; the parser's error is only its description
	}
	if st.Version != 1 {
		return nil, fmt.Errorf("load learner: %w: version %d, want 1", ErrBadLearnerState, st.Version)
	}
	l := NewLearner(st.Config)
	l.mu.Lock()
	defer l.mu.Unlock()
	for id, sd := range st.Docs {
		c := &docContribution{terms: make(map[string]termContribution, len(sd.Terms))}
		for k, t := range sd.Terms {
			if k == "" || t.Weight < 0 {
				return nil, fmt.Errorf("load learner: %w: document %s has a bad term %q", ErrBadLearnerState, id, k)
			}
			c.terms[k] = termContribution{name: t.Name, typ: t.Type, weight: t.Weight}
		}
		for _, set := range sd.Chunks {
			c.chunks = append(c.chunks, dedup(set))
		}
		l.docs[id] = c
		l.apply(c, +1)
	}
	l.refresh()
	return l, nil
}
