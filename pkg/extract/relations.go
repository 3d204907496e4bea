package extract

import (
	"strings"
	"unicode"
)

// cue is a lexical pattern between two mentions: "X <words> Y".
type cue struct {
	words   []string
	typ     string
	reverse bool // the relation goes from Y to X ("X is used by Y")
	conf    float64
}

func cues(typ string, reverse bool, conf float64, phrases ...string) []cue {
	out := make([]cue, 0, len(phrases))
	for _, p := range phrases {
		out = append(out, cue{words: strings.Fields(p), typ: typ, reverse: reverse, conf: conf})
	}
	return out
}

// cueTable lists the patterns, after determiners and adverbs are removed from the
// text between the two mentions.
var cueTable = func() []cue {
	var t []cue
	t = append(t, cues(RelUses, false, 0.8, "uses", "use", "is using", "are using", "relies on", "rely on", "leverages",
		"leverage", "employs", "employ", "makes use of", "make use of", "utilizes", "utilises", "integrates", "integrate",
		"is powered by", "powered by", "talks to", "connects to")...)
	t = append(t, cues(RelUses, true, 0.75, "is used by", "are used by", "used by", "is used in", "is leveraged by")...)
	t = append(t, cues(RelDependsOn, false, 0.8, "depends on", "depend on", "is dependent on", "requires", "require",
		"needs", "has dependency on", "have dependency on")...)
	t = append(t, cues(RelDependsOn, true, 0.75, "is required by", "required by", "is dependency of")...)
	t = append(t, cues(RelPartOf, false, 0.8, "is part of", "are part of", "is component of", "is module of",
		"is submodule of", "belongs to", "is included in", "are included in", "is query language of", "is language of",
		"is subpackage of", "is package of", "is included with", "is bundled with", "are bundled with", "ships as part of")...)
	t = append(t, cues(RelPartOf, true, 0.75, "ships with", "ship with", "includes", "include", "contains", "contain",
		"comprises", "bundles", "embeds", "embed", "consists of", "comes with", "come with")...)
	t = append(t, cues(RelSupports, false, 0.8, "supports", "support", "has support for", "adds support for",
		"provides support for", "is compatible with", "are compatible with", "works with", "work with")...)
	t = append(t, cues(RelSupports, true, 0.75, "is supported by", "are supported by", "supported by")...)
	t = append(t, cues(RelBuiltOn, false, 0.8, "is built on", "built on", "are built on", "is built on top of",
		"built on top of", "are built on top of", "is based on", "based on", "are based on", "sits on top of",
		"runs on top of", "is wrapper around", "is layer on top of", "is built upon", "built upon", "builds on",
		"build on", "builds upon", "is layered on", "layers on top of")...)
	t = append(t, cues(RelExtends, false, 0.8, "extends", "extend", "is extension of", "is superset of",
		"inherits from", "inherit from", "is subclass of", "derives from", "is derived from", "is fork of", "subclasses")...)
	t = append(t, cues(RelImplements, false, 0.8, "implements", "implement", "is implementation of",
		"is reference implementation of", "provides implementation of", "is standard implementation of")...)
	t = append(t, cues(RelImplements, true, 0.75, "is implemented by", "are implemented by", "implemented by")...)
	t = append(t, cues(RelReplaces, false, 0.8, "replaces", "replace", "supersedes", "is successor of",
		"is successor to", "succeeds", "is replacement for", "is drop in replacement for", "obsoletes")...)
	t = append(t, cues(RelReplaces, true, 0.75, "is replaced by", "was replaced by", "are replaced by",
		"is superseded by", "was superseded by", "is predecessor of")...)
	t = append(t, cues(RelWrittenIn, false, 0.85, "is written in", "written in", "are written in", "is implemented in",
		"implemented in", "is developed in", "is coded in", "is programmed in")...)
	t = append(t, cues(RelRunsOn, false, 0.75, "runs on", "run on", "runs over", "run over", "runs in", "runs inside",
		"is deployed on", "deploys to", "runs atop", "is hosted on", "is deployed to")...)
	t = append(t, cues(RelProvides, false, 0.7, "provides", "provide", "offers", "offer", "exposes", "expose")...)
	t = append(t, cues(RelAltTo, false, 0.7, "is alternative to", "are alternatives to", "alternative to",
		"competes with", "is competitor of")...)
	t = append(t, cues(RelDevelopedBy, false, 0.8, "developed by", "is developed by", "was developed by", "created by",
		"was created by", "is maintained by", "maintained by", "designed by", "was designed by", "invented by",
		"was invented by", "is developed and maintained by", "is sponsored by", "is backed by")...)
	t = append(t, cues(RelVersionOf, false, 0.8, "is version of", "is revision of", "is major revision of",
		"is new version of", "is latest version of", "is release of", "is minor revision of")...)
	t = append(t, cues(RelIsA, false, 0.7, "is", "are", "is one of", "is type of", "is kind of", "is form of",
		"is variant of", "are types of", "are kinds of", "is example of", "is instance of", "is special case of")...)
	return t
}()

var relFillers = map[string]bool{
	"a": true, "an": true, "the": true, "also": true, "now": true, "often": true, "usually": true, "typically": true,
	"directly": true, "internally": true, "natively": true, "fully": true, "mainly": true, "primarily": true,
	"optionally": true, "automatically": true, "still": true, "already": true, "always": true, "generally": true,
	"commonly": true, "largely": true, "heavily": true, "widely": true, "can": true, "could": true, "may": true,
	"might": true, "will": true, "would": true, "should": true, "must": true, "just": true, "only": true, "even": true,
	"its": true, "their": true, "simply": true, "transparently": true, "actively": true, "officially": true,
	"originally": true, "partly": true, "mostly": true, "entirely": true, "newer": true, "modern": true, "most": true,
	"very": true, "well": true, "optional": true,
}

var negations = map[string]bool{"not": true, "no": true, "never": true, "doesn": true, "don": true, "isn": true,
	"aren": true, "cannot": true, "can't": true, "won": true, "without": true, "nor": true, "neither": true, "t": true}

var conjunctions = map[string]bool{"and": true, "or": true, "but": true, "while": true, "whereas": true, "so": true,
	"because": true, "when": true, "if": true, "although": true, "though": true, "since": true, "unless": true}

var relativePronouns = map[string]bool{"which": true, "that": true, "who": true, "whose": true}

var pronouns = map[string]bool{"it": true, "this": true, "they": true}

var listWords = map[string]bool{",": true, "and": true, "or": true, "as": true, "well": true, "also": true, "the": true,
	"a": true, "an": true, "either": true, "both": true}

// isaTargets are the types an IS_A edge may point to.
var isaTargets = map[string]bool{"concept": true, "data_structure": true, "design_pattern": true, "algorithm": true,
	"ml_model": true, "cryptographic_algorithm": true, "metric": true, "vulnerability": true}

// headBoundary words may follow the head of a noun phrase.
var headBoundary = map[string]bool{"that": true, "which": true, "who": true, "with": true, "for": true, "in": true,
	"on": true, "of": true, "by": true, "to": true, "from": true, "and": true, "or": true, "but": true, "used": true,
	"designed": true, "built": true, "written": true, "based": true, "developed": true, "originally": true,
	"pre": true, "trained": true, "where": true, "when": true, "is": true, "are": true, "was": true, "as": true,
	"such": true, "like": true, "than": true, "at": true, "via": true, "through": true, "using": true}

// relMention is a mention that can take part in a relation.
type relMention struct {
	key        string
	typ        string
	start, end int
	sent       int
	virtual    bool // a pronoun standing for key
	code       int  // code region of the mention, or -1
	head       int  // index of the mention this one describes (apposition, predicate), or -1
}

type relFound struct {
	from, to, typ string
	conf          float64
	start, end    int
}

// gapWords splits the text between two mentions into lower-case words and
// commas, without fillers.
func gapWords(gap string) (words []string, raw []string) {
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			w := cur.String()
			raw = append(raw, w)
			if !relFillers[w] {
				words = append(words, w)
			}
			cur.Reset()
		}
	}
	for _, r := range gap {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'':
			cur.WriteRune(unicode.ToLower(r))
		case r == ',' || r == ';' || r == ':' || r == '(' || r == ')':
			flush()
			words = append(words, string(r))
			raw = append(raw, string(r))
		default:
			flush()
		}
	}
	flush()
	return words, raw
}

func hasAny(words []string, set map[string]bool) bool {
	for _, w := range words {
		if set[w] {
			return true
		}
	}
	return false
}

// pronounAt is a sentence-initial "It" or "They".
type pronounAt struct{ sent, start, end int }

// relationsIn extracts lexical relations from one chunk. ms must be sorted by
// start; a sentence that starts with a pronoun gets a virtual mention of the
// first entity of the previous sentence.
func relationsIn(text string, ms []relMention, prons []pronounAt) []relFound {
	var out []relFound
	pi := 0
	var ref *relMention
	for s0 := 0; s0 < len(ms); {
		s1 := s0
		for s1 < len(ms) && ms[s1].sent == ms[s0].sent {
			s1++
		}
		sent := ms[s0].sent
		for pi < len(prons) && prons[pi].sent < sent {
			pi++
		}
		list := ms[s0:s1]
		if pi < len(prons) && prons[pi].sent == sent && ref != nil && prons[pi].end <= ms[s0].start {
			v := relMention{key: ref.key, typ: ref.typ, start: prons[pi].start, end: prons[pi].end, sent: sent, virtual: true, code: -1}
			list = append([]relMention{v}, list...)
		} else {
			list = append([]relMention(nil), list...)
		}
		out = append(out, sentenceRelations(text, list)...)
		first := list[0]
		ref = &first
		s0 = s1
	}
	return out
}

// sentenceRelations applies the cue table to consecutive mentions of one
// sentence.
func sentenceRelations(text string, ms []relMention) []relFound {
	for k := range ms {
		ms[k].head = -1
	}
	s := sentenceScan{text: text, ms: ms}
	for k := 0; k+1 < len(ms); k++ {
		k = s.pair(k)
	}
	return s.out
}

// sentenceScan is the state of sentenceRelations: the mentions, whose heads it
// fills in, the index of the mention the current clause is about, and the
// relations found so far.
type sentenceScan struct {
	text          string
	ms            []relMention
	clauseSubject int
	out           []relFound
}

// pair reads the words between mentions k and k+1 and records what they state.
// It returns the index the scan continues after (k, or the last object of a
// list it consumed).
func (s *sentenceScan) pair(k int) int {
	ms := s.ms
	l, r := ms[k], ms[k+1]
	if l.key == r.key || l.code >= 0 && l.code == r.code {
		return k // the words between are code, not a statement
	}
	gap := s.text[l.end:r.start]
	if len(gap) > 400 {
		return k // too far apart to be one statement
	}
	words, _ := gapWords(gap)
	switch {
	case len(words) > 20:
	case len(words) == 0:
		if ms[k].head >= 0 {
			ms[k+1].head = ms[k].head // a chain of modifiers: "machine learning framework"
		}
	case words[0] == "," && appositionGap(gap):
		s.apposition(k)
	case len(words) == 2 && words[0] == "such" && words[1] == "as":
		s.suchAs(k)
	default:
		return s.cueRelations(k, words)
	}
	return k
}

// apposition handles "X, a Y".
func (s *sentenceScan) apposition(k int) {
	l, r := s.ms[k], s.ms[k+1]
	if isaTargets[r.typ] && isHead(s.text, r.end) {
		s.out = append(s.out, relFound{from: subjectKey(s.ms, k), to: r.key, typ: RelIsA, conf: 0.6, start: l.start, end: r.end})
	}
	s.ms[k+1].head = headOf(s.ms, k)
}

// suchAs handles "Y such as X1, X2".
func (s *sentenceScan) suchAs(k int) {
	ms := s.ms
	l := ms[k]
	if !isaTargets[l.typ] {
		return
	}
	for q := k + 1; q < len(ms) && q-k <= 20; q++ {
		if q > k+1 && !listGap(s.text[ms[q-1].end:ms[q].start]) {
			break
		}
		s.out = append(s.out, relFound{from: ms[q].key, to: l.key, typ: RelIsA, conf: 0.7, start: l.start, end: ms[q].end})
	}
}

// cueRelations handles a gap whose words hold a cue ("X is written in Y"): it finds the
// subject, checks the predicate and records the relations between the lists of
// subjects and objects. It returns the index the scan continues after.
func (s *sentenceScan) cueRelations(k int, words []string) int {
	c, prefix, suffix, ok := findCue(words)
	if !ok {
		return k
	}
	if hasAny(prefix, negations) || hasAny(suffix, negations) || containsWord(suffix, ";") || containsWord(suffix, ":") {
		return k
	}
	subj, conf, ok := s.cueSubject(k, c, prefix)
	if !ok || !s.predicate(k, subj, c, prefix, suffix) {
		return k
	}
	ms := s.ms
	if ms[subj].key == ms[k+1].key {
		return k
	}
	subjects := []int{subj}
	// a list of subjects: "Milvus and Qdrant use HNSW"
	if subj == k {
		for q := k; q > 0 && k-q < 20 && listGap(s.text[ms[q-1].end:ms[q].start]); q-- {
			subjects = append(subjects, q-1)
		}
	}
	objects := []int{k + 1}
	for q := k + 2; q < len(ms) && q-k < 20 && listGap(s.text[ms[q-1].end:ms[q].start]); q++ {
		objects = append(objects, q)
	}
	s.crossRelations(c, conf, subjects, objects)
	s.clauseSubject = headOf(ms, subj)
	return objects[len(objects)-1] - 1
}

// cueSubject finds the subject of a cue from the words before it (prefix):
// mention k, its head, or the clause's subject when a pronoun, a conjunction
// or a clause break comes first (at 0.9 of the cue's confidence). ok is false
// when the prefix rules the statement out.
func (s *sentenceScan) cueSubject(k int, c cue, prefix []string) (subj int, conf float64, ok bool) {
	ms := s.ms
	conf = c.conf
	subj = k
	switch {
	case containsWord(prefix, ";") || containsWord(prefix, ":"):
		after := prefix[lastIndex(prefix, ";", ":")+1:]
		if len(after) == 0 || !pronouns[after[0]] {
			return 0, 0, false
		}
		subj = s.clauseSubject
		conf *= 0.9
	case len(prefix) > 0 && hasAny(prefix, pronouns):
		subj = s.clauseSubject
		conf *= 0.9
	case len(prefix) > 0 && relativePronouns[prefix[0]] || len(prefix) > 1 && prefix[0] == "," && relativePronouns[prefix[1]]:
		subj = k
		if ms[k].head >= 0 {
			subj = ms[k].head
		}
	case len(prefix) > 0 && (conjunctions[prefix[len(prefix)-1]] || prefix[len(prefix)-1] == "is" && len(prefix) >= 2 && conjunctions[prefix[len(prefix)-2]]):
		subj = s.clauseSubject
		conf *= 0.9
	case hasAny(prefix, conjunctions) || len(prefix) > 4 || containsWord(prefix, ","):
		return 0, 0, false
	default:
		if ms[k].head >= 0 {
			subj = ms[k].head
		}
	}
	if participle[c.words[0]] && subj == k && k > 0 && ms[k].head < 0 && !containsWord(prefix, "is") && !containsWord(prefix, "are") && !containsWord(prefix, "was") {
		return 0, 0, false // "a framework for X based on Y": the participle describes a noun we do not see
	}
	return subj, conf, true
}

// predicate checks the words after the cue (suffix) and, for an is-a cue, the
// predicate noun; it records the subject as the head of a predicate noun
// phrase. It reports whether the cue states a relation.
func (s *sentenceScan) predicate(k, subj int, c cue, prefix, suffix []string) bool {
	if c.typ == RelIsA && isCopula(c) && hasParticiple(suffix) {
		return false // passive voice, not a copula: "is deployed as"
	}
	if len(suffix) > 3 && !endsWithListIntro(suffix) {
		return false
	}
	if hasAny(suffix, conjunctions) && !endsWithListIntro(suffix) {
		return false
	}
	if c.typ != RelIsA {
		return true
	}
	r := s.ms[k+1]
	if !isaTargets[r.typ] || !isHead(s.text, r.end) || len(prefix) > 0 {
		// a modifier of a predicate noun phrase: the phrase still describes the subject
		if isCopula(c) && len(prefix) == 0 && len(suffix) <= 3 && !containsWord(suffix, ",") {
			s.ms[k+1].head = headOf(s.ms, subj)
		}
		return false
	}
	s.ms[k+1].head = headOf(s.ms, subj)
	return true
}

// crossRelations records the cue's relation from every subject to every
// object that fits its types; pairs beyond the first get 0.95 of conf.
func (s *sentenceScan) crossRelations(c cue, conf float64, subjects, objects []int) {
	ms := s.ms
	for si, sb := range subjects {
		for oi, o := range objects {
			from, to := ms[sb].key, ms[o].key
			if c.reverse {
				from, to = to, from
			}
			if from == to || !typeFits(c.typ, ms[sb].typ, ms[o].typ, c.reverse) {
				continue
			}
			cf := conf
			if si > 0 || oi > 0 {
				cf *= 0.95
			}
			s.out = append(s.out, relFound{from: from, to: to, typ: c.typ, conf: cf,
				start: min(ms[sb].start, ms[o].start), end: max(ms[sb].end, ms[o].end)})
		}
	}
}

var participle = map[string]bool{"based": true, "built": true, "written": true, "implemented": true, "used": true,
	"developed": true, "created": true, "maintained": true, "designed": true, "powered": true, "supported": true,
	"required": true, "invented": true, "replaced": true, "superseded": true}

func hasParticiple(ws []string) bool {
	for _, w := range ws {
		if len(w) > 4 && (strings.HasSuffix(w, "ed") || strings.HasSuffix(w, "ing")) {
			return true
		}
	}
	return false
}

// relationTargets restricts what some relation types may point to.
var relationTargets = map[string]map[string]bool{
	RelWrittenIn: {"programming_language": true, "query_language": true, "markup_language": true},
	RelDevelopedBy: {"company": true, "organization": true, "foundation": true, "person": true,
		"standards_body": true, "product": true},
	RelRunsOn: {"operating_system": true, "runtime": true, "hardware": true, "protocol": true, "cloud_service": true,
		"container_platform": true, "web_server": true, "software": true, "tool": true, "concept": true},
	RelImplements: {"protocol": true, "standard": true, "algorithm": true, "cryptographic_algorithm": true, "api": true,
		"concept": true, "design_pattern": true, "data_structure": true, "programming_language": true, "class": true,
		"file_format": true, "query_language": true, "character_encoding": true},
}

// typeFits checks the target type of a relation; subject and object are the
// mentions on the left and right of the cue.
func typeFits(rel, subjTyp, objTyp string, reverse bool) bool {
	targets, ok := relationTargets[rel]
	if !ok {
		return true
	}
	to := objTyp
	if reverse {
		to = subjTyp
	}
	return targets[to]
}

func isCopula(c cue) bool { return len(c.words) == 1 && (c.words[0] == "is" || c.words[0] == "are") }

func headOf(ms []relMention, k int) int {
	for ms[k].head >= 0 && ms[k].head != k {
		k = ms[k].head
	}
	return k
}

func subjectKey(ms []relMention, k int) string { return ms[headOf(ms, k)].key }

func appositionGap(gap string) bool {
	g := strings.TrimSpace(gap)
	g = strings.TrimSpace(strings.TrimPrefix(g, ","))
	lower := strings.ToLower(g)
	if !(strings.HasPrefix(lower, "a ") || strings.HasPrefix(lower, "an ") || lower == "a" || lower == "an") {
		return false
	}
	return !strings.ContainsAny(g, ",;:()")
}

func containsWord(ws []string, w string) bool {
	for _, x := range ws {
		if x == w {
			return true
		}
	}
	return false
}

func lastIndex(ws []string, a, b string) int {
	for i := len(ws) - 1; i >= 0; i-- {
		if ws[i] == a || ws[i] == b {
			return i
		}
	}
	return -1
}

func endsWithListIntro(ws []string) bool {
	n := len(ws)
	if n == 0 || n > 6 {
		return false
	}
	return ws[n-1] == "including" || ws[n-1] == "like" || n >= 2 && ws[n-2] == "such" && ws[n-1] == "as"
}

// listGap: the text between two list items (", ", " and ", ", or the ").
func listGap(gap string) bool {
	words, raw := gapWords(gap)
	if len(raw) == 0 {
		return false
	}
	_ = words
	for _, w := range raw {
		if !listWords[w] {
			return false
		}
	}
	return true
}

// isHead reports whether the noun phrase ends at pos: what follows is
// punctuation, the end, or a word that cannot continue a noun phrase.
func isHead(text string, pos int) bool {
	rest := text[pos:]
	trimmed := strings.TrimLeft(rest, " ")
	if trimmed == "" {
		return true
	}
	r := runeAt(trimmed, 0)
	if !unicode.IsLetter(r) {
		return r != '-'
	}
	end := strings.IndexFunc(trimmed, func(r rune) bool { return !unicode.IsLetter(r) })
	if end < 0 {
		end = len(trimmed)
	}
	return headBoundary[strings.ToLower(trimmed[:end])]
}

// findCue finds the cue nearest to the right mention whose surroundings are
// acceptable; it returns the words before and after it.
func findCue(words []string) (cue, []string, []string, bool) {
	for end := len(words); end >= 1; end-- {
		best := -1
		for ci, c := range cueTable {
			n := len(c.words)
			if n > end || (best >= 0 && n <= len(cueTable[best].words)) {
				continue
			}
			match := true
			for q := 0; q < n; q++ {
				if words[end-n+q] != c.words[q] {
					match = false
					break
				}
			}
			if match {
				best = ci
			}
		}
		if best < 0 {
			continue
		}
		c := cueTable[best]
		// "uses of", "use of", "support for" are nouns, not verbs
		if end < len(words) && (words[end] == "of" || words[end] == "for") && len(c.words) == 1 {
			continue
		}
		prefix := words[:end-len(c.words)]
		suffix := words[end:]
		if len(c.words) == 1 && len(prefix) > 0 && (prefix[len(prefix)-1] == "to") {
			continue // "a library to use"
		}
		return c, prefix, suffix, true
	}
	return cue{}, nil, nil, false
}
