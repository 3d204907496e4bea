// Package queryparse is phase 1 of search: it normalises a query, finds typed
// entities in it (through a Finder, normally the kg extractor plus the live
// gazetteer), classifies its intent (informational, navigational, transactional),
// extracts the content terms, and builds the retrieval variants: the original query,
// an entity-emphasised form and an entity-only form.
package queryparse

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// MaxQueryBytes bounds the query text; longer queries are rejected, not truncated.
const MaxQueryBytes = 2048

// Intent is what the user wants from a query.
type Intent string

// The intents a query can have.
const (
	Informational Intent = "informational" // learn about something
	Navigational  Intent = "navigational"  // reach a specific page or site
	Transactional Intent = "transactional" // do something: install, download, configure
)

// Entity is a typed entity found in the query.
type Entity struct {
	Text       string  `json:"text"`
	ID         string  `json:"id"`
	Name       string  `json:"name"`
	Type       string  `json:"type"`
	Confidence float64 `json:"confidence"`
	Start      int     `json:"start"`
	End        int     `json:"end"`
}

// Finder finds entities in query text (offsets are into the text it is given).
type Finder interface {
	Query(q string) []Entity
}

// FinderFunc adapts a function to Finder.
type FinderFunc func(q string) []Entity

// Query implements Finder.
func (f FinderFunc) Query(q string) []Entity { return f(q) }

// Variants are the query forms retrieval uses.
type Variants struct {
	Original         string `json:"original"`
	EntityEmphasised string `json:"entity_emphasised"`
	EntityOnly       string `json:"entity_only,omitempty"`
}

// Query is a parsed query.
type Query struct {
	Original   string   `json:"original"`
	Normalized string   `json:"normalized"`
	Terms      []string `json:"terms"`
	Entities   []Entity `json:"entities"`
	Intent     Intent   `json:"intent"`
	Confidence float64  `json:"confidence"`
	Variants   Variants `json:"variants"`
}

// ErrEmpty is returned for a query with no searchable content.
var ErrEmpty = errors.New("query is empty: give at least one word to search for")

// TooLongError is returned for a query over MaxQueryBytes.
type TooLongError struct{ Bytes int }

func (e *TooLongError) Error() string {
	return fmt.Sprintf("query is %d bytes long; the limit is %d", e.Bytes, MaxQueryBytes)
}

// Parser parses queries; it is safe for concurrent use.
type Parser struct {
	finder Finder
}

// New returns a parser using finder for entities (nil: no entities).
func New(finder Finder) *Parser { return &Parser{finder: finder} }

// Normalize applies Unicode NFKC, lower-cases, replaces control characters and
// collapses white space.
func Normalize(q string) string {
	q = norm.NFKC.String(q)
	var b strings.Builder
	b.Grow(len(q))
	space := true
	for _, r := range q {
		if r == utf8.RuneError || unicode.IsControl(r) || unicode.IsSpace(r) {
			if !space {
				b.WriteByte(' ')
				space = true
			}
			continue
		}
		b.WriteRune(unicode.ToLower(r))
		space = false
	}
	return strings.TrimSpace(b.String())
}

var termRE = regexp.MustCompile(`[\p{L}\p{N}][\p{L}\p{N}_.+#-]*[\p{L}\p{N}+#]|[\p{L}\p{N}]`)

// Terms returns the content terms of normalised text: words without stop words,
// keeping identifiers such as os.path, c++ and utf-8 whole.
func Terms(normalized string) []string {
	words := termRE.FindAllString(normalized, -1)
	out := make([]string, 0, len(words))
	seen := make(map[string]bool, len(words))
	for _, w := range words {
		if stopWords[w] || seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}

// Parse parses one query.
func (p *Parser) Parse(q string) (Query, error) {
	if len(q) > MaxQueryBytes {
		return Query{}, &TooLongError{Bytes: len(q)}
	}
	n := Normalize(q)
	terms := Terms(n)
	if n == "" || (len(terms) == 0 && len(termRE.FindAllString(n, -1)) == 0) {
		return Query{}, ErrEmpty
	}
	if len(terms) == 0 { // only stop words ("how to"): search them anyway
		terms = termRE.FindAllString(n, -1)
	}
	var ents []Entity
	if p.finder != nil {
		ents = dedupEntities(p.finder.Query(n))
	}
	intent, iconf := classify(n, terms, ents)
	return Query{
		Original:   q,
		Normalized: n,
		Terms:      terms,
		Entities:   ents,
		Intent:     intent,
		Confidence: confidence(iconf, terms, ents),
		Variants:   variants(n, terms, ents),
	}, nil
}

func dedupEntities(in []Entity) []Entity {
	best := map[string]Entity{}
	for _, e := range in {
		key := e.ID
		if key == "" {
			key = strings.ToLower(e.Name)
		}
		if old, ok := best[key]; !ok || e.Confidence > old.Confidence {
			best[key] = e
		}
	}
	out := make([]Entity, 0, len(best))
	for _, e := range best {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Start != out[j].Start {
			return out[i].Start < out[j].Start
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// variants: the entity-emphasised form repeats the entity names after the query so
// that term-based retrieval weighs them twice; the entity-only form keeps just them.
func variants(n string, terms []string, ents []Entity) Variants {
	v := Variants{Original: n, EntityEmphasised: n}
	if len(ents) == 0 {
		return v
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		name := strings.ToLower(e.Name)
		if name == "" {
			name = e.Text
		}
		names = append(names, name)
	}
	v.EntityEmphasised = n + " " + strings.Join(names, " ")
	v.EntityOnly = strings.Join(names, " ")
	return v
}

func confidence(intentConf float64, terms []string, ents []Entity) float64 {
	// Half from how sure the intent is, half from how much of the query is
	// understood as entities (a query that is all known entities is well understood).
	cov := 0.0
	if len(ents) > 0 {
		sum := 0.0
		for _, e := range ents {
			sum += e.Confidence
		}
		cov = sum / float64(len(ents))
		if len(terms) > 0 {
			frac := float64(len(ents)) / float64(len(terms))
			if frac > 1 {
				frac = 1
			}
			cov *= 0.5 + 0.5*frac
		}
	}
	c := 0.5*intentConf + 0.5*cov
	return float64(int(c*1000+0.5)) / 1000
}
