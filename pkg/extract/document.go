package extract

import (
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

// maxQueryBytes bounds the query text analysed.
const maxQueryBytes = 4096

// maxEvidence bounds the evidence kept per relation.
const maxEvidence = 20

var genericAnchors = map[string]bool{"here": true, "this": true, "link": true, "this page": true, "read more": true,
	"more": true, "next": true, "previous": true, "prev": true, "documentation": true, "docs": true, "source": true,
	"click here": true, "home": true, "back": true, "top": true, "edit": true, "permalink": true, "index": true}

type preparedChunk struct {
	chunk Chunk
	ctxs  []*chunkCtx
	raw   []rawMention
}

// Document extracts the entities, mentions and relations of one document. It
// never fails: empty or odd input gives an empty or partial result.
func (x *Extractor) Document(doc Document) Result {
	res := Result{DocumentID: doc.ID, Entities: []Entity{}, Mentions: []Mention{}, Relations: []Relation{}}
	aliases := make(map[string]*entry)
	var terms []Term

	// 1. prepare the chunks and collect acronym definitions over the whole document
	preps := make([]*preparedChunk, 0, len(doc.Chunks))
	for _, ch := range doc.Chunks {
		p := &preparedChunk{chunk: ch, ctxs: prepareChunk(ch, x.cfg.maxChunkBytes)}
		for _, c := range p.ctxs {
			defs := findAcronyms(c)
			x.defineAcronyms(defs, aliases)
			for _, d := range defs {
				if e := aliases[Key(d.acronym)]; e != nil && e.source == SourceAcronym {
					terms = append(terms, Term{Name: e.name, Type: e.typ, Source: TermAcronym})
				}
			}
		}
		preps = append(preps, p)
	}

	// 2. headings, title and anchors: terms for the learner, support for candidates
	support := make(map[string]bool)
	seenHeading := make(map[string]bool)
	var headingTexts []string
	addHeading := func(h string) {
		h = strings.TrimSpace(h)
		if h != "" && !seenHeading[h] {
			seenHeading[h] = true
			headingTexts = append(headingTexts, h)
		}
	}
	addHeading(doc.Title)
	for _, h := range doc.Headings {
		addHeading(h)
	}
	for _, p := range preps {
		for _, h := range p.chunk.HeadingPath {
			addHeading(h)
		}
	}
	for hi, h := range headingTexts {
		for _, rm := range x.matchText(h, aliases, false) {
			support[rm.key] = true
			if rm.source == SourcePattern && !proseKey(rm.name) {
				terms = append(terms, Term{Name: rm.name, Type: rm.typ, Source: TermHeading})
			}
			if hi == 0 && doc.Title != "" && rm.conf >= x.cfg.minConfidence && !rm.candidate {
				res.TitleEntities = appendNew(res.TitleEntities, rm.key)
			}
		}
	}
	linkEntities := make(map[string][]string)
	for _, l := range doc.Links {
		anchor := strings.Join(strings.Fields(l.Anchor), " ")
		if anchor == "" {
			continue
		}
		ms := x.matchText(anchor, aliases, false)
		for _, rm := range ms {
			support[rm.key] = true
			if !rm.candidate {
				linkEntities[l.URL] = appendNew(linkEntities[l.URL], rm.key)
			}
		}
		if n := len(strings.Fields(anchor)); n <= 4 && !genericAnchors[strings.ToLower(anchor)] && utf8.RuneCountInString(anchor) >= 2 &&
			!proseKey(anchor) {
			typ := "concept"
			if len(ms) == 1 && ms[0].start == 0 && ms[0].end == len(anchor) {
				typ = ms[0].typ
			}
			terms = append(terms, Term{Name: anchor, Type: typ, Source: TermAnchor})
		}
	}

	// 3. match every chunk
	candidateCount := make(map[string]int)
	for _, p := range preps {
		for _, c := range p.ctxs {
			m := matcher{x: x, c: c, aliases: aliases}
			ms := m.run()
			for k := range ms {
				if c.extra {
					ms[k].start, ms[k].end = -1, -1
				}
				if ms[k].candidate {
					candidateCount[ms[k].key]++
				}
			}
			p.raw = append(p.raw, ms...)
		}
	}
	for _, p := range preps {
		for _, rm := range p.raw {
			if rm.source != SourceAcronym && proseKey(rm.name) {
				continue // a learned everyday word would match all prose
			}
			switch {
			case rm.candidate:
				terms = append(terms, Term{Name: rm.name, Type: rm.typ, Source: TermCapitalised})
			case rm.source == SourcePattern && rm.code && !rm.version:
				terms = append(terms, Term{Name: rm.name, Type: rm.typ, Source: TermCode})
			case rm.source == SourcePattern && rm.typ != "version" && rm.typ != "url" && rm.typ != "file":
				terms = append(terms, Term{Name: rm.name, Type: rm.typ, Source: TermCapitalised})
			}
		}
	}
	accept := func(rm rawMention) bool {
		if rm.conf < x.cfg.minConfidence {
			return false
		}
		if rm.candidate {
			return candidateCount[rm.key] >= 2 || support[rm.key]
		}
		return true
	}

	// 4. aggregate mentions and entities
	ents := newEntityAgg(x)
	type mkey struct{ chunk, entity string }
	mentionIdx := make(map[mkey]int)
	chunkSets := make([][]string, 0, len(preps))
	chunkFirst := make([]map[string]Span, len(preps))
	for pi, p := range preps {
		chunkFirst[pi] = make(map[string]Span)
		var set []string
		for _, rm := range p.raw {
			if !accept(rm) {
				continue
			}
			ents.add(rm, aliases)
			k := mkey{p.chunk.ID, rm.key}
			idx, ok := mentionIdx[k]
			if !ok {
				idx = len(res.Mentions)
				mentionIdx[k] = idx
				res.Mentions = append(res.Mentions, Mention{ChunkID: p.chunk.ID, EntityID: rm.key})
				set = append(set, rm.key)
			}
			mn := &res.Mentions[idx]
			mn.Count++
			mn.Confidence = max(mn.Confidence, rm.conf)
			if rm.start >= 0 {
				mn.Offsets = append(mn.Offsets, Span{rm.start, rm.end})
				if _, seen := chunkFirst[pi][rm.key]; !seen {
					chunkFirst[pi][rm.key] = Span{rm.start, rm.end}
				}
			}
		}
		chunkSets = append(chunkSets, set)
	}

	// 5. relations
	rels := newRelationAgg()
	for pi, p := range preps {
		main := p.ctxs[0]
		var rms []relMention
		for _, rm := range p.raw {
			if !accept(rm) || rm.start < 0 {
				continue
			}
			if rm.parentKey == "" && qualifiedTypes[rm.typ] {
				if pn := parentName(rm.name); pn != "" {
					rm.parentKey = x.Resolve(pn)
				}
			}
			switch {
			case rm.version:
				rels.add(rm.key, rm.baseKey, RelVersionOf, 0.9, Evidence{p.chunk.ID, rm.start, rm.end})
				ents.ensure(rm.baseKey)
			case rm.parentKey != "" && rm.typ != "command":
				if ents.has(rm.parentKey) || ents.known(rm.parentKey) {
					ents.ensure(rm.parentKey)
					rels.add(rm.key, rm.parentKey, RelPartOf, 0.85, Evidence{p.chunk.ID, rm.start, rm.end})
				}
			}
			if rm.noRelation || rm.version {
				continue
			}
			rms = append(rms, relMention{key: rm.key, typ: ents.typeOf(rm.key), start: rm.start, end: rm.end,
				sent: main.atoms[rm.a0].sent, code: main.atoms[rm.a0].code})
		}
		sort.SliceStable(rms, func(a, b int) bool { return rms[a].start < rms[b].start })
		rms = mergeAdjacent(main.text, rms)
		for _, f := range relationsIn(main.text, rms, pronounsOf(main)) {
			rels.add(f.from, f.to, f.typ, f.conf, Evidence{p.chunk.ID, f.start, f.end})
		}
		_ = pi
	}

	// 6. the learner, then co-occurrence
	if l := x.cfg.learner; l != nil {
		l.Observe(doc.ID, terms, chunkSets)
	}
	x.cooccurrence(preps, chunkSets, chunkFirst, rels)

	res.Entities = ents.list()
	res.Relations = rels.list()
	res.Links = linkRelations(doc, linkEntities)
	return res
}

// qualifiedTypes are the types whose dotted names state what they are part of.
var qualifiedTypes = map[string]bool{"function": true, "method": true, "attribute": true, "class": true,
	"constant": true, "module": true, "exception": true, "decorator": true}

// matchText matches a short text (heading, anchor) on its own.
func (x *Extractor) matchText(text string, aliases map[string]*entry, lenient bool) []rawMention {
	ctxs := prepare("", text, nil, x.cfg.maxChunkBytes)
	m := matcher{x: x, c: ctxs[0], aliases: aliases, lenient: lenient}
	return m.run()
}

func pronounsOf(c *chunkCtx) []pronounAt {
	var out []pronounAt
	for _, a := range c.atoms {
		if a.first && a.code < 0 && (a.text == "It" || a.text == "They" || a.text == "it") {
			out = append(out, pronounAt{sent: a.sent, start: a.start, end: a.end})
		}
	}
	return out
}

// mergeAdjacent drops a mention that repeats the previous one right away, as in
// "write-ahead log (WAL)".
func mergeAdjacent(text string, ms []relMention) []relMention {
	out := ms[:0]
	for _, m := range ms {
		if n := len(out); n > 0 && out[n-1].key == m.key && m.start >= out[n-1].end &&
			strings.Trim(text[out[n-1].end:m.start], " ()") == "" {
			out[n-1].end = max(out[n-1].end, m.end)
			continue
		}
		if n := len(out); n > 0 && m.start < out[n-1].end {
			continue // overlapping
		}
		out = append(out, m)
	}
	return out
}

func (x *Extractor) cooccurrence(preps []*preparedChunk, sets [][]string, first []map[string]Span, rels *relationAgg) {
	capped := make([][]string, len(sets))
	for i, s := range sets {
		if len(s) > x.cfg.maxCooccur {
			s = s[:x.cfg.maxCooccur]
		}
		capped[i] = dedup(s)
	}
	evidence := func(a, b string) []Evidence {
		var ev []Evidence
		for i, s := range capped {
			if len(ev) >= 10 {
				break
			}
			_, okA := slices.BinarySearch(s, a)
			_, okB := slices.BinarySearch(s, b)
			if okA && okB {
				sa, sb := first[i][a], first[i][b]
				ev = append(ev, Evidence{preps[i].chunk.ID, min(sa.Start, sb.Start), max(sa.End, sb.End)})
			}
		}
		return ev
	}
	var pairs []Pair
	if l := x.cfg.learner; l != nil {
		local := make(map[[2]string]bool)
		for _, s := range capped {
			for i, a := range s {
				for _, b := range s[i+1:] {
					local[[2]string{a, b}] = true
				}
			}
		}
		for p := range local {
			ca, cb, cab, n := l.Counts(p[0], p[1])
			if cab < x.cfg.minSupport {
				continue
			}
			if v := NPMI(ca, cb, cab, n); v >= x.cfg.minNPMI {
				pairs = append(pairs, Pair{A: p[0], B: p[1], Count: cab, NPMI: v})
			}
		}
		sortPairs(pairs)
	} else if len(capped) >= 2 {
		pairs = Cooccurrence(capped, x.cfg.minSupport, x.cfg.minNPMI)
	}
	for _, p := range pairs {
		ev := evidence(p.A, p.B)
		rels.addCooccur(p, ev)
	}
}

func linkRelations(doc Document, entities map[string][]string) []LinkRelation {
	idx := make(map[string]int)
	var out []LinkRelation
	for _, l := range doc.Links {
		u := strings.TrimSpace(l.URL)
		if u == "" {
			continue
		}
		i, ok := idx[u]
		if !ok {
			i = len(out)
			idx[u] = i
			out = append(out, LinkRelation{From: doc.ID, To: u, Type: RelLinksTo, Entities: entities[l.URL]})
		}
		out[i].Count++
		if a := strings.Join(strings.Fields(l.Anchor), " "); a != "" && len(out[i].Anchors) < 10 {
			out[i].Anchors = appendNew(out[i].Anchors, a)
		}
	}
	return out
}

// Query finds the entities of a search query. It is lenient with case ("postgres
// wal" finds PostgreSQL and WAL) and fast: it works on the query alone.
func (x *Extractor) Query(q string) []QueryEntity {
	if len(q) > maxQueryBytes {
		cut := maxQueryBytes
		for cut > 0 && !utf8.RuneStart(q[cut]) {
			cut--
		}
		q = q[:cut]
	}
	out := []QueryEntity{}
	if strings.TrimSpace(q) == "" {
		return out
	}
	ctxs := prepare("", q, nil, maxQueryBytes)
	aliases := make(map[string]*entry)
	x.defineAcronyms(findAcronyms(ctxs[0]), aliases)
	m := matcher{x: x, c: ctxs[0], aliases: aliases, lenient: true}
	for _, rm := range m.run() {
		conf := rm.conf
		if rm.candidate {
			conf = confCand
		}
		if conf < x.cfg.queryMinConfidence {
			continue
		}
		out = append(out, QueryEntity{Text: q[rm.start:rm.end], ID: rm.key, Name: rm.name, Type: rm.typ,
			Confidence: conf, Start: rm.start, End: rm.end})
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Start < out[b].Start })
	return out
}
