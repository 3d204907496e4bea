package extract

import (
	"slices"
	"strings"
)

// entityAgg merges the mentions of a document into entities. A known entity
// keeps its declared name and type; an entity found by patterns takes the type
// with the most confidence over its mentions (ties go to the more specific type
// by taxonomy rank) and the surface form of its best mention as name.
type entityAgg struct {
	x     *Extractor
	byKey map[string]*entAcc
	order []string
}

type entAcc struct {
	id, name, source string
	known            *entry
	types            map[string]float64
	nameConf         float64
	maxConf          float64
	count            int
	aliases          []string
}

func newEntityAgg(x *Extractor) *entityAgg {
	return &entityAgg{x: x, byKey: make(map[string]*entAcc)}
}

func (a *entityAgg) get(key string) *entAcc {
	acc, ok := a.byKey[key]
	if !ok {
		acc = &entAcc{id: key, types: make(map[string]float64)}
		a.byKey[key] = acc
		a.order = append(a.order, key)
	}
	return acc
}

func (a *entityAgg) add(rm rawMention, aliases map[string]*entry) {
	acc := a.get(rm.key)
	if acc.known == nil && rm.source != SourcePattern {
		if e, ok := aliases[rm.key]; ok && e.id == rm.key {
			acc.known = e
		} else if info, _ := a.x.lookup(rm.key); info != nil && info.e.id == rm.key {
			acc.known = info.e
		}
	}
	acc.count++
	acc.types[rm.typ] += rm.conf
	acc.maxConf = max(acc.maxConf, rm.conf)
	if rm.conf > acc.nameConf {
		acc.nameConf, acc.name, acc.source = rm.conf, rm.name, rm.source
	}
	if s := strings.Join(strings.Fields(rm.surface), " "); s != "" && len(acc.aliases) < 10 {
		acc.aliases = appendNew(acc.aliases, s)
	}
}

// ensure adds a known entity that the document refers to without a mention of
// its own (the module of a qualified name, the product of a version).
func (a *entityAgg) ensure(key string) {
	if _, ok := a.byKey[key]; ok {
		return
	}
	info, _ := a.x.lookup(key)
	if info == nil {
		return
	}
	acc := a.get(key)
	acc.known = info.e
	acc.maxConf = 0.5
}

func (a *entityAgg) has(key string) bool {
	_, ok := a.byKey[key]
	return ok
}

func (a *entityAgg) known(key string) bool {
	info, _ := a.x.lookup(key)
	return info != nil && info.e.id == key
}

func (a *entityAgg) typeOf(key string) string {
	acc, ok := a.byKey[key]
	if !ok {
		return "concept"
	}
	if acc.known != nil {
		return acc.known.typ
	}
	best, bw := "concept", -1.0
	for t, w := range acc.types {
		if w > bw || w == bw && a.x.tax.rank(t) < a.x.tax.rank(best) {
			best, bw = t, w
		}
	}
	return best
}

func (a *entityAgg) list() []Entity {
	out := make([]Entity, 0, len(a.order))
	for _, k := range a.order {
		acc := a.byKey[k]
		e := Entity{ID: acc.id, Type: a.typeOf(k), Confidence: min(0.99, acc.maxConf+0.02*float64(max(0, acc.count-1)))}
		if acc.known != nil {
			e.Name, e.Source = acc.known.name, acc.known.source
			e.Aliases = slices.Clone(acc.known.aliases)
		} else {
			e.Name, e.Source = acc.name, acc.source
		}
		for _, s := range acc.aliases {
			if s != e.Name && len(e.Aliases) < 20 {
				e.Aliases = appendNew(e.Aliases, s)
			}
		}
		out = append(out, e)
	}
	return out
}

// relationAgg merges relations found several times; each keeps its evidence.
type relationAgg struct {
	byKey map[[3]string]*Relation
	order [][3]string
}

func newRelationAgg() *relationAgg {
	return &relationAgg{byKey: make(map[[3]string]*Relation)}
}

func (r *relationAgg) add(from, to, typ string, conf float64, ev Evidence) {
	if from == "" || to == "" || from == to {
		return
	}
	k := [3]string{from, to, typ}
	rel, ok := r.byKey[k]
	if !ok {
		rel = &Relation{From: from, To: to, Type: typ}
		r.byKey[k] = rel
		r.order = append(r.order, k)
	}
	rel.Weight++
	rel.Confidence = min(0.99, 1-(1-rel.Confidence)*(1-conf))
	if len(rel.Evidence) < maxEvidence && !slices.Contains(rel.Evidence, ev) {
		rel.Evidence = append(rel.Evidence, ev)
	}
}

func (r *relationAgg) addCooccur(p Pair, ev []Evidence) {
	k := [3]string{p.A, p.B, RelCoOccurs}
	if _, ok := r.byKey[k]; ok {
		return
	}
	r.byKey[k] = &Relation{From: p.A, To: p.B, Type: RelCoOccurs, Weight: p.NPMI,
		Confidence: cooccurConfidence(p.NPMI, p.Count), Evidence: ev}
	r.order = append(r.order, k)
}

func (r *relationAgg) list() []Relation {
	out := make([]Relation, 0, len(r.order))
	for _, k := range r.order {
		out = append(out, *r.byKey[k])
	}
	return out
}
