package extract

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// chunkCtx is a chunk prepared for matching.
type chunkCtx struct {
	id      string
	text    string
	regions []region
	atoms   []atom
	extra   bool // text is a code span that does not occur in the chunk: no offsets
}

func prepare(id, text string, spans []string, maxBytes int) []*chunkCtx {
	return prepareChunk(Chunk{ID: id, Text: text, CodeSpans: spans}, maxBytes)
}

// prepareChunk cuts the chunk's text to maxBytes and finds its code: the exact
// ranges the caller gave, then backticks, located code spans and interactive
// sessions.
func prepareChunk(ch Chunk, maxBytes int) []*chunkCtx {
	id, text, spans := ch.ID, ch.Text, ch.CodeSpans
	if len(text) > maxBytes {
		cut := maxBytes
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut]
	}
	regions, extra := codeRegions(text, spans)
	if len(ch.CodeRanges)+len(ch.CodeBlocks) > 0 {
		regions = withGivenRanges(text, regions, ch.CodeRanges, ch.CodeBlocks)
	}
	out := []*chunkCtx{{id: id, text: text, regions: regions, atoms: atomize(text, regions)}}
	for _, s := range extra {
		if len(s) > maxBytes {
			continue
		}
		r := []region{{start: 0, end: len(s), block: strings.Contains(s, "\n")}}
		out = append(out, &chunkCtx{id: id, text: s, regions: r, atoms: atomize(s, r), extra: true})
	}
	return out
}

// rawMention is one match in a chunk, before aggregation.
type rawMention struct {
	a0, a1     int // atom range, inclusive
	start, end int
	key        string
	name       string
	typ        string
	conf       float64
	source     string
	surface    string
	candidate  bool   // kept only with support from the document or the learner
	version    bool   // a "Name 1.2" version mention
	baseKey    string // for versions: the versioned entity
	parentKey  string // for qualified names: the enclosing module or class
	noRelation bool   // not a relation argument (commands, versions)
	code       bool   // found in code
}

// matcher matches one chunk.
type matcher struct {
	x       *Extractor
	c       *chunkCtx
	aliases map[string]*entry // acronyms defined in the document
	lenient bool              // queries: case-insensitive, lower confidence
	out     []rawMention
	// aliasFirst indexes the aliases by first word; built on first use
	aliasFirst map[string]int
}

const (
	confExact    = 0.95
	confCase     = 0.9
	confCode     = 0.9
	confCue      = 0.85
	confLenient  = 0.7
	confAcronym  = 0.85
	confLetter   = 0.7
	confVersion  = 0.85
	confCandPlus = 0.6
	confCand     = 0.55
	confLearned  = 0.7
)

// codeCues are words that, written right after a name, say what it is; the
// name must have one of the listed types ("the logging module", "the yield
// keyword", "the len function").
var codeCues = func() map[string][]string {
	m := map[string][]string{}
	add := func(types []string, words ...string) {
		for _, w := range words {
			m[w] = append(m[w], types...)
		}
	}
	add([]string{"module", "library", "package_manager", "framework"}, "module", "modules", "package", "packages", "library", "libraries")
	add([]string{"function", "method"}, "function", "functions", "method", "methods", "builtin", "built-in", "call", "calls")
	add([]string{"class", "exception", "data_type"}, "class", "classes", "type", "types", "object", "objects", "instance", "instances")
	add([]string{"exception"}, "exception", "exceptions", "error", "errors")
	add([]string{"keyword", "operator"}, "keyword", "keywords", "statement", "statements", "operator", "clause")
	add([]string{"decorator"}, "decorator", "decorators")
	add([]string{"attribute", "constant"}, "attribute", "attributes", "constant", "constants")
	add([]string{"tool", "command", "package_manager", "build_tool", "version_control", "shell", "compiler"},
		"command", "commands", "utility", "cli", "binary", "tool", "program")
	add([]string{"config_setting", "environment_variable"}, "setting", "settings", "parameter", "directive", "option", "variable")
	add([]string{"data_type", "data_structure"}, "type", "types", "value", "values")
	return m
}()

var startAllowedNext = map[string]bool{
	"is": true, "was": true, "are": true, "has": true, "have": true, "had": true, "uses": true, "supports": true,
	"provides": true, "can": true, "will": true, "does": true, "did": true, "programs": true, "code": true,
	"module": true, "modules": true, "package": true, "packages": true, "version": true, "versions": true,
	"developers": true, "also": true, "and": true, "or": true, "lets": true, "makes": true, "runs": true,
	"offers": true, "includes": true, "ships": true, "compiles": true, "applications": true, "projects": true,
	"users": true, "comes": true, "became": true, "added": true, "introduced": true, "now": true, "requires": true,
	"depends": true, "implements": true, "extends": true, "replaces": true, "stores": true, "keeps": true,
	"should": true, "must": true, "may": true, "might": true, "would": true, "could": true, "treats": true,
}

var letterCuesBefore = map[string]bool{"in": true, "with": true, "and": true, "or": true, "like": true, "for": true, "from": true, "to": true, "of": true}
var letterCuesAfter = map[string]bool{"code": true, "language": true, "program": true, "programs": true, "compiler": true,
	"library": true, "libraries": true, "api": true, "extension": true, "extensions": true, "and": true, "or": true, "header": true, "headers": true}

func (m *matcher) atomLower(i int) string {
	if i < 0 || i >= len(m.c.atoms) {
		return ""
	}
	return strings.ToLower(m.c.atoms[i].text)
}

// sameSentence reports whether atom j exists and shares atom i's sentence.
func (m *matcher) sameSentence(i, j int) bool {
	return j >= 0 && j < len(m.c.atoms) && m.c.atoms[i].sent == m.c.atoms[j].sent
}

// cueNear reports whether the name is followed by a word saying what it is, in
// agreement with its type: "the logging module", "the yield keyword".
func (m *matcher) cueNear(i1 int, typ string) bool {
	if !m.sameSentence(i1, i1+1) || m.c.text[m.c.atoms[i1].end:m.c.atoms[i1+1].start] != " " {
		return false
	}
	for _, t := range codeCues[m.atomLower(i1+1)] {
		if t == typ {
			return true
		}
	}
	return false
}

// spanText is the text from atom i to atom j.
func (m *matcher) spanText(i, j int) string {
	return m.c.text[m.c.atoms[i].start:m.c.atoms[j].end]
}

// contiguous reports whether atoms i..j form one phrase: separated only by single
// spaces or joiners, inside one sentence and one kind of text (code or prose).
func (m *matcher) contiguous(i, j int) bool {
	a := m.c.atoms
	for k := i; k < j; k++ {
		if a[k].sent != a[k+1].sent || a[k].code != a[k+1].code || a[k+1].used || a[k+1].url || a[k+1].path {
			return false
		}
		gap := m.c.text[a[k].end:a[k+1].start]
		if len(gap) > 3 || strings.ContainsAny(gap, ",;:()[]{}\"`!?|=<>\n") {
			return false
		}
		if strings.Contains(gap, ".") && gap != "." {
			return false
		}
	}
	return true
}

// gazetteer tries the longest known name starting at atom i. It returns the
// mention and the number of atoms it covers.
func (m *matcher) gazetteer(i int) (rawMention, int, bool) {
	a := m.c.atoms
	if a[i].used || a[i].url || strings.HasPrefix(a[i].text, "-") {
		return rawMention{}, 0, false
	}
	firstKey := Key(a[i].text)
	maxN := m.x.maxAtoms(firstKey)
	if n := m.maxAliasAtoms(firstKey); n > maxN {
		maxN = n
	}
	if strings.HasSuffix(firstKey, "s") {
		maxN = max(maxN, m.x.maxAtoms(strings.TrimSuffix(firstKey, "s")))
	}
	if maxN == 0 {
		return rawMention{}, 0, false
	}
	for n := min(maxN, len(a)-i); n >= 1; n-- {
		j := i + n - 1
		if !m.contiguous(i, j) {
			continue
		}
		surface := m.spanText(i, j)
		key := Key(surface)
		if key == "" {
			continue
		}
		if e, ok := m.aliases[key]; ok {
			return m.mention(i, j, e, confAcronym, e.source), n, true
		}
		info, plural := m.lookupSurface(surface, key)
		if info == nil {
			continue
		}
		if conf, ok := m.accept(info, i, j, surface, key, plural); ok {
			return m.mention(i, j, info.e, conf, info.e.source), n, true
		}
	}
	return rawMention{}, 0, false
}

// lookupSurface looks a written form up, also as the plural of an acronym
// ("GPUs", "APIs").
func (m *matcher) lookupSurface(surface, key string) (*keyInfo, bool) {
	info, plural := m.x.lookup(key)
	if info == nil && len(surface) > 2 && strings.HasSuffix(surface, "s") && isAllUpper(surface[:len(surface)-1]) {
		info, _ = m.x.lookup(key[:len(key)-1])
		plural = info != nil
	}
	return info, plural
}

func (m *matcher) maxAliasAtoms(firstKey string) int {
	if m.aliasFirst == nil && len(m.aliases) > 0 {
		m.aliasFirst = aliasIndex(m.aliases)
	}
	return m.aliasFirst[firstKey]
}

// aliasIndex maps the first word of each document alias to its word count.
func aliasIndex(aliases map[string]*entry) map[string]int {
	idx := make(map[string]int, len(aliases))
	for k := range aliases {
		first, n := k, strings.Count(k, "-")+1
		if i := strings.IndexByte(k, '-'); i >= 0 {
			first = k[:i]
		}
		idx[first] = max(idx[first], n)
	}
	return idx
}

// accept decides whether a known key matches here, and with what confidence.
func (m *matcher) accept(info *keyInfo, i, j int, surface, key string, plural bool) (float64, bool) {
	a := m.c.atoms
	inCode := a[i].code >= 0
	_, exact := info.caseForms[surface]
	_, declared := info.forms[surface]
	if plural {
		if s := singularSurface(surface); s != "" {
			_, e1 := info.caseForms[s]
			_, d1 := info.forms[s]
			exact, declared = exact || e1, declared || d1
		}
	}
	if inCode {
		if i == j && utf8.RuneCountInString(surface) == 1 {
			return 0, false // a one-letter variable, not the C or R language
		}
		if syntaxTypes[info.e.typ] && m.inBlock(i) {
			return 0, false // the syntax of a code block (import, def, for) names nothing
		}
		if caseTypes[info.e.typ] && !declared {
			return 0, false // code is case-sensitive: 'event' is not the class Event
		}
		return confCode, true
	}
	if info.ci == levelDefault {
		if declared {
			return confExact, true
		}
		return confCase, true
	}
	if exact {
		single := i == j
		if single && utf8.RuneCountInString(surface) == 1 {
			// one-letter language names: C, R, D
			if m.sameSentence(i, i-1) && letterCuesBefore[m.atomLower(i-1)] ||
				m.sameSentence(i, i+1) && letterCuesAfter[m.atomLower(i+1)] {
				return confLetter, true
			}
			return 0, false
		}
		if single && m.standsAlone(i) && isEnglishWord(key) {
			return 0, false // a label such as "Warning" or "Availability:"
		}
		if single && a[i].first && isCommonWord(key) {
			if !m.startGuard(i) {
				return 0, false
			}
		}
		return confCase, true
	}
	if a[i].call && info.e.typ != "keyword" || !functionWords[key] && m.cueNear(j, info.e.typ) {
		return confCue, true
	}
	if m.lenient {
		if isCommonWord(key) || len(key) <= 2 || i == j && capitalsOnlyWord(info, key) {
			return 0, false
		}
		return confLenient, true
	}
	return 0, false
}

// capitalsOnlyWord reports whether key is an everyday English word that the
// gazetteer knows only written in capitals: the SQL keyword COMMIT, the variable
// USER, the HTTP method DELETE. Documents match such a name only as written
// (effectiveLevel); queries arrive in lower case, where the word ("undo the last
// commit", "add a user") is the everyday word, so a lenient match would read a
// keyword into most plain-language questions. Names written otherwise (Windows,
// Thread, Node) and words that are not everyday English (JSON, SQL, WAL) still
// match a lower-case query.
func capitalsOnlyWord(info *keyInfo, key string) bool {
	if len(info.forms) == 0 || !isEnglishWord(key) {
		return false
	}
	for f := range info.forms {
		if !isAllUpper(f) {
			return false
		}
	}
	return true
}

// syntaxTypes are the types of a language's own syntax: named in prose or in an
// inline code span (the `yield` keyword) they are a topic, in a code block they
// are just code.
// Concepts in a code block are variable names (parser, callback).
var syntaxTypes = map[string]bool{"keyword": true, "operator": true, "concept": true}

// caseTypes are the types whose names are code identifiers, matched in code only
// as declared.
var caseTypes = map[string]bool{"class": true, "exception": true, "function": true, "method": true,
	"attribute": true, "constant": true, "decorator": true}

// standsAlone reports whether atom i is alone on its line, or starts it before a
// colon: the label of a note or a field, not a mention.
func (m *matcher) standsAlone(i int) bool {
	t := m.c.text
	at := m.c.atoms[i]
	ls := strings.LastIndexByte(t[:at.start], '\n') + 1
	if strings.TrimSpace(t[ls:at.start]) != "" {
		return false
	}
	rest := t[at.end:]
	if le := strings.IndexByte(rest, '\n'); le >= 0 {
		rest = rest[:le]
	}
	rest = strings.TrimSpace(rest)
	return rest == "" || rest[0] == ':'
}

// startGuard accepts a capitalised everyday word at the start of a sentence only
// when the next word reads like the rest of a sentence about a named thing.
func (m *matcher) startGuard(i int) bool {
	if !m.sameSentence(i, i+1) {
		return true
	}
	next := m.c.atoms[i+1]
	gap := m.c.text[m.c.atoms[i].end:next.start]
	if strings.ContainsAny(gap, ",:;()") {
		return true
	}
	if unicode.IsUpper(runeAt(next.text, 0)) || unicode.IsDigit(runeAt(next.text, 0)) {
		return true
	}
	return startAllowedNext[strings.ToLower(next.text)]
}

func singularSurface(s string) string {
	switch {
	case strings.HasSuffix(s, "ies"):
		return s[:len(s)-3] + "y"
	case strings.HasSuffix(s, "es") && (strings.HasSuffix(s, "sses") || strings.HasSuffix(s, "xes") || strings.HasSuffix(s, "shes") || strings.HasSuffix(s, "ches")):
		return s[:len(s)-2]
	case strings.HasSuffix(s, "s"):
		return s[:len(s)-1]
	}
	return ""
}

func (m *matcher) mention(i, j int, e *entry, conf float64, source string) rawMention {
	a := m.c.atoms
	if e.source == SourceLearned {
		conf = min(conf, confLearned)
	}
	return rawMention{a0: i, a1: j, start: a[i].start, end: a[j].end, key: e.id, name: e.name, typ: e.typ,
		conf: conf, source: source, surface: m.spanText(i, j), code: a[i].code >= 0}
}

// maxNameBytes bounds the names the pattern rules accept.
const maxNameBytes = 120

func (m *matcher) patternMention(i, j int, name, typ string, conf float64) rawMention {
	a := m.c.atoms
	return rawMention{a0: i, a1: j, start: a[i].start, end: a[j].end, key: Key(name), name: name, typ: typ,
		conf: conf, source: SourcePattern, surface: m.spanText(i, j), code: a[i].code >= 0}
}

func (m *matcher) markUsed(i, j int) {
	for k := i; k <= j; k++ {
		m.c.atoms[k].used = true
	}
}

// run matches the whole chunk.
func (m *matcher) run() []rawMention {
	m.codeUnits()
	a := m.c.atoms
	for i := 0; i < len(a); {
		if a[i].used {
			i++
			continue
		}
		if a[i].code >= 0 && runeBefore(m.c.text, a[i].start) == '=' {
			i++ // a value in code, not a name
			continue
		}
		if a[i].url {
			m.urlMention(i)
			i++
			continue
		}
		if a[i].path {
			if hasLetter(a[i].text) {
				m.out = append(m.out, m.patternMention(i, i, a[i].text, "file", 0.8))
			}
			i++
			continue
		}
		g, n, ok := m.gazetteer(i)
		if runEnd, ok2 := m.capitalRun(i); ok2 && (!ok || runEnd > i+n-1) {
			if m.capitalCandidate(i, runEnd) {
				i = runEnd + 1
				continue
			}
		}
		if ok {
			m.markUsed(i, i+n-1)
			m.out = append(m.out, g)
			m.version(g, i+n-1)
			i += n
			continue
		}
		if n := m.pattern(i); n > 0 {
			i += n
			continue
		}
		i++
	}
	out := m.out[:0]
	for _, rm := range m.out {
		if rm.key != "" && (rm.source != SourcePattern || len(rm.name) <= maxNameBytes) {
			out = append(out, rm)
		}
	}
	m.out = out
	return m.out
}

func (m *matcher) urlMention(i int) {
	a := m.c.atoms[i]
	host := a.text
	if k := strings.Index(host, "://"); k >= 0 {
		host = host[k+3:]
	}
	if k := strings.IndexAny(host, "/?#"); k >= 0 {
		host = host[:k]
	}
	host = strings.TrimPrefix(strings.ToLower(host), "www.")
	if host == "" || !strings.Contains(host, ".") {
		return
	}
	m.out = append(m.out, rawMention{a0: i, a1: i, start: a.start, end: a.end, key: Key(host), name: host, typ: "url",
		conf: 0.6, source: SourcePattern, surface: a.text, noRelation: true})
}

// codeUnits handles code regions that are one token joined by '-' or '/'
// ("ssh-keygen", "docker-compose") and command lines ("pip install x").
func (m *matcher) codeUnits() {
	a := m.c.atoms
	k := 0
	for ri, r := range m.c.regions {
		for k < len(a) && a[k].code < ri && (a[k].code >= 0 || a[k].start < r.start) {
			k++
		}
		first, last := -1, -1
		for q := k; q < len(a) && a[q].start < r.end; q++ {
			if a[q].code == ri {
				if first < 0 {
					first = q
				}
				last = q
			}
		}
		if first < 0 {
			continue
		}
		k = last + 1
		raw := strings.TrimSpace(m.c.text[r.start:r.end])
		if strings.HasPrefix(raw, "$ ") || strings.HasPrefix(raw, "> ") {
			raw = strings.TrimSpace(raw[2:])
		}
		if strings.HasPrefix(raw, "--") && !strings.ContainsAny(raw, " \t\n") && !isPlaceholderFlag(raw) {
			rm := m.patternMention(first, last, raw, "cli_option", 0.75)
			rm.noRelation = true
			m.out = append(m.out, rm)
			m.markUsed(first, last)
			continue
		}
		// one token split into atoms by joiners
		if last > first && !strings.ContainsAny(raw, " \t\n=()[]{},;:\"'") {
			if m.codeToken(first, last) {
				continue
			}
		}
		m.commandLine(first, last)
	}
}

func (m *matcher) codeToken(first, last int) bool {
	a := m.c.atoms
	for k := first; k < last; k++ {
		if m.c.text[a[k].end:a[k+1].start] != "-" && m.c.text[a[k].end:a[k+1].start] != "/" {
			return false
		}
	}
	surface := m.spanText(first, last)
	key := Key(surface)
	if info, _ := m.x.lookup(key); info != nil {
		m.out = append(m.out, m.mention(first, last, info.e, confCode, info.e.source))
	} else if strings.Contains(surface, "/") {
		m.out = append(m.out, m.patternMention(first, last, surface, "file", 0.7))
	} else {
		typ := "command"
		if !isLowerIdent(strings.ReplaceAll(surface, "-", "")) {
			typ = "identifier"
		}
		m.out = append(m.out, m.patternMention(first, last, surface, typ, 0.65))
	}
	m.markUsed(first, last)
	return true
}

var commandTypes = map[string]bool{
	"tool": true, "package_manager": true, "build_tool": true, "version_control": true, "container_platform": true,
	"command": true, "compiler": true, "runtime": true, "shell": true, "programming_language": true, "database": true,
	"cloud_service": true, "testing_framework": true, "web_server": true, "message_broker": true, "editor": true,
}

// commandLine recognises "tool subcommand ..." at the start of a code region.
func (m *matcher) commandLine(first, last int) {
	a := m.c.atoms
	if last <= first {
		return
	}
	p, s := first, first+1
	if m.c.text[a[p].end:a[s].start] != " " {
		return
	}
	prog, sub := a[p].text, a[s].text
	if !isLowerIdent(sub) || strings.HasPrefix(sub, "-") {
		return
	}
	info, _ := m.x.lookup(Key(prog))
	if info == nil || !commandTypes[info.e.typ] {
		return
	}
	name := strings.ToLower(prog) + " " + sub
	cm := m.patternMention(p, s, name, "command", 0.8)
	cm.noRelation = true
	cm.parentKey = info.e.id
	m.out = append(m.out, cm)
	a[s].used = true
}

func isLowerIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return s[0] >= 'a' && s[0] <= 'z'
}

// version recognises "Name 1.2" right after a mention of a product.
func (m *matcher) version(base rawMention, j int) {
	if !versionBases[base.typ] || !m.sameSentence(j, j+1) {
		return
	}
	a := m.c.atoms
	next := a[j+1]
	if next.used || next.code != a[j].code || m.c.text[a[j].end:next.start] != " " || !isVersion(next.text) {
		return
	}
	if base.typ == "protocol" && len(next.text) == 3 && next.text[0] >= '1' && next.text[0] <= '5' && !strings.Contains(next.text, ".") {
		return // a status code such as "HTTP 404"
	}
	if m.sameSentence(j+1, j+2) {
		after := m.c.text[next.end:a[j+2].start]
		if strings.HasPrefix(after, "%") || unitWords[strings.ToLower(a[j+2].text)] && !strings.ContainsAny(after, ",.;") {
			return
		}
	}
	name := base.name + " " + next.text
	vm := rawMention{a0: base.a0, a1: j + 1, start: base.start, end: next.end, key: Key(name), name: name, typ: "version",
		conf: confVersion, source: SourcePattern, surface: m.spanText(base.a0, j+1), version: true, baseKey: base.key, noRelation: true}
	a[j+1].used = true
	m.out = append(m.out, vm)
}

var unitWords = map[string]bool{"ms": true, "s": true, "seconds": true, "times": true, "gb": true, "mb": true, "kb": true,
	"bytes": true, "percent": true, "users": true, "requests": true, "rows": true, "items": true, "minutes": true, "hours": true, "days": true}

var versionBases = map[string]bool{
	"programming_language": true, "query_language": true, "markup_language": true, "database": true, "framework": true,
	"library": true, "testing_framework": true, "ml_framework": true, "protocol": true, "file_format": true, "standard": true,
	"operating_system": true, "tool": true, "package_manager": true, "build_tool": true, "version_control": true,
	"editor": true, "shell": true, "web_server": true, "message_broker": true, "runtime": true, "compiler": true,
	"browser": true, "container_platform": true, "ml_model": true, "software": true, "product": true,
}

// isVersion accepts 3, 3.11, 1.2.3, v2, 3.x, 2.0rc1.
func isVersion(s string) bool {
	s = strings.TrimPrefix(s, "v")
	if s == "" || s[0] < '0' || s[0] > '9' {
		return false
	}
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return false
	}
	for pi, p := range parts {
		if p == "" {
			return false
		}
		if p == "x" && pi > 0 {
			continue
		}
		k := 0
		for k < len(p) && p[k] >= '0' && p[k] <= '9' {
			k++
		}
		if k == 0 || k > 4 {
			return false
		}
		if k < len(p) {
			if pi != len(parts)-1 {
				return false
			}
			suffix := p[k:]
			if !strings.HasPrefix(suffix, "rc") && !strings.HasPrefix(suffix, "a") && !strings.HasPrefix(suffix, "b") && !strings.HasPrefix(suffix, "beta") && !strings.HasPrefix(suffix, "alpha") {
				return false
			}
		}
	}
	return true
}

// capitalRun finds a run of two or more capitalised atoms starting at i (a
// sentence-initial everyday word does not start a run).
func (m *matcher) capitalRun(i int) (int, bool) {
	a := m.c.atoms
	if !isCapitalised(a[i]) || a[i].code >= 0 {
		return 0, false
	}
	if a[i].first && (isCommonWord(strings.ToLower(a[i].text)) || functionWords[strings.ToLower(a[i].text)] ||
		len(a[i].text) > 4 && strings.HasSuffix(a[i].text, "ing")) {
		return 0, false // "Using X", "Installing X"
	}
	if functionWords[strings.ToLower(a[i].text)] {
		return 0, false
	}
	if a[i].first && i+1 < len(a) && a[i+1].sent == a[i].sent {
		// "Install PostgreSQL", "Configure Nginx": an imperative verb, not part of a name
		if info, _ := m.x.lookup(Key(a[i].text)); info == nil {
			if info, _ := m.x.lookup(Key(a[i+1].text)); info != nil {
				return 0, false
			}
		}
	}
	j := i
	for j+1 < len(a) && j-i <= maxRunAtoms && isCapitalised(a[j+1]) && !functionWords[strings.ToLower(a[j+1].text)] &&
		m.contiguous(j, j+1) && a[j+1].code < 0 && (m.c.text[a[j].end:a[j+1].start] == " " || m.c.text[a[j].end:a[j+1].start] == "-") {
		j++
	}
	return j, j > i && j-i < maxRunAtoms
}

// maxRunAtoms bounds a capitalised name: a longer run is a title, not a name.
const maxRunAtoms = 6

var functionWords = map[string]bool{
	"the": true, "a": true, "an": true, "in": true, "for": true, "this": true, "that": true, "these": true, "those": true,
	"with": true, "when": true, "if": true, "it": true, "its": true, "of": true, "and": true, "or": true, "to": true,
	"on": true, "at": true, "by": true, "from": true, "as": true, "is": true, "are": true, "be": true, "we": true,
	"you": true, "i": true, "our": true, "your": true, "their": true, "they": true, "he": true, "she": true, "both": true,
	"each": true, "every": true, "all": true, "some": true, "any": true, "no": true, "not": true, "but": true, "so": true,
	"see": true, "use": true, "note": true, "set": true, "run": true, "call": true, "create": true, "how": true, "what": true,
	"why": true, "where": true, "which": true, "who": true, "while": true, "after": true, "before": true, "then": true,
}

func isCapitalised(a atom) bool {
	if a.url || a.path || a.used {
		return false
	}
	r := runeAt(a.text, 0)
	return unicode.IsUpper(r)
}

var headTypes = map[string]string{
	"ui": "tool", "cli": "tool", "cluster": "software", "sentinel": "software", "server": "software", "engine": "software",
	"framework": "framework", "library": "library", "sdk": "library", "foundation": "foundation", "inc": "company",
	"corporation": "company", "labs": "company", "protocol": "protocol", "database": "database", "db": "database",
	"language": "programming_language", "format": "file_format", "api": "api",
	"team": "organization", "group": "organization", "committee": "organization", "council": "organization", "ai": "organization",
	"conference": "conference", "summit": "conference", "os": "operating_system", "linux": "operating_system",
	"algorithm": "algorithm", "pattern": "design_pattern", "standard": "standard", "specification": "standard",
	"cloud": "cloud_service", "service": "cloud_service", "studio": "editor", "ide": "editor", "shell": "shell",
	"proxy": "software", "manager": "tool", "toolkit": "library", "runtime": "runtime", "compiler": "compiler",
	"model": "ml_model", "dataset": "dataset", "corpus": "dataset", "university": "organization", "institute": "organization",
}

// capitalCandidate turns a capitalised run into a candidate name unless every
// atom of it is already part of a known name.
func (m *matcher) capitalCandidate(i, j int) bool {
	a := m.c.atoms
	allKnown, anyKnown := true, false
	common := 0
	var firstKnown *entry
	for k := i; k <= j; {
		if info, _ := m.lookupSurface(a[k].text, Key(a[k].text)); info != nil && k == i {
			firstKnown = info.e
		}
		n := 0
		for nn := min(j-k+1, 6); nn >= 1; nn-- {
			sf := m.spanText(k, k+nn-1)
			if info, _ := m.lookupSurface(sf, Key(sf)); info != nil {
				n = nn
				break
			}
		}
		if n == 0 {
			allKnown = false
			if isCommonWord(strings.ToLower(a[k].text)) && headTypes[strings.ToLower(a[k].text)] == "" {
				common++
			}
			k++
			continue
		}
		anyKnown = true
		k += n
	}
	if allKnown && headTypes[strings.ToLower(a[j].text)] == "" {
		return false
	}
	name := m.spanText(i, j)
	head := strings.ToLower(a[j].text)
	typ := headTypes[head]
	if typ == "" {
		if firstKnown != nil && !genericTypes[firstKnown.typ] {
			typ = "software"
		} else {
			typ = "concept"
		}
	}
	rm := m.patternMention(i, j, name, typ, confCandPlus)
	if common > 0 || firstKnown == nil && !anyKnown && headTypes[head] == "" {
		// an unknown title-case phrase needs corroboration (recurrence, a
		// heading, an anchor, or the learner)
		rm.conf = confCand
		rm.candidate = true
	}
	m.markUsed(i, j)
	m.out = append(m.out, rm)
	return true
}
