package graph

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// Sentinel errors. Callers map them with errors.Is.
var (
	// ErrNotFound: the document or entity does not exist.
	ErrNotFound = errors.New("not found")
	// ErrInvalid: the input is malformed; the wrapped message names the field.
	ErrInvalid = errors.New("invalid input")
	// ErrNoSchema: EnsureSchema has not been run against this database.
	ErrNoSchema = errors.New("graph schema not initialised: call EnsureSchema first")
	// ErrUnavailable: Neo4j cannot be reached (connection refused, timeout, auth) or
	// cannot do the work now (its transient errors: out of transaction memory, locks).
	ErrUnavailable = errors.New("neo4j unavailable")
)

// Relation sources.
const (
	SourcePattern      = "pattern"      // a lexical pattern such as "X uses Y"
	SourceCooccurrence = "cooccurrence" // entities mentioned together in chunks
	SourceLink         = "link"         // derived from hyperlinks between documents
)

// Limits on input sizes, to refuse absurd requests with a clear error.
const (
	maxIDLen        = 1024
	maxNameLen      = 512
	maxAliases      = 64
	maxEvidence     = 256 // evidence chunk ids per relation per document
	maxExpandSeeds  = 256
	maxExpandLimit  = 1000
	maxMatchLimit   = 10000
	maxMatchIDs     = 256
	defaultLimit    = 20
	evidencePerEdge = 20 // evidence chunk ids returned per aggregated edge
)

// Doc is one document with everything it contributes to the graph. UpsertDocument
// replaces whatever a previous version of the document contributed.
type Doc struct {
	ID        string
	URL       string
	Title     string
	Chunks    []Chunk
	Entities  []Entity   // entities mentioned by the chunks or used by relations
	Mentions  []Mention  // chunk → entity
	Relations []Relation // entity → entity, with evidence chunks of this document
	Links     []Link     // outgoing hyperlinks
}

// Chunk is a chunk of a document. Chunk ids are global: a chunk belongs to one document.
type Chunk struct {
	ID      string
	Ordinal int
}

// Entity is an entity as described by one document. An entity shared by several
// documents keeps the name and type of its most confident description; aliases are
// merged.
type Entity struct {
	ID         string
	Name       string
	Type       string
	Aliases    []string
	Confidence float64 // in [0,1]
}

// Mention says that a chunk mentions an entity Count times (0 means 1).
type Mention struct {
	ChunkID    string
	EntityID   string
	Count      int
	Confidence float64 // in [0,1]
}

// Relation is a typed relation between two entities found in this document.
type Relation struct {
	From, To   string   // entity ids
	Type       string   // e.g. USES, DEPENDS_ON, IS_A, PART_OF, CO_OCCURS
	Weight     float64  // finite; e.g. an evidence count, or NPMI (may be negative) for co-occurrence
	Confidence float64  // in [0,1]
	Evidence   []string // chunk ids of this document
	Source     string   // SourcePattern (default), SourceCooccurrence or SourceLink
}

// Link is an outgoing hyperlink to the document with id TargetID (the id the crawler
// derives from the canonical URL). A target not ingested yet becomes a placeholder.
type Link struct {
	TargetID string
	URL      string
	Anchor   string
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

func checkID(field, v string) error {
	if strings.TrimSpace(v) == "" {
		return invalid("%s is empty", field)
	}
	if len(v) > maxIDLen {
		return invalid("%s is %d bytes long, the maximum is %d", field, len(v), maxIDLen)
	}
	return nil
}

func checkUnit(field string, v float64) error {
	if math.IsNaN(v) || v < 0 || v > 1 {
		return invalid("%s is %v, want a number in [0,1]", field, v)
	}
	return nil
}

// prepared is a validated document turned into Cypher parameter rows, with duplicate
// mentions and relations merged.
type prepared struct {
	id        string
	params    map[string]any
	chunks    []any
	entities  []any
	mentions  []any
	relations []any
	links     []any
	// contribution of this version per entity id
	contrib map[string]*entityContrib
	// every entity id the document lists (checked for orphans after the write)
	entityIDs []string
}

type entityContrib struct {
	chunks   int64 // chunks mentioning the entity
	mentions int64 // sum of mention counts
}

// prepare validates d and builds the parameter rows for UpsertDocument.
func prepare(d Doc) (*prepared, error) {
	if err := checkID("document id", d.ID); err != nil {
		return nil, err
	}
	p := &prepared{id: d.ID, contrib: map[string]*entityContrib{}}
	chunkIDs, err := p.addChunks(d.Chunks)
	if err != nil {
		return nil, err
	}
	entities, err := p.addEntities(d.Entities)
	if err != nil {
		return nil, err
	}
	if err := p.addMentions(d.Mentions, chunkIDs, entities); err != nil {
		return nil, err
	}
	if err := p.addRelations(d.Relations, chunkIDs, entities); err != nil {
		return nil, err
	}
	if err := p.addLinks(d.ID, d.Links); err != nil {
		return nil, err
	}
	p.params = map[string]any{"id": d.ID, "url": d.URL, "title": d.Title, "chunk_count": int64(len(d.Chunks))}
	return p, nil
}

// addChunks validates the chunks and adds their rows; it returns the set of
// chunk ids.
func (p *prepared) addChunks(chunks []Chunk) (map[string]bool, error) {
	chunkIDs := make(map[string]bool, len(chunks))
	for i, c := range chunks {
		if err := checkID(fmt.Sprintf("chunks[%d].id", i), c.ID); err != nil {
			return nil, err
		}
		if c.Ordinal < 0 {
			return nil, invalid("chunks[%d].ordinal is %d, want >= 0", i, c.Ordinal)
		}
		if chunkIDs[c.ID] {
			return nil, invalid("chunks[%d].id %q is duplicated", i, c.ID)
		}
		chunkIDs[c.ID] = true
		p.chunks = append(p.chunks, map[string]any{"id": c.ID, "ordinal": int64(c.Ordinal)})
	}
	return chunkIDs, nil
}

// addEntities validates the entities and adds their rows, merging an entity
// listed twice; it returns each entity id's row index.
func (p *prepared) addEntities(list []Entity) (map[string]int, error) {
	entities := make(map[string]int, len(list))
	for i, e := range list {
		name, aliases, err := checkEntity(i, e)
		if err != nil {
			return nil, err
		}
		if j, dup := entities[e.ID]; dup {
			// Same entity listed twice: keep the more confident description, merge aliases.
			row := p.entities[j].(map[string]any)
			old := row["aliases"].([]string)
			for _, a := range aliases {
				if !slices.Contains(old, a) {
					old = append(old, a)
				}
			}
			row["aliases"] = old
			if e.Confidence > row["confidence"].(float64) {
				row["name"], row["name_lower"], row["type"], row["confidence"] = name, strings.ToLower(name), e.Type, e.Confidence
			}
			continue
		}
		entities[e.ID] = len(p.entities)
		p.entityIDs = append(p.entityIDs, e.ID)
		p.entities = append(p.entities, map[string]any{
			"id": e.ID, "name": name, "name_lower": strings.ToLower(name), "type": e.Type,
			"aliases": aliases, "confidence": e.Confidence,
		})
	}
	return entities, nil
}

// checkEntity validates entities[i] and returns its trimmed name and its
// aliases, trimmed, without empties, repeats or the name itself.
func checkEntity(i int, e Entity) (name string, aliases []string, err error) {
	if err := checkID(fmt.Sprintf("entities[%d].id", i), e.ID); err != nil {
		return "", nil, err
	}
	name = strings.TrimSpace(e.Name)
	if name == "" {
		return "", nil, invalid("entities[%d].name is empty", i)
	}
	if len(name) > maxNameLen {
		return "", nil, invalid("entities[%d].name is %d bytes long, the maximum is %d", i, len(name), maxNameLen)
	}
	if strings.TrimSpace(e.Type) == "" {
		return "", nil, invalid("entities[%d].type is empty", i)
	}
	if len(e.Type) > maxNameLen {
		return "", nil, invalid("entities[%d].type is too long", i)
	}
	if err := checkUnit(fmt.Sprintf("entities[%d].confidence", i), e.Confidence); err != nil {
		return "", nil, err
	}
	aliases = make([]string, 0, len(e.Aliases))
	for _, a := range e.Aliases {
		a = strings.TrimSpace(a)
		if a == "" || a == name || slices.Contains(aliases, a) {
			continue
		}
		if len(a) > maxNameLen {
			return "", nil, invalid("entities[%d].aliases has an alias of %d bytes, the maximum is %d", i, len(a), maxNameLen)
		}
		aliases = append(aliases, a)
	}
	if len(aliases) > maxAliases {
		return "", nil, invalid("entities[%d].aliases has %d entries, the maximum is %d", i, len(aliases), maxAliases)
	}
	return name, aliases, nil
}

// addMentions validates the mentions and adds their rows, one per chunk and
// entity (counts summed), and the entities' contributions.
func (p *prepared) addMentions(list []Mention, chunkIDs map[string]bool, entities map[string]int) error {
	type mkey struct{ chunk, entity string }
	mentions := map[mkey]map[string]any{}
	var mentionOrder []mkey
	for i, m := range list {
		if !chunkIDs[m.ChunkID] {
			return invalid("mentions[%d].chunk_id %q is not one of the document's chunks", i, m.ChunkID)
		}
		if _, ok := entities[m.EntityID]; !ok {
			return invalid("mentions[%d].entity_id %q is not one of the document's entities", i, m.EntityID)
		}
		if m.Count < 0 {
			return invalid("mentions[%d].count is %d, want >= 0", i, m.Count)
		}
		if err := checkUnit(fmt.Sprintf("mentions[%d].confidence", i), m.Confidence); err != nil {
			return err
		}
		n := int64(max(m.Count, 1))
		k := mkey{m.ChunkID, m.EntityID}
		if row, ok := mentions[k]; ok {
			row["count"] = row["count"].(int64) + n
			row["confidence"] = max(row["confidence"].(float64), m.Confidence)
			p.contrib[m.EntityID].mentions += n
			continue
		}
		mentions[k] = map[string]any{"chunk": m.ChunkID, "entity": m.EntityID, "count": n, "confidence": m.Confidence}
		mentionOrder = append(mentionOrder, k)
		c := p.contrib[m.EntityID]
		if c == nil {
			c = &entityContrib{}
			p.contrib[m.EntityID] = c
		}
		c.chunks++
		c.mentions += n
	}
	for _, k := range mentionOrder {
		p.mentions = append(p.mentions, mentions[k])
	}
	return nil
}

// addRelations validates the relations and adds their rows, one per from, to
// and type (weights summed, evidence merged and capped at maxEvidence).
func (p *prepared) addRelations(list []Relation, chunkIDs map[string]bool, entities map[string]int) error {
	type rkey struct{ from, to, typ string }
	relations := map[rkey]map[string]any{}
	var relationOrder []rkey
	for i, r := range list {
		src, err := checkRelation(i, r, chunkIDs, entities)
		if err != nil {
			return err
		}
		k := rkey{r.From, r.To, r.Type}
		if row, ok := relations[k]; ok {
			row["weight"] = row["weight"].(float64) + r.Weight
			row["confidence"] = max(row["confidence"].(float64), r.Confidence)
			row["evidence"] = mergeStrings(row["evidence"].([]string), r.Evidence)
			if row["source"] != src {
				row["source"] = SourcePattern // a pattern match is the stronger claim
			}
			continue
		}
		relations[k] = map[string]any{
			"from": r.From, "to": r.To, "type": r.Type, "weight": r.Weight,
			"confidence": r.Confidence, "evidence": mergeStrings(nil, r.Evidence), "source": src,
		}
		relationOrder = append(relationOrder, k)
	}
	for _, k := range relationOrder {
		row := relations[k]
		if ev := row["evidence"].([]string); len(ev) > maxEvidence {
			row["evidence"] = ev[:maxEvidence]
		}
		p.relations = append(p.relations, row)
	}
	return nil
}

// checkRelation validates relations[i] and returns its source (pattern when
// empty).
func checkRelation(i int, r Relation, chunkIDs map[string]bool, entities map[string]int) (string, error) {
	if _, ok := entities[r.From]; !ok {
		return "", invalid("relations[%d].from %q is not one of the document's entities", i, r.From)
	}
	if _, ok := entities[r.To]; !ok {
		return "", invalid("relations[%d].to %q is not one of the document's entities", i, r.To)
	}
	if r.From == r.To {
		return "", invalid("relations[%d] relates entity %q to itself", i, r.From)
	}
	if strings.TrimSpace(r.Type) == "" {
		return "", invalid("relations[%d].type is empty", i)
	}
	if len(r.Type) > 128 {
		return "", invalid("relations[%d].type is longer than 128 bytes", i)
	}
	if math.IsNaN(r.Weight) || math.IsInf(r.Weight, 0) {
		return "", invalid("relations[%d].weight is %v, want a finite number", i, r.Weight)
	}
	if err := checkUnit(fmt.Sprintf("relations[%d].confidence", i), r.Confidence); err != nil {
		return "", err
	}
	src := r.Source
	switch src {
	case "":
		src = SourcePattern
	case SourcePattern, SourceCooccurrence, SourceLink:
	default:
		return "", invalid("relations[%d].source is %q, want %q, %q or %q", i, r.Source, SourcePattern, SourceCooccurrence, SourceLink)
	}
	for j, ev := range r.Evidence {
		if !chunkIDs[ev] {
			return "", invalid("relations[%d].evidence[%d] %q is not one of the document's chunks", i, j, ev)
		}
	}
	return src, nil
}

// addLinks validates the outgoing links and adds their rows, dropping self
// links and repeats.
func (p *prepared) addLinks(docID string, links []Link) error {
	seenLinks := map[string]bool{}
	for i, l := range links {
		if err := checkID(fmt.Sprintf("links[%d].target_id", i), l.TargetID); err != nil {
			return err
		}
		if l.TargetID == docID || seenLinks[l.TargetID] {
			continue // self links and repeated links carry nothing new
		}
		seenLinks[l.TargetID] = true
		p.links = append(p.links, map[string]any{"target": l.TargetID, "url": l.URL, "anchor": l.Anchor})
	}
	return nil
}

// mergeStrings appends the strings of add missing from base, keeping order.
func mergeStrings(base, add []string) []string {
	out := slices.Clone(base)
	if out == nil {
		out = []string{}
	}
	for _, s := range add {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
