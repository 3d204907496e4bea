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
	r := &docRun{
		x:              x,
		doc:            doc,
		res:            Result{DocumentID: doc.ID, Entities: []Entity{}, Mentions: []Mention{}, Relations: []Relation{}},
		aliases:        make(map[string]*entry),
		support:        make(map[string]bool),
		linkEntities:   make(map[string][]string),
		candidateCount: make(map[string]int),
		ents:           newEntityAgg(x),
		rels:           newRelationAgg(),
	}
	r.prepareChunks()
	r.headingTerms()
	r.anchorTerms()
	r.matchChunks()
	r.aggregateMentions()
	r.structuralRelations()
	if l := x.cfg.learner; l != nil {
		l.Observe(doc.ID, r.terms, r.chunkSets)
	}
	x.cooccurrence(r.preps, r.chunkSets, r.chunkFirst, r.rels)

	r.res.Entities = r.ents.list()
	r.res.Relations = r.rels.list()
	r.res.Links = linkRelations(doc, r.linkEntities)
	return r.res
}

// docRun is the state one Document call passes between its steps, in order:
// prepare chunks (acronyms over the whole document), heading and anchor terms,
// match every chunk, aggregate mentions and entities, relations, then the
// learner and co-occurrence.
type docRun struct {
	x       *Extractor
	doc     Document
	res     Result
	aliases map[string]*entry
	// terms are handed to the learner, in the order they were found.
	terms []Term
	preps []*preparedChunk
	// support holds the keys matched in the title, headings or link anchors: a
	// candidate seen there is accepted even when it occurs once.
	support        map[string]bool
	linkEntities   map[string][]string
	candidateCount map[string]int
	ents           *entityAgg
	rels           *relationAgg
	// chunkSets lists each chunk's accepted entity keys in first-mention order;
	// chunkFirst holds each key's first span per chunk.
	chunkSets  [][]string
	chunkFirst []map[string]Span
}

// prepareChunks prepares the chunks and collects acronym definitions over the
// whole document.
func (r *docRun) prepareChunks() {
	r.preps = make([]*preparedChunk, 0, len(r.doc.Chunks))
	for _, ch := range r.doc.Chunks {
		p := &preparedChunk{chunk: ch, ctxs: prepareChunk(ch, r.x.cfg.maxChunkBytes)}
		for _, c := range p.ctxs {
			defs := findAcronyms(c)
			r.x.defineAcronyms(defs, r.aliases)
			for _, d := range defs {
				if e := r.aliases[Key(d.acronym)]; e != nil && e.source == SourceAcronym {
					r.terms = append(r.terms, Term{Name: e.name, Type: e.typ, Source: TermAcronym})
				}
			}
		}
		r.preps = append(r.preps, p)
	}
}

// headingTexts returns the title, the document's headings and the chunks'
// heading paths, trimmed, without empties or repeats; the title comes first.
func (r *docRun) headingTexts() []string {
	seen := make(map[string]bool)
	var texts []string
	add := func(h string) {
		h = strings.TrimSpace(h)
		if h != "" && !seen[h] {
			seen[h] = true
			texts = append(texts, h)
		}
	}
	add(r.doc.Title)
	for _, h := range r.doc.Headings {
		add(h)
	}
	for _, p := range r.preps {
		for _, h := range p.chunk.HeadingPath {
			add(h)
		}
	}
	return texts
}

// headingTerms matches the title and headings: terms for the learner, support
// for candidates, and the entities the title names.
func (r *docRun) headingTerms() {
	for hi, h := range r.headingTexts() {
		for _, rm := range r.x.matchText(h, r.aliases, false) {
			r.support[rm.key] = true
			if rm.source == SourcePattern && !proseKey(rm.name) {
				r.terms = append(r.terms, Term{Name: rm.name, Type: rm.typ, Source: TermHeading})
			}
			if hi == 0 && r.doc.Title != "" && rm.conf >= r.x.cfg.minConfidence && !rm.candidate {
				r.res.TitleEntities = appendNew(r.res.TitleEntities, rm.key)
			}
		}
	}
}

// anchorTerms matches the link anchors: support for candidates, the entities
// each link names, and short specific anchors as terms for the learner.
func (r *docRun) anchorTerms() {
	for _, l := range r.doc.Links {
		anchor := strings.Join(strings.Fields(l.Anchor), " ")
		if anchor == "" {
			continue
		}
		ms := r.x.matchText(anchor, r.aliases, false)
		for _, rm := range ms {
			r.support[rm.key] = true
			if !rm.candidate {
				r.linkEntities[l.URL] = appendNew(r.linkEntities[l.URL], rm.key)
			}
		}
		if n := len(strings.Fields(anchor)); n <= 4 && !genericAnchors[strings.ToLower(anchor)] && utf8.RuneCountInString(anchor) >= 2 &&
			!proseKey(anchor) {
			typ := "concept"
			if len(ms) == 1 && ms[0].start == 0 && ms[0].end == len(anchor) {
				typ = ms[0].typ
			}
			r.terms = append(r.terms, Term{Name: anchor, Type: typ, Source: TermAnchor})
		}
	}
}

// matchChunks matches every chunk, counts the candidates and collects the
// learner's terms from the matches.
func (r *docRun) matchChunks() {
	for _, p := range r.preps {
		for _, c := range p.ctxs {
			m := matcher{x: r.x, c: c, aliases: r.aliases}
			ms := m.run()
			for k := range ms {
				if c.extra {
					ms[k].start, ms[k].end = -1, -1
				}
				if ms[k].candidate {
					r.candidateCount[ms[k].key]++
				}
			}
			p.raw = append(p.raw, ms...)
		}
	}
	for _, p := range r.preps {
		for _, rm := range p.raw {
			if rm.source != SourceAcronym && proseKey(rm.name) {
				continue // a learned everyday word would match all prose
			}
			switch {
			case rm.candidate:
				r.terms = append(r.terms, Term{Name: rm.name, Type: rm.typ, Source: TermCapitalised})
			case rm.source == SourcePattern && rm.code && !rm.version:
				r.terms = append(r.terms, Term{Name: rm.name, Type: rm.typ, Source: TermCode})
			case rm.source == SourcePattern && rm.typ != "version" && rm.typ != "url" && rm.typ != "file":
				r.terms = append(r.terms, Term{Name: rm.name, Type: rm.typ, Source: TermCapitalised})
			}
		}
	}
}

// accept reports whether a raw mention is kept: confident enough, and for a
// candidate seen twice in the document or supported by a heading or anchor.
func (r *docRun) accept(rm rawMention) bool {
	if rm.conf < r.x.cfg.minConfidence {
		return false
	}
	if rm.candidate {
		return r.candidateCount[rm.key] >= 2 || r.support[rm.key]
	}
	return true
}

// aggregateMentions aggregates the accepted mentions per chunk and entity, and
// the entities.
func (r *docRun) aggregateMentions() {
	type mkey struct{ chunk, entity string }
	mentionIdx := make(map[mkey]int)
	r.chunkSets = make([][]string, 0, len(r.preps))
	r.chunkFirst = make([]map[string]Span, len(r.preps))
	for pi, p := range r.preps {
		r.chunkFirst[pi] = make(map[string]Span)
		var set []string
		for _, rm := range p.raw {
			if !r.accept(rm) {
				continue
			}
			r.ents.add(rm, r.aliases)
			k := mkey{p.chunk.ID, rm.key}
			idx, ok := mentionIdx[k]
			if !ok {
				idx = len(r.res.Mentions)
				mentionIdx[k] = idx
				r.res.Mentions = append(r.res.Mentions, Mention{ChunkID: p.chunk.ID, EntityID: rm.key})
				set = append(set, rm.key)
			}
			mn := &r.res.Mentions[idx]
			mn.Count++
			mn.Confidence = max(mn.Confidence, rm.conf)
			if rm.start >= 0 {
				mn.Offsets = append(mn.Offsets, Span{rm.start, rm.end})
				if _, seen := r.chunkFirst[pi][rm.key]; !seen {
					r.chunkFirst[pi][rm.key] = Span{rm.start, rm.end}
				}
			}
		}
		r.chunkSets = append(r.chunkSets, set)
	}
}

// structuralRelations adds, per chunk, the relations the names state (version
// of, part of) and those the sentences state.
func (r *docRun) structuralRelations() {
	for _, p := range r.preps {
		main := p.ctxs[0]
		var rms []relMention
		for _, rm := range p.raw {
			if !r.accept(rm) || rm.start < 0 {
				continue
			}
			r.nameRelations(&rm, p.chunk.ID)
			if rm.noRelation || rm.version {
				continue
			}
			rms = append(rms, relMention{key: rm.key, typ: r.ents.typeOf(rm.key), start: rm.start, end: rm.end,
				sent: main.atoms[rm.a0].sent, code: main.atoms[rm.a0].code})
		}
		sort.SliceStable(rms, func(a, b int) bool { return rms[a].start < rms[b].start })
		rms = mergeAdjacent(main.text, rms)
		for _, f := range relationsIn(main.text, rms, pronounsOf(main)) {
			r.rels.add(f.from, f.to, f.typ, f.conf, Evidence{p.chunk.ID, f.start, f.end})
		}
	}
}

// nameRelations adds the relations a mention's name states: a version is a
// version of its base, a dotted name is part of its parent when the parent is
// an entity. rm is the caller's copy; its parent key is filled in here.
func (r *docRun) nameRelations(rm *rawMention, chunkID string) {
	if rm.parentKey == "" && qualifiedTypes[rm.typ] {
		if pn := parentName(rm.name); pn != "" {
			rm.parentKey = r.x.Resolve(pn)
		}
	}
	switch {
	case rm.version:
		r.rels.add(rm.key, rm.baseKey, RelVersionOf, 0.9, Evidence{chunkID, rm.start, rm.end})
		r.ents.ensure(rm.baseKey)
	case rm.parentKey != "" && rm.typ != "command":
		if r.ents.has(rm.parentKey) || r.ents.known(rm.parentKey) {
			r.ents.ensure(rm.parentKey)
			r.rels.add(rm.key, rm.parentKey, RelPartOf, 0.85, Evidence{chunkID, rm.start, rm.end})
		}
	}
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
	if x.cfg.maxDocPairs > 0 && len(pairs) > x.cfg.maxDocPairs {
		pairs = pairs[:x.cfg.maxDocPairs] // sorted: the strongest first
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
