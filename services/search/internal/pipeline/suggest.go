package pipeline

import (
	"cmp"
	"slices"
	"strings"
	"unicode"

	"github.com/kgsearch/kgsearch/pkg/embed"
	"github.com/kgsearch/kgsearch/pkg/extract"
	"github.com/kgsearch/kgsearch/pkg/kgapi"
	"github.com/kgsearch/kgsearch/pkg/queryparse"
	"github.com/kgsearch/kgsearch/pkg/ranker"
)

// Selection of related entities and suggested queries (phase 5). Both lists show
// few items, and none when nothing is good enough: judged on the dev sets, a top-10
// list of what the result pages mention was mostly noise (builtins, example names,
// other pages' topics; eval/suggest/README.md). A related entity must be what the
// top results are about, by evidence read from those results themselves.
const (
	// aboutPages is how many of the top result pages an entity must be about.
	aboutPages = 5
	// headPages is how many of the top result pages' titles and headings count as
	// naming what the results are about.
	headPages = 3
	// maxRelated and maxSuggested cap the lists.
	maxRelated   = 2
	maxSuggested = 2
	// genericShare: an entity mentioned by more than this share of the documents the
	// search covers is generic (a builtin, a keyword, the product's own name, a base
	// class every page uses) unless a top page's title names it, up to
	// titleGenericShare.
	genericShare      = 0.04
	titleGenericShare = 0.10
	// minGenericDocuments: an entity mentioned by this many documents or fewer is
	// never generic, whatever its share. On a small site of long pages the share
	// alone marks a few pages' topic as generic (4 % of Node.js's 63 one-module pages
	// is 2.5 pages: AsyncLocalStorage, dns.lookup); 12 is under 4 % of either dev
	// set (Python 391 pages, Django 316), whose selection it leaves as it was
	// (eval/suggest/README.md, "Sixth session: the three new sites").
	minGenericDocuments = 12
	// minRelatedScore is the weakest evidence-weighted score shown, and
	// relativeScore the share of the best score an entity needs.
	minRelatedScore = 0.1
	relativeScore   = 0.4
	// salientWeight is the centroid share an entity needs to be shown for being
	// mentioned in the prose of several top pages alone (no title, heading or
	// query word naming it).
	salientWeight = 0.12
	// nearPassages: a shown entity must be named, mentioned or defined by one of
	// this many passages of the top pages closest to the query by meaning
	// (nearThreshold).
	nearPassages = 2
)

// candidateEntity is an entity that might be related: from graph feedback (what the
// top pages are about, by tf-idf) or, without feedback, from the results' mentions.
type candidateEntity struct {
	name, id, typ string
	weight        float64
	documents     int // document frequency; 0 when unknown
}

// evidence is what the top results say about a candidate.
type evidence struct {
	title, heading, query bool
	first                 bool // the first result page's title names it
	prose                 int  // top pages mentioning it in a sentence or defining it
	// parameter: a bare lower-case identifier that the top pages' signatures take
	// as a parameter and none of them defines with a signature of its own
	// ("follow_symlinks", "from_email"; a bare line naming it, as attribute and
	// signal-argument lists write them, does not count).
	parameter bool
	// member: a top page's signature defines the name as a member of something
	// else ("CheckConstraint.check", "Manager.raw", "re.search" for "check", "raw",
	// "search").
	member bool
}

func (e evidence) score(weight float64) float64 {
	f := 1.0
	for _, b := range []bool{e.title, e.heading, e.query} {
		if b {
			f += 0.5
		}
	}
	return weight * (f + 0.25*float64(min(e.prose, 2)))
}

// topPage is what one top result page says, lower-cased for matching: the title's
// subject, the heading path of its result chunk below the page's root, the lines of
// its retrieved chunks that read as sentences, the API names those chunks define and
// the parameter lists of their signatures; and each of those chunks as a passage.
type topPage struct {
	title, headings, prose, params string
	defines                        []string
	callables                      []string  // the defined names whose signature has a parameter list
	passages                       []passage // the result chunk first
}

// passage is one retrieved chunk, lower-cased: its whole heading path, its
// sentences, the names it defines, its vector similarity to the query when the
// vector retriever found it, and the cosine of its embedding and the query's
// (closeness) for every hydrated chunk, whichever retriever found it.
type passage struct {
	headings, prose string
	defines         []string
	similarity      float64
	hasSimilarity   bool
	closeness       float64
	hasCloseness    bool
}

// readChunk splits a chunk's text into its sentences, the names its signature lines
// define and those signatures' parameter lists.
func readChunk(text string) (prose, defines, params []string) {
	for _, line := range strings.Split(text, "\n") {
		if isProseLine(line) {
			prose = append(prose, line)
		} else if d, args := signature(line); d != "" {
			defines = append(defines, strings.ToLower(d))
			params = append(params, strings.ToLower(args))
		}
	}
	return prose, defines, params
}

// newPassage is the passage of chunk c, whose sentences and defined names
// readChunk found; qvec is the query's embedding (nil when unknown).
func newPassage(c ranker.Candidate, prose, defines []string, qvec []float32) passage {
	p := passage{headings: strings.ToLower(strings.Join(c.Headings, "\n")), prose: strings.ToLower(strings.Join(prose, "\n")),
		defines: defines, similarity: c.VectorSimilarity, hasSimilarity: c.HasVector}
	if len(qvec) > 0 && len(c.Embedding) == len(qvec) {
		p.closeness, p.hasCloseness = embed.Cosine(qvec, c.Embedding), true
	}
	return p
}

// nearThreshold is the closeness of the nearPassages-th passage of the top pages
// closest to the query (ties included); ok is false when no passage has one (no
// query embedding).
func nearThreshold(pages []topPage) (threshold float64, ok bool) {
	var c []float64
	for i := range pages {
		for _, ps := range pages[i].passages {
			if ps.hasCloseness {
				c = append(c, ps.closeness)
			}
		}
	}
	if len(c) == 0 {
		return 0, false
	}
	slices.SortFunc(c, func(a, b float64) int { return cmp.Compare(b, a) })
	return c[min(len(c), nearPassages)-1], true
}

// nearQuery reports whether a passage of the top pages at least threshold close
// to the query names, mentions or defines the lower-cased name.
func nearQuery(pages []topPage, n string, threshold float64) bool {
	for i := range pages {
		for _, ps := range pages[i].passages {
			if ps.hasCloseness && ps.closeness >= threshold && ps.mentions(n) {
				return true
			}
		}
	}
	return false
}

// mentions reports whether the passage names the lower-cased name in a heading or
// a sentence, or defines it.
func (p passage) mentions(n string) bool {
	return containsName(p.headings, n) || containsName(p.prose, n) || definesName(p.defines, n)
}

// mentionedIn reports whether one of the passages mentions the lower-cased name.
func mentionedIn(passages []passage, n string) bool {
	for _, a := range passages {
		if a.mentions(n) {
			return true
		}
	}
	return false
}

// answerPassages are the passages that answer the query: the first result's chunk
// (the best by the final score) and, among the chunks of the top pages, the one
// most similar to the query by the vector retriever. An entity the top pages
// mention elsewhere is what the pages mention, not what answers the query (judged
// on the dev sets: "priority queue" → Queue.put_nowait, "what is the GIL" →
// hashlib).
func answerPassages(pages []topPage) []passage {
	if len(pages) == 0 || len(pages[0].passages) == 0 {
		return nil
	}
	out := []passage{pages[0].passages[0]}
	var closest *passage
	for i := range pages {
		for j := range pages[i].passages {
			if ps := &pages[i].passages[j]; ps.hasSimilarity && (closest == nil || ps.similarity > closest.similarity) {
				closest = ps
			}
		}
	}
	if closest != nil {
		out = append(out, *closest)
	}
	return out
}

// topPages reads the first aboutPages distinct pages of the ranking. Beside each
// page's result chunk, the other chunks of the page that retrieval found for this
// query (more) are read for sentences and definitions: they are the parts of the
// page that bear on the query, not the whole page. qvec is the query's embedding,
// for each passage's closeness (nil: none).
func topPages(ranked []ranker.Result, more func(docID string) []ranker.Candidate, qvec []float32) []topPage {
	var out []topPage
	seen := map[string]bool{}
	for _, r := range ranked {
		c := r.Candidate
		key := c.DocumentID
		if key == "" {
			key = c.URL
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		subject, _, _ := strings.Cut(c.Title, " — ")
		var heads []string
		if len(c.Headings) > 1 {
			heads = c.Headings[1:]
		}
		chunks := []ranker.Candidate{c}
		if more != nil && c.DocumentID != "" {
			for _, o := range more(c.DocumentID) {
				if o.ChunkID == "" || o.ChunkID != c.ChunkID {
					chunks = append(chunks, o)
				}
			}
		}
		var prose, defines, params, callables []string
		var passages []passage
		for _, ch := range chunks {
			p, d, a := readChunk(ch.Text)
			prose, defines, params = append(prose, p...), append(defines, d...), append(params, a...)
			for i := range d {
				if a[i] != "" {
					callables = append(callables, d[i])
				}
			}
			passages = append(passages, newPassage(ch, p, d, qvec))
		}
		out = append(out, topPage{title: strings.ToLower(subject), headings: strings.ToLower(strings.Join(heads, "\n")),
			prose: strings.ToLower(strings.Join(prose, "\n")), params: strings.Join(params, "\n"), defines: defines,
			callables: callables, passages: passages})
		if len(out) == aboutPages {
			break
		}
	}
	return out
}

// definedName returns the name a line of reference documentation defines (signature).
func definedName(line string) string {
	name, _ := signature(line)
	return name
}

// signature returns the name a line of reference documentation defines — a
// signature on a line of its own, as documentation generators write them:
// "class csv.DictReader(f, fieldnames=None)", "@functools.lru_cache(maxsize=128)",
// "exception asyncio.BrokenBarrierError", "never_cache(view_func)[source]" — or "".
// A line ending in ":" is code (a definition in an example), not documentation.
// args is the signature's parameter list, with its parentheses, or "".
func signature(line string) (name, args string) {
	line = strings.TrimSpace(line)
	if line == "" || len(line) > 200 || strings.HasSuffix(line, ":") {
		return "", ""
	}
	for {
		word, rest, ok := strings.Cut(line, " ")
		if !ok || !signatureKeywords[word] {
			break
		}
		line = strings.TrimSpace(rest)
	}
	line = strings.TrimPrefix(line, "@")
	line = strings.TrimSuffix(line, "[source]")
	end := 0
	for end < len(line) && (isNameByte(line[end]) || line[end] == '.' && end > 0) {
		end++
	}
	name, rest := line[:end], strings.TrimSpace(line[end:])
	if name == "" || name[0] >= '0' && name[0] <= '9' || strings.HasSuffix(name, ".") {
		return "", ""
	}
	if rest == "" || strings.HasPrefix(rest, "(") && strings.HasSuffix(strings.TrimSuffix(rest, "[source]"), ")") {
		return name, strings.TrimSuffix(rest, "[source]")
	}
	return "", ""
}

// signatureKeywords precede a name in a signature line.
var signatureKeywords = map[string]bool{"class": true, "exception": true, "async": true, "awaitable": true,
	"coroutine": true, "abstractmethod": true, "classmethod": true, "staticmethod": true}

// defines reports whether the page defines the lower-cased name, or a dotted name
// ending in it, or the name ends in the dotted name defined ("Decimal.from_float"
// for "classmethod from_float(f)").
func (p topPage) definesName(n string) bool { return definesName(p.defines, n) }

func definesName(defines []string, n string) bool {
	for _, d := range defines {
		if d == n || strings.HasSuffix(d, "."+n) || strings.HasSuffix(n, "."+d) {
			return true
		}
	}
	return false
}

// isProseLine reports whether a line of chunk text reads as a sentence rather than
// code: not indented, not a prompt or an import, at least six words, most of them
// plain words.
func isProseLine(line string) bool {
	if line == "" || line[0] == ' ' || line[0] == '\t' {
		return false
	}
	for _, p := range []string{">>>", "...", "$", "#", "from ", "import "} {
		if strings.HasPrefix(line, p) {
			return false
		}
	}
	fields, plain := 0, 0
	for f := range strings.FieldsSeq(line) { // no slice: this runs on every line of the top pages
		fields++
		if isPlainWord(f) {
			plain++
		}
	}
	return fields >= 6 && 10*plain >= 6*fields
}

// isPlainWord: a letter, then lower-case letters or apostrophes, then at most one
// punctuation mark.
func isPlainWord(f string) bool {
	f = strings.TrimRight(f, ",.;:")
	for i, r := range f {
		switch {
		case i == 0 && unicode.IsLetter(r):
		case i > 0 && (unicode.IsLower(r) || r == '\'' || r == '’'):
		default:
			return false
		}
	}
	return f != ""
}

// containsName reports whether lower-cased text holds the lower-cased name as a
// whole name: not inside a longer word or dotted name.
func containsName(text, name string) bool {
	for off := 0; off <= len(text)-len(name); {
		i := strings.Index(text[off:], name)
		if i < 0 {
			return false
		}
		i += off
		end := i + len(name)
		if (i == 0 || !isNameByte(text[i-1]) && text[i-1] != '.') && (end == len(text) || !isNameByte(text[end])) {
			return true
		}
		off = i + 1
	}
	return false
}

func isNameByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b >= 0x80
}

// gather collects the evidence for a name in the top pages.
func gather(pages []topPage, name string, terms []string) evidence {
	n := strings.ToLower(name)
	var ev evidence
	defined, param := false, false
	ev.first = len(pages) > 0 && containsName(pages[0].title, n)
	for i, p := range pages {
		if i < headPages {
			ev.title = ev.title || containsName(p.title, n)
			ev.heading = ev.heading || containsName(p.headings, n)
		}
		if containsName(p.prose, n) || p.definesName(n) {
			ev.prose++
		}
		defined = defined || definesName(p.callables, n)
		param = param || isParameter(p.params, n)
		ev.member = ev.member || definesMember(p.defines, n)
	}
	ev.parameter = param && !defined
	ev.query = sharesQueryWord(name, terms)
	return ev
}

// definesMember reports whether one of the defined names is a dotted name ending
// in the lower-cased bare name n ("checkconstraint.check" for "check").
func definesMember(defines []string, n string) bool {
	if strings.Contains(n, ".") {
		return false
	}
	for _, d := range defines {
		if strings.HasSuffix(d, "."+n) {
			return true
		}
	}
	return false
}

// isParameter reports whether the lower-cased name is a bare identifier
// (lower-case letters, digits, underscores) named as a parameter in one of the
// signatures' parameter lists: after "(", "," or "*" and before "=", "," or ")".
func isParameter(params, n string) bool {
	if n == "" || strings.TrimLeft(n, "abcdefghijklmnopqrstuvwxyz0123456789_") != "" {
		return false
	}
	for off := 0; off < len(params); {
		i := strings.Index(params[off:], n)
		if i < 0 {
			return false
		}
		i += off
		before := strings.TrimRight(params[:i], " ")
		after := strings.TrimLeft(params[i+len(n):], " ")
		if before != "" && strings.ContainsAny(before[len(before)-1:], "(,*") && after != "" && strings.ContainsAny(after[:1], "=,)") {
			return true
		}
		off = i + 1
	}
	return false
}

// sharesQueryWord reports whether one of the name's parts (split at punctuation and
// camel case) is a query term, up to a plural or verb ending, or contains one
// ("deepcopy" for "copy", "EmailMessage" for "email", "send_mail" for "email").
func sharesQueryWord(name string, terms []string) bool {
	for _, part := range nameParts(name) {
		for _, t := range terms {
			t = stemWord(strings.ToLower(t))
			switch {
			case len(t) < 3:
			case part == t:
				return true
			case len(t) >= 4 && len(part) > len(t) && (strings.HasPrefix(part, t) || strings.HasSuffix(part, t)):
				return true
			case len(part) >= 4 && len(t) > len(part) && strings.HasSuffix(t, part):
				return true
			}
		}
	}
	return false
}

// nameParts splits a name into lower-cased, stemmed parts of three letters or more.
func nameParts(name string) []string {
	var parts []string
	var cur []rune
	flush := func() {
		if len(cur) >= 3 {
			parts = append(parts, stemWord(strings.ToLower(string(cur))))
		}
		cur = cur[:0]
	}
	var prev rune
	for _, r := range name {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
		prev = r
	}
	flush()
	return parts
}

// stemWord strips one plural or verb ending from a word of more than six letters
// after stripping ("uploads" → "upload", "parsing" → "pars").
func stemWord(w string) string {
	for _, suf := range []string{"ing", "ies", "es", "ed", "er", "s"} {
		if len(w) > len(suf)+3 && strings.HasSuffix(w, suf) {
			return w[:len(w)-len(suf)]
		}
	}
	return w
}

// noiseName reports names that are never worth showing as an entity: versions and
// URLs, numbers and section references, fragments of sentences, flags and paths,
// language keywords, placeholder paths ("A.B"), and multi-word capitalised phrases
// that are section titles typed as concepts ("Built-in Functions", "Brief Tour").
func noiseName(name, typ string) bool {
	switch typ {
	case "version", "url", "keyword":
		return true
	}
	fields := strings.Fields(name)
	switch {
	case len(name) < 2 || len(name) > 60 || len(fields) > 4 || !hasLetter(strings.ToLower(name)):
		return true
	case strings.ContainsAny(name[:1], "-/.#"):
		return true
	case len(fields) > 1 && strings.ContainsAny(name, "0123456789"):
		return true
	case usageChain(name), placeholderPath(name):
		return true
	}
	if len(fields) > 1 && (typ == "concept" || typ == "software" || typ == "library") {
		titled := true
		for _, f := range fields {
			r := []rune(f)[0]
			titled = titled && unicode.IsUpper(r)
		}
		return titled
	}
	return false
}

// placeholderPath reports a dotted name whose every part is a single letter ("A.B",
// "x.y"): the placeholder of a version scheme or an example ("Django A.B", "a.b"),
// never an API's name.
func placeholderPath(name string) bool {
	parts := strings.Split(name, ".")
	if len(parts) < 2 {
		return false
	}
	for _, p := range parts {
		if len(p) != 1 || !unicode.IsLetter(rune(p[0])) {
			return false
		}
	}
	return true
}

// everydayName reports an everyday word written as one ("debug", "add", "DELETE"),
// not a capitalised class name that happens to be a word ("Lock", "Counter").
func everydayName(name string) bool {
	return extract.IsEverydayWord(name) && (name == strings.ToLower(name) || name == strings.ToUpper(name))
}

// usageChain reports a dotted name that reads as code using an object rather than
// an API's name: three or more parts, the first capitalised and the second not
// ("Article.objects.filter", "Entry.objects.get" — an example's model and its
// manager). API names are a module path ("django.contrib.auth.models") or a class
// and its member ("QuerySet.select_related").
func usageChain(name string) bool {
	parts := strings.Split(name, ".")
	if len(parts) < 3 || parts[0] == "" || parts[1] == "" {
		return false
	}
	first, second := []rune(parts[0])[0], []rune(parts[1])[0]
	return unicode.IsUpper(first) && !unicode.IsUpper(second)
}

// relatedFrom selects the related entities among the candidates: what the top
// result pages are about. An entity is kept when
//   - it is not a query entity nor a query word, and its name is not noise
//     (noiseName), nor an everyday word unless a top title or heading names it;
//   - it is not generic: mentioned by at most genericShare of the documents the
//     search covers (scope; titleGenericShare when a top page's title names it),
//     or by at most minGenericDocuments documents;
//   - a file name only when a top title or heading names it;
//   - the top pages name it in a title, a heading or a sentence (a name found only
//     in code examples is an example's name);
//   - it is named by a top title or heading or shares a word with the query,
//     or several top pages mention it in sentences and it weighs at least
//     salientWeight of the feedback centroid;
//   - a passage that answers the query names, mentions or defines it
//     (answerPassages);
//   - and it is not a parameter name of the top pages' signatures unless a top
//     title or heading names it.
//
// Kept entities are scored by their weight times their evidence, best first; those
// under minRelatedScore or relativeScore of the best are dropped, and shownRelated
// decides which of the best two bear on the query's meaning.
func relatedFrom(q queryparse.Query, cands []candidateEntity, pages []topPage, scope int, source string, minConf float64) ([]RelatedEntity, []RelatedCandidate) {
	excluded := map[string]bool{}
	for _, e := range q.Entities {
		for _, s := range []string{e.Name, e.ID, e.Text} {
			excluded[strings.ToLower(s)] = true
		}
	}
	for _, t := range q.Terms {
		excluded[strings.ToLower(t)] = true
	}
	var out []keptEntity
	seen := map[string]bool{}
	answers := answerPassages(pages)
	for _, c := range cands {
		key := strings.ToLower(strings.TrimSpace(c.name))
		if key == "" || seen[key] || excluded[key] || excluded[strings.ToLower(c.id)] || !finite(c.weight) || c.weight <= 0 {
			continue
		}
		seen[key] = true
		if noiseName(c.name, c.typ) {
			continue
		}
		if !mentionedIn(answers, strings.ToLower(c.name)) {
			// A passage that answers the query (answerPassages) must name it in a
			// heading, mention it in a sentence or define it; most candidates fail
			// this, so it is asked before gather reads every top page for them.
			continue
		}
		ev := gather(pages, c.name, q.Terms)
		named := ev.title || ev.heading
		share := 0.0
		if scope > 0 && c.documents > 0 {
			share = float64(c.documents) / float64(scope)
		}
		switch {
		case c.documents > minGenericDocuments && (share > titleGenericShare || share > genericShare && !ev.title):
			continue
		case !named && (c.typ == "file" || everydayName(c.name)):
			continue
		case !named && ev.prose == 0:
			continue
		case !named && !ev.query && (ev.prose < 2 || c.weight < salientWeight):
			continue
		case ev.parameter && !named:
			continue
		}
		out = append(out, keptEntity{e: c, ev: ev, score: ev.score(c.weight), share: share})
	}
	slices.SortStableFunc(out, func(a, b keptEntity) int { return cmp.Compare(b.score, a.score) })
	return shownRelated(out, pages, source, minConf)
}

// keptEntity is a candidate relatedFrom kept, with its evidence and score.
type keptEntity struct {
	e     candidateEntity
	ev    evidence
	score float64
	share float64 // the share of the search's documents mentioning it; 0 when unknown
}

// shownRelated selects, among the kept candidates (best first), the best
// maxRelated that pass the score cuts, and shows those that bear on the query's
// meaning:
//   - one of the nearPassages passages of the top pages closest to the query (by
//     the cosine of the chunk's embedding and the query's, whichever retriever
//     found the chunk) names, mentions or defines it; judged on the dev sets, an
//     entity that only a farther passage names was retrieval's misreading
//     ("undo a migration" → RunPython, "OR conditions" → conditional
//     expression);
//   - the second also shares a word with the query or is named by the first
//     result page's title: judged on the dev sets, a second entity without either
//     was often an alternative to the answer rather than a part of it (random
//     beside secrets, OpenSSL beside hashlib, Logger beside logging);
//   - it is not a member's bare name that is an everyday word (memberWord);
//   - a concept or a language needs a top title or heading naming it or a query
//     word (salientTopic): judged on the dev sets, those kept on salience alone
//     (mentioned in the prose of several top pages) were words the pages use in
//     passing ("application server", "FIFO", "Tcl" for GUI toolkits), while
//     code names kept that way were mostly useful (USE_TZ, allow_future,
//     __wrapped__).
//
// An entity that fails is dropped, not replaced by the next candidate: those have
// weaker evidence. Without a query embedding only the second rule applies. The
// entities that pass are the considered candidates (returned for explain); of
// those, only the ones whose confidence (confidence.go) is at least minConf are
// shown.
func shownRelated(out []keptEntity, pages []topPage, source string, minConf float64) ([]RelatedEntity, []RelatedCandidate) {
	res := []RelatedEntity{}
	var considered []RelatedCandidate
	threshold, near := nearThreshold(pages)
	for i, k := range out {
		if i == maxRelated || k.score < minRelatedScore || k.score < relativeScore*out[0].score {
			break
		}
		if near && !nearQuery(pages, strings.ToLower(k.e.name), threshold) || i > 0 && !k.ev.query && !k.ev.first ||
			memberWord(k) || salientTopic(k) {
			continue
		}
		x := relatedFeatures(k, i)
		c := confidence(x)
		shown := c >= minConf
		considered = append(considered, RelatedCandidate{Name: k.e.name, Confidence: round(c, 3), Shown: shown, Features: x[:]})
		if shown {
			res = append(res, RelatedEntity{Name: k.e.name, Type: k.e.typ, Score: round(k.score, 3), Source: source})
		}
	}
	return res, considered
}

// memberWord reports a bare member name that is an everyday word ("check", "raw",
// "search") which a top page defines under an owner
// ("CheckConstraint.check", "Manager.raw", "re.search") and which shares no word
// with the query: shown alone it reads as the word, not as the API (judged on the dev
// sets: "check" for "CheckConstraint", "raw" for query-string parameters, "search"
// for re.sub). A module is exempt: its own functions carry its name as an owner
// ("socket.socket", "time.time").
func memberWord(k keptEntity) bool {
	return k.ev.member && !k.ev.query && k.e.typ != "module" && everydayName(k.e.name)
}

// salientTopic reports a concept or a language (a plain-language topic, not a code
// name) kept on salience alone: no top title or heading names it and it shares no
// word with the query.
func salientTopic(k keptEntity) bool {
	topic := k.e.typ == "concept" || strings.HasSuffix(k.e.typ, "_language")
	return topic && !k.ev.title && !k.ev.heading && !k.ev.query
}

// relatedWithin lists the entities the top results are about (relatedFrom): graph
// feedback's entities when it ran; otherwise the entities the results mention,
// weighted by the share of the top pages mentioning them. Expansion's neighbours of
// the query entities are not shown: they come from the whole graph, outside the
// request's filters, and were judged mostly unrelated to the results. Those whose
// confidence is under minConf are withheld; the second list is every entity the
// rules kept, for explain.
func relatedWithin(minConf float64, q queryparse.Query, fb []kgapi.WeightedEntity, ranked []ranker.Result, pages []topPage, scope int) ([]RelatedEntity, []RelatedCandidate) {
	if len(pages) == 0 {
		return []RelatedEntity{}, nil
	}
	var cands []candidateEntity
	if len(fb) > 0 {
		for _, e := range fb {
			cands = append(cands, candidateEntity{name: e.Name, id: e.ID, typ: e.Type, weight: e.Weight, documents: e.Documents})
		}
		return relatedFrom(q, cands, pages, scope, "results", minConf)
	}
	count := map[string]int{}
	var names []string
	for _, r := range ranked {
		for _, m := range r.Candidate.EntityMentions {
			if count[m] == 0 {
				names = append(names, m)
			}
			count[m]++
		}
	}
	for _, n := range names {
		// the share of results mentioning it, scaled like a centroid share
		cands = append(cands, candidateEntity{name: n, weight: 0.3 * float64(count[n]) / float64(len(ranked))})
	}
	return relatedFrom(q, cands, pages, 0, "results", minConf)
}

// suggestions are up to maxSuggested queries a person would type next: the related
// entities that a top page's title or heading names or that share a word with the
// query (the thing that answers it, or a sibling), in their own spelling
// (`json.dumps`, `QuerySet.select_related`), never one the query already contains.
// Never the query with a word appended or an entity swapped in: judged on the dev
// sets, such rewrites read garbled (eval/suggest/README.md). No strong related
// entity: no suggestion.
func suggestions(q queryparse.Query, related []RelatedEntity, pages []topPage) []string {
	out := []string{}
	query := strings.ToLower(q.Normalized)
	for _, r := range related {
		name := strings.TrimSpace(r.Name)
		if n := strings.ToLower(name); containsName(query, n) || strings.Contains(query, "."+n) {
			continue // what the query says, or the last part of a dotted name it says
		}
		if restatesQuery(r, q.Terms) {
			continue
		}
		ev := gather(pages, name, q.Terms)
		if !ev.title && !ev.heading && !ev.query {
			continue
		}
		out = append(out, name)
		if len(out) == maxSuggested {
			break
		}
	}
	return out
}

// restatesQuery reports whether a related entity, as a suggested query, would only
// say the query again: a plain phrase, not an API name, whose every word is one of
// the query's words up to a plural or verb ending ("Migrations" for "how do I undo a
// migration", "custom manager" for "custom model manager"). It stays a related entity;
// as a next query it adds nothing. Names in code form (dotted, snake or camel case) and
// entities typed as code (a module such as "threading" for "start a thread") are the
// answer's own spelling and stay suggestions.
func restatesQuery(r RelatedEntity, terms []string) bool {
	switch r.Type {
	case "", "concept", "identifier":
	default:
		return false
	}
	if !isPlainPhrase(r.Name) {
		return false
	}
	parts := nameParts(r.Name)
	if len(parts) == 0 {
		return false
	}
	for _, part := range parts {
		if !slices.ContainsFunc(terms, func(t string) bool { return sameWord(part, stemWord(strings.ToLower(t))) }) {
			return false
		}
	}
	return true
}

// isPlainPhrase reports whether name is words of letters (an initial capital at most)
// separated by spaces or hyphens: prose, not code.
func isPlainPhrase(name string) bool {
	for _, w := range strings.FieldsFunc(name, func(r rune) bool { return r == ' ' || r == '-' }) {
		for i, r := range w {
			if !unicode.IsLetter(r) || (i > 0 && unicode.IsUpper(r) && !isUpperWord(w)) {
				return false
			}
		}
	}
	return strings.TrimSpace(name) != ""
}

// isUpperWord reports whether every letter of w is upper case (an acronym: "SQL").
func isUpperWord(w string) bool { return strings.ToUpper(w) == w }

// sameWord reports whether two stemmed, lower-cased words are one word: equal, or
// one a prefix of the other differing by at most two letters ("quer" and "query").
func sameWord(a, b string) bool {
	if a == b {
		return true
	}
	if len(a) < 4 || len(b) < 4 || max(len(a), len(b))-min(len(a), len(b)) > 2 {
		return false
	}
	return strings.HasPrefix(a, b) || strings.HasPrefix(b, a)
}

// pageChunks returns, for a document, its hydrated candidate chunks (the result
// chunk among them) that pass the request's filters, in retrieval order.
func (s *search) pageChunks() func(docID string) []ranker.Candidate {
	return func(docID string) []ranker.Candidate {
		var out []ranker.Candidate
		for _, id := range s.order {
			c := s.cands[id]
			if c.hydrated && c.c.DocumentID == docID && c.c.Text != "" {
				out = append(out, c.c)
			}
		}
		return out
	}
}

// scopeSize is the number of documents the request's filters cover, from the
// indexer's table when it can count them; 0 when unknown.
func (p *Pipeline) scopeSize(req Request) int {
	c, ok := p.docs.(interface {
		Count(tags []string, domain string) int
	})
	if !ok || c == nil {
		return 0
	}
	return c.Count(req.Tags, req.Domain)
}
