package extract

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"
)

//go:embed taxonomy.json
var taxonomyJSON []byte

//go:embed gazetteer.json
var gazetteerJSON []byte

// Type is one entity type of the taxonomy.
type Type struct {
	Name        string `json:"name"`
	Category    string `json:"category"`
	Parent      string `json:"parent,omitempty"`
	Rank        int    `json:"rank"`
	Description string `json:"description"`
}

// Entity sources, from strongest to weakest evidence.
const (
	SourceGazetteer = "gazetteer" // the embedded gazetteer
	SourceKnown     = "known"     // added at run time with AddKnown / WithKnown
	SourceAcronym   = "acronym"   // defined in the text: "Write-Ahead Log (WAL)"
	SourcePattern   = "pattern"   // a pattern rule (code, CamelCase, version, ...)
	SourceLearned   = "learned"   // promoted by the Learner from corpus statistics
)

// ErrUnknownType is returned when a type name is not in the taxonomy.
var ErrUnknownType = errors.New("unknown entity type")

type taxonomy struct {
	types  []Type
	byName map[string]Type
}

func loadTaxonomy(data []byte) (*taxonomy, error) {
	var raw struct {
		Types []Type `json:"types"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("decode taxonomy: %w", err)
	}
	t := &taxonomy{byName: make(map[string]Type, len(raw.Types))}
	for _, ty := range raw.Types {
		if ty.Name == "" {
			return nil, errors.New("decode taxonomy: a type has no name")
		}
		if _, dup := t.byName[ty.Name]; dup {
			return nil, fmt.Errorf("decode taxonomy: type %q declared twice", ty.Name)
		}
		t.byName[ty.Name] = ty
		t.types = append(t.types, ty)
	}
	return t, nil
}

func (t *taxonomy) rank(name string) int {
	if ty, ok := t.byName[name]; ok {
		return ty.Rank
	}
	return 1000
}

// matchLevel says how much evidence a gazetteer name needs before it matches.
type matchLevel uint8

const (
	levelNone    matchLevel = iota
	levelCode               // only in code, before '(' or next to a cue word
	levelDefault            // any case
)

// entry is one known entity.
type entry struct {
	id      string
	name    string
	typ     string
	aliases []string
	source  string
}

// keyInfo is what one canonical key matches.
type keyInfo struct {
	e         *entry
	ci        matchLevel          // level for a case-insensitive match
	caseForms map[string]struct{} // surface forms that match (only) exactly as written
	forms     map[string]struct{} // every declared surface form
	named     bool                // a proper name: plural forms do not match
}

// dictionary maps canonical keys to entries; first holds, per key of a name's
// first atom, the largest number of atoms of a name starting with it.
type dictionary struct {
	keys  map[string]*keyInfo
	first map[string]int
}

func newDictionary() *dictionary {
	return &dictionary{keys: make(map[string]*keyInfo), first: make(map[string]int)}
}

// types whose names are proper names: a plural form is not a mention.
var genericTypes = map[string]bool{
	"concept": true, "data_structure": true, "algorithm": true, "design_pattern": true, "ml_model": true,
	"hardware": true, "metric": true, "field": true, "vulnerability": true, "class": true, "data_type": true,
	"cryptographic_algorithm": true, "operator": true, "unit": true,
}

// add registers name (canonical) and aliases for e at the given level. It
// returns the entry that owns the name's key: an existing one when the key was
// already taken (first declaration wins).
func (d *dictionary) add(e *entry, level matchLevel, forms []string) *entry {
	owner := e
	if info, ok := d.keys[Key(e.name)]; ok {
		owner = info.e
	}
	for _, f := range forms {
		k := Key(f)
		if k == "" {
			continue
		}
		info, ok := d.keys[k]
		if !ok {
			info = &keyInfo{e: owner, named: !genericTypes[owner.typ]}
		} else {
			// Copy on write: an extraction may hold the old keyInfo (lookup returns it
			// and releases the lock), so its maps must never change under it.
			c := *info
			c.caseForms, c.forms = maps.Clone(info.caseForms), maps.Clone(info.forms)
			info = &c
		}
		d.keys[k] = info
		lv := effectiveLevel(f, k, level, owner.typ)
		if ok && info.e != e && info.e != owner {
			lv = min(lv, info.ci) // another entity's key: its own strictness holds
			if info.ci == levelCode && lv == levelNone {
				lv = levelCode
			}
		}
		switch lv {
		case levelDefault:
			info.ci = levelDefault
		case levelCode:
			if info.ci < levelCode {
				info.ci = levelCode
			}
		}
		if lv == levelNone {
			if info.caseForms == nil {
				info.caseForms = make(map[string]struct{}, 1)
			}
			info.caseForms[f] = struct{}{}
		}
		if info.forms == nil {
			info.forms = make(map[string]struct{}, 1)
		}
		info.forms[f] = struct{}{}
		atoms := atomize(f, nil)
		if len(atoms) > 0 {
			fk := Key(atoms[0].text)
			if n := len(atoms); n > d.first[fk] {
				d.first[fk] = n
			}
		}
	}
	return owner
}

// termOfArtTypes are the types whose one-word names the gazetteer declares as
// terms of art (recursion, callback, caching): the documentation vocabulary of
// english.txt does not tighten them, only the everyday words of commonWords do.
var termOfArtTypes = map[string]bool{"concept": true, "algorithm": true, "design_pattern": true,
	"data_structure": true, "metric": true}

// effectiveLevel tightens the declared level of one written form: everyday words
// need their written case (or code), short lower-case names need code, and short
// all-capital acronyms need their case.
func effectiveLevel(form, key string, declared matchLevel, typ string) matchLevel {
	if declared != levelDefault {
		return declared
	}
	single := !strings.ContainsAny(form, " -/")
	if single && (isCommonWord(key) || !termOfArtTypes[typ] && isEnglishWord(key)) {
		if hasUpper(form) {
			return levelNone // case-sensitive only
		}
		return levelCode
	}
	if single && len(key) <= 2 && !hasUpper(form) {
		return levelCode
	}
	if single && len(form) <= 4 && isAllUpper(form) {
		return levelNone
	}
	if single && isAllUpper(form) && isEnglishWord(key) {
		return levelNone // DISPLAY, SHELL: the variable, not "display" or "shell"
	}
	return levelDefault
}

func hasUpper(s string) bool {
	for _, r := range s {
		if unicode.IsUpper(r) {
			return true
		}
	}
	return false
}

func isAllUpper(s string) bool {
	letters := 0
	for _, r := range s {
		if unicode.IsLower(r) {
			return false
		}
		if unicode.IsLetter(r) {
			letters++
		}
	}
	return letters > 0
}

// lookup returns the key info for key, trying the singular form for generic
// names.
func (d *dictionary) lookup(key string) (*keyInfo, bool) {
	if info, ok := d.keys[key]; ok {
		return info, false
	}
	if s := singular(key); s != "" {
		if info, ok := d.keys[s]; ok && !info.named {
			return info, true
		}
	}
	return nil, false
}

func (d *dictionary) maxAtoms(firstKey string) int {
	n := d.first[firstKey]
	if s := singular(firstKey); s != "" {
		n = max(n, d.first[s])
	}
	return n
}

type gazGroup struct {
	Type    string            `json:"type"`
	Match   string            `json:"match"`
	Entries []json.RawMessage `json:"entries"`
}

// lateTypes are loaded after every other type, so that a name shared with a
// protocol, format or keyword ("ssl", "select", "string") keeps that meaning.
var lateTypes = []string{"module", "function", "class", "attribute", "decorator", "identifier"}

func loadGazetteer(data []byte, tax *taxonomy) (*dictionary, []*entry, error) {
	var raw struct {
		Groups []gazGroup `json:"groups"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, nil, fmt.Errorf("decode gazetteer: %w", err)
	}
	groups := slices.Clone(raw.Groups)
	slices.SortStableFunc(groups, func(a, b gazGroup) int {
		la, lb := slices.Contains(lateTypes, a.Type), slices.Contains(lateTypes, b.Type)
		switch {
		case la == lb:
			return 0
		case la:
			return 1
		}
		return -1
	})
	d := newDictionary()
	var entries []*entry
	for gi, g := range groups {
		if _, ok := tax.byName[g.Type]; !ok {
			return nil, nil, fmt.Errorf("decode gazetteer: group %d: %w %q", gi, ErrUnknownType, g.Type)
		}
		level, err := parseLevel(g.Match)
		if err != nil {
			return nil, nil, fmt.Errorf("decode gazetteer: group %d (%s): %w", gi, g.Type, err)
		}
		for _, rawEntry := range g.Entries {
			names, err := decodeEntry(rawEntry)
			if err != nil {
				return nil, nil, fmt.Errorf("decode gazetteer: group %d (%s): %w", gi, g.Type, err)
			}
			e := &entry{id: Key(names[0]), name: names[0], typ: g.Type, aliases: names[1:], source: SourceGazetteer}
			if e.id == "" {
				return nil, nil, fmt.Errorf("decode gazetteer: group %d (%s): name %q has an empty key", gi, g.Type, names[0])
			}
			if owner := d.add(e, level, names); owner == e {
				entries = append(entries, e)
			} else {
				owner.aliases = appendNew(owner.aliases, names...)
			}
		}
	}
	return d, entries, nil
}

func parseLevel(s string) (matchLevel, error) {
	switch s {
	case "", "default":
		return levelDefault, nil
	case "case":
		return levelNone, nil
	case "code":
		return levelCode, nil
	}
	return 0, fmt.Errorf("unknown match %q (want \"\", \"case\" or \"code\")", s)
}

func decodeEntry(raw json.RawMessage) ([]string, error) {
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		if strings.TrimSpace(one) == "" {
			return nil, errors.New("empty name")
		}
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil || len(many) == 0 {
		return nil, fmt.Errorf("entry %s is neither a name nor a non-empty list of names", string(raw))
	}
	for _, n := range many {
		if strings.TrimSpace(n) == "" {
			return nil, fmt.Errorf("entry %s has an empty name", string(raw))
		}
	}
	return many, nil
}

func appendNew(list []string, add ...string) []string {
	for _, a := range add {
		if !slices.Contains(list, a) {
			list = append(list, a)
		}
	}
	return list
}
