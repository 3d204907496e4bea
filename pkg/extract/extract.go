package extract

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Document is the input of Document: one crawled page cut into chunks.
type Document struct {
	ID       string   `json:"id"`
	URL      string   `json:"url,omitempty"`
	Title    string   `json:"title,omitempty"`
	Headings []string `json:"headings,omitempty"`
	Chunks   []Chunk  `json:"chunks"`
	Links    []Link   `json:"links,omitempty"`
}

// Chunk is one chunk of a document. Code in Text is recognised between backticks
// (any fence length); CodeSpans lists further code snippets, which are located in
// Text when they occur there and are analysed on their own otherwise (their
// mentions then have no offsets).
//
// CodeRanges and CodeBlocks, when the caller knows them (an HTML renderer does),
// are the exact byte ranges of Text that are inline code and code blocks; they
// spare the guessing that CodeSpans needs (which occurrence of "default" was
// the code?). Ranges outside Text or not on UTF-8 boundaries are ignored.
type Chunk struct {
	ID          string   `json:"id"`
	Text        string   `json:"text"`
	HeadingPath []string `json:"heading_path,omitempty"`
	CodeSpans   []string `json:"code_spans,omitempty"`
	CodeRanges  []Span   `json:"code_ranges,omitempty"`
	CodeBlocks  []Span   `json:"code_blocks,omitempty"`
}

// Link is an outgoing hyperlink with its anchor text.
type Link struct {
	URL    string `json:"url"`
	Anchor string `json:"anchor,omitempty"`
}

// Entity is one entity found in a document. ID is the canonical key (see Key).
type Entity struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	Type       string   `json:"type"`
	Aliases    []string `json:"aliases,omitempty"`
	Confidence float64  `json:"confidence"`
	Source     string   `json:"source"`
}

// Span is a byte range [Start, End) of a chunk's text.
type Span struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// Mention says that a chunk mentions an entity, how often and where.
type Mention struct {
	ChunkID    string  `json:"chunk_id"`
	EntityID   string  `json:"entity_id"`
	Count      int     `json:"count"`
	Confidence float64 `json:"confidence"`
	Offsets    []Span  `json:"offsets,omitempty"`
}

// Evidence points at the text that supports a relation: a byte range of a chunk.
type Evidence struct {
	ChunkID string `json:"chunk_id"`
	Start   int    `json:"start"`
	End     int    `json:"end"`
}

// Relation is a typed, directed edge between two entities of the result.
// Weight is the strength of the association (evidence count for lexical
// relations, NPMI for co-occurrence); Confidence is in [0, 1].
type Relation struct {
	From       string     `json:"from"`
	To         string     `json:"to"`
	Type       string     `json:"type"`
	Weight     float64    `json:"weight"`
	Confidence float64    `json:"confidence"`
	Evidence   []Evidence `json:"evidence,omitempty"`
}

// LinkRelation is a hyperlink of the document, passed through as a LINKS_TO edge
// from the document to the target URL.
type LinkRelation struct {
	From     string   `json:"from"` // document id
	To       string   `json:"to"`   // target URL
	Type     string   `json:"type"` // always RelLinksTo
	Count    int      `json:"count"`
	Anchors  []string `json:"anchors,omitempty"`
	Entities []string `json:"entities,omitempty"` // entity ids named by the anchor texts
}

// Result is what Document extracts from one document.
type Result struct {
	DocumentID    string         `json:"document_id"`
	Entities      []Entity       `json:"entities"`
	Mentions      []Mention      `json:"mentions"`
	Relations     []Relation     `json:"relations"`
	Links         []LinkRelation `json:"links,omitempty"`
	TitleEntities []string       `json:"title_entities,omitempty"`
}

// QueryEntity is an entity found in a query; Start and End are byte offsets.
type QueryEntity struct {
	Text       string  `json:"text"`
	ID         string  `json:"id"`
	Name       string  `json:"name"`
	Type       string  `json:"type"`
	Confidence float64 `json:"confidence"`
	Start      int     `json:"start"`
	End        int     `json:"end"`
}

// Relation types.
const (
	RelUses        = "USES"
	RelIsA         = "IS_A"
	RelDependsOn   = "DEPENDS_ON"
	RelPartOf      = "PART_OF"
	RelSupports    = "SUPPORTS"
	RelBuiltOn     = "BUILT_ON"
	RelExtends     = "EXTENDS"
	RelImplements  = "IMPLEMENTS"
	RelReplaces    = "REPLACES"
	RelWrittenIn   = "WRITTEN_IN"
	RelRunsOn      = "RUNS_ON"
	RelProvides    = "PROVIDES"
	RelAltTo       = "ALTERNATIVE_TO"
	RelDevelopedBy = "DEVELOPED_BY"
	RelVersionOf   = "VERSION_OF"
	RelCoOccurs    = "CO_OCCURS"
	RelLinksTo     = "LINKS_TO"
)

// RelationTypes lists every relation type the extractor emits.
func RelationTypes() []string {
	return []string{RelUses, RelIsA, RelDependsOn, RelPartOf, RelSupports, RelBuiltOn, RelExtends,
		RelImplements, RelReplaces, RelWrittenIn, RelRunsOn, RelProvides, RelAltTo, RelDevelopedBy,
		RelVersionOf, RelCoOccurs, RelLinksTo}
}

// Errors of the constructor and of AddKnown.
var (
	ErrEmptyName   = errors.New("empty entity name")
	ErrBadOption   = errors.New("invalid option")
	errNoKnownType = ErrUnknownType
)

type config struct {
	minConfidence      float64
	queryMinConfidence float64
	minSupport         int
	minNPMI            float64
	maxCooccur         int
	maxDocPairs        int
	maxChunkBytes      int
	learner            *Learner
	known              []knownEntry
}

type knownEntry struct {
	name, typ string
	aliases   []string
}

// Option configures an Extractor.
type Option func(*config) error

// WithMinConfidence drops mentions below c (default 0.5) from Document results.
func WithMinConfidence(c float64) Option {
	return func(cfg *config) error {
		if c < 0 || c > 1 {
			return fmt.Errorf("%w: min confidence %v is outside [0, 1]", ErrBadOption, c)
		}
		cfg.minConfidence = c
		return nil
	}
}

// WithQueryMinConfidence drops query entities below c (default 0.5).
func WithQueryMinConfidence(c float64) Option {
	return func(cfg *config) error {
		if c < 0 || c > 1 {
			return fmt.Errorf("%w: query min confidence %v is outside [0, 1]", ErrBadOption, c)
		}
		cfg.queryMinConfidence = c
		return nil
	}
}

// WithCooccurrence sets the minimum number of chunks two entities must share
// (default 2) and the minimum NPMI (default 0.1) of a CO_OCCURS edge.
func WithCooccurrence(minSupport int, minNPMI float64) Option {
	return func(cfg *config) error {
		if minSupport < 1 {
			return fmt.Errorf("%w: co-occurrence min support %d is below 1", ErrBadOption, minSupport)
		}
		if minNPMI < -1 || minNPMI > 1 {
			return fmt.Errorf("%w: min NPMI %v is outside [-1, 1]", ErrBadOption, minNPMI)
		}
		cfg.minSupport, cfg.minNPMI = minSupport, minNPMI
		return nil
	}
}

// DefaultMaxDocumentPairs is the default of WithMaxDocumentPairs.
const DefaultMaxDocumentPairs = 30000

// WithMaxDocumentPairs bounds the CO_OCCURS relations of one document (default
// DefaultMaxDocumentPairs; 0: no bound); the pairs with the highest NPMI, then
// support, are kept. Documents of prose stay far below it (the evaluation corpora: at most a
// few thousand); an index page naming thousands of entities gave over 200 000
// pairs, whose evidence alone took tens of seconds to gather.
func WithMaxDocumentPairs(n int) Option {
	return func(cfg *config) error {
		if n < 0 {
			return fmt.Errorf("%w: max document pairs %d is negative", ErrBadOption, n)
		}
		cfg.maxDocPairs = n
		return nil
	}
}

// WithMaxChunkBytes bounds the text analysed per chunk (default 1 MiB); the rest
// of a longer chunk is ignored.
func WithMaxChunkBytes(n int) Option {
	return func(cfg *config) error {
		if n < 1 {
			return fmt.Errorf("%w: max chunk bytes %d is below 1", ErrBadOption, n)
		}
		cfg.maxChunkBytes = n
		return nil
	}
}

// WithLearner attaches a Learner: Document feeds it every document, matches the
// terms it has promoted, and weighs co-occurrence with its corpus counts.
func WithLearner(l *Learner) Option {
	return func(cfg *config) error {
		if l == nil {
			return fmt.Errorf("%w: nil learner", ErrBadOption)
		}
		cfg.learner = l
		return nil
	}
}

// WithKnown adds an entity to the gazetteer at construction (see AddKnown).
func WithKnown(name, typ string, aliases ...string) Option {
	return func(cfg *config) error {
		cfg.known = append(cfg.known, knownEntry{name, typ, aliases})
		return nil
	}
}

// Extractor finds entities and relations in documents and queries. It is safe
// for concurrent use.
type Extractor struct {
	cfg     config
	tax     *taxonomy
	static  *dictionary
	entries map[string]*entry

	mu   sync.RWMutex
	live *dictionary
}

// New loads the embedded taxonomy and gazetteer and applies the options.
func New(opts ...Option) (*Extractor, error) {
	cfg := config{
		minConfidence:      0.5,
		queryMinConfidence: 0.5,
		minSupport:         2,
		minNPMI:            0.1,
		maxCooccur:         40,
		maxDocPairs:        DefaultMaxDocumentPairs,
		maxChunkBytes:      1 << 20,
	}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	tax, err := loadTaxonomy(taxonomyJSON)
	if err != nil {
		return nil, err
	}
	dict, list, err := loadGazetteer(gazetteerJSON, tax)
	if err != nil {
		return nil, err
	}
	x := &Extractor{cfg: cfg, tax: tax, static: dict, entries: make(map[string]*entry, len(list)), live: newDictionary()}
	for _, e := range list {
		x.entries[e.id] = e
	}
	for _, k := range cfg.known {
		if err := x.AddKnown(k.name, k.typ, k.aliases...); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// Types returns the taxonomy, most specific types first within a category.
func (x *Extractor) Types() []Type { return slices.Clone(x.tax.types) }

// HasType reports whether name is a taxonomy type.
func (x *Extractor) HasType(name string) bool {
	_, ok := x.tax.byName[name]
	return ok
}

// AddKnown adds a live gazetteer entry, for example an entity the graph has
// learned. A name whose key the embedded gazetteer already owns only gains the
// aliases there (one key, one entity, the first type wins). Safe for concurrent
// use with extraction.
func (x *Extractor) AddKnown(name, typ string, aliases ...string) error {
	name = strings.TrimSpace(name)
	if name == "" || Key(name) == "" {
		return fmt.Errorf("add known entity: %w", ErrEmptyName)
	}
	if !x.HasType(typ) {
		return fmt.Errorf("add known entity %q: %w %q", name, errNoKnownType, typ)
	}
	forms := append([]string{name}, aliases...)
	forms = slices.DeleteFunc(forms, func(s string) bool { return Key(s) == "" })
	x.mu.Lock()
	defer x.mu.Unlock()
	e := &entry{id: Key(name), name: name, typ: typ, aliases: forms[1:], source: SourceKnown}
	if info, ok := x.static.keys[e.id]; ok {
		e = info.e
	}
	level := levelDefault
	if isProseWord(name) {
		level = levelCode // "Availability" from the graph: in code or next to a cue only
	}
	x.live.add(e, level, forms)
	return nil
}

// IsEverydayWord reports whether name, once normalised, is a single everyday
// English word or generic documentation vocabulary ("default", "Changed",
// "values"; also "--file" and "/a", whose keys are "file" and "a"), or a key of
// at most two characters. Such a name is no entity on its own: callers that
// turn names into gazetteer entries or query terms should skip it.
func IsEverydayWord(name string) bool { return proseKey(name) }

// lookup finds a key in the embedded gazetteer, then in the live entries, then
// among the terms the learner has promoted.
func (x *Extractor) lookup(key string) (*keyInfo, bool) {
	if info, plural := x.static.lookup(key); info != nil {
		return info, plural
	}
	x.mu.RLock()
	info, plural := x.live.lookup(key)
	x.mu.RUnlock()
	if info != nil || x.cfg.learner == nil {
		return info, plural
	}
	return x.cfg.learner.lookup(key)
}

func (x *Extractor) maxAtoms(firstKey string) int {
	n := x.static.maxAtoms(firstKey)
	x.mu.RLock()
	n = max(n, x.live.maxAtoms(firstKey))
	x.mu.RUnlock()
	if x.cfg.learner != nil {
		n = max(n, x.cfg.learner.maxAtoms(firstKey))
	}
	return n
}

// Resolve maps a name to its entity id: the id of the known entity that has the
// name or alias, otherwise the name's own key.
func (x *Extractor) Resolve(name string) string {
	k := Key(name)
	if info, _ := x.lookup(k); info != nil {
		return info.e.id
	}
	return k
}

// Lookup returns the known entity (embedded or live) with this name or alias.
func (x *Extractor) Lookup(name string) (Entity, bool) {
	info, _ := x.lookup(Key(name))
	if info == nil {
		return Entity{}, false
	}
	e := info.e
	return Entity{ID: e.id, Name: e.name, Type: e.typ, Aliases: slices.Clone(e.aliases), Confidence: 1, Source: e.source}, true
}
