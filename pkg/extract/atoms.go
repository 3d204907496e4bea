package extract

import (
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// region is a byte range of code inside a chunk's text.
type region struct {
	start, end int
	block      bool // a code block (fenced, multi-line or an interactive session), not inline code
}

// atom is the unit the matchers work on: a run of word characters. Hyphens and
// slashes between word characters split atoms but are remembered (joinNext), so
// a name may span several atoms ("Write-Ahead Log", "HTTP/2").
type atom struct {
	start, end int // byte offsets into the text
	text       string
	code       int  // index of the code region holding the atom, or -1
	call       bool // directly followed by '('
	dollar     bool // written as $NAME or ${NAME}
	path       bool // a file system path
	url        bool // a web address
	sent       int  // sentence index
	first      bool // first atom of its sentence
	used       bool // consumed by a match
}

// maxInlineCode bounds an inline code span in bytes.
const maxInlineCode = 300

// codeRegions finds the code in text: backtick spans (any fence length) and the
// given code spans, located in the text when they occur in it. Spans that do not
// occur are returned as extra, to be analysed on their own.
func codeRegions(text string, spans []string) (regions []region, extra []string) {
	for i := 0; i < len(text); {
		if text[i] != '`' {
			i++
			continue
		}
		n := 0
		for i+n < len(text) && text[i+n] == '`' {
			n++
		}
		fence := text[i : i+n]
		j := i + n
		closed := -1
		for j < len(text) {
			k := strings.Index(text[j:], fence)
			if k < 0 {
				break
			}
			k += j
			m := 0
			for k+m < len(text) && text[k+m] == '`' {
				m++
			}
			if m == n {
				closed = k
				break
			}
			j = k + m
		}
		// inline code (one or two backticks) stays inside its paragraph and is
		// short; otherwise the backtick is a literal one
		if closed >= 0 && n < 3 && (closed-(i+n) > maxInlineCode || strings.Contains(text[i+n:closed], "\n\n")) {
			closed = -1
		}
		if closed < 0 {
			i += n
			continue
		}
		regions = append(regions, region{start: i + n, end: closed, block: n >= 3 || strings.Contains(text[i+n:closed], "\n")})
		i = closed + n
	}
	cursor := 0
	for _, s := range spans {
		s = strings.TrimSpace(s)
		if s == "" || isProseWord(s) {
			// an everyday word: which of its occurrences in the text was the
			// code cannot be told, and alone it names nothing
			continue
		}
		k := indexWord(text[cursor:], s)
		if k >= 0 {
			k += cursor
		} else {
			k = indexWord(text, s)
		}
		if k < 0 && strings.Contains(text, s) {
			continue // only inside longer words: not this code
		}
		if k < 0 {
			extra = append(extra, s)
			continue
		}
		r := region{start: k, end: k + len(s), block: strings.Contains(s, "\n")}
		if !overlaps(regions, r) {
			regions = append(regions, r)
		}
		cursor = r.end
	}
	for _, b := range replBlocks(text) {
		// the session holds the inline code located in it
		regions = slices.DeleteFunc(regions, func(r region) bool { return r.start >= b.start && r.end <= b.end })
		if !overlaps(regions, b) {
			regions = append(regions, b)
		}
	}
	sort.Slice(regions, func(a, b int) bool { return regions[a].start < regions[b].start })
	return regions, extra
}

// replBlocks finds interactive-session examples in plain text, which crawled
// pages carry without code markup: from a line starting with the ">>>" prompt
// to the next blank line. They are code blocks: "class TZ(tzinfo):" defines no
// acronym and their local names are no entities.
func replBlocks(text string) []region {
	var out []region
	for pos := 0; pos < len(text); {
		k := strings.Index(text[pos:], ">>>")
		if k < 0 {
			break
		}
		k += pos
		if k > 0 && text[k-1] != '\n' || k+3 < len(text) && text[k+3] != ' ' && text[k+3] != '\n' {
			pos = k + 3
			continue
		}
		end := strings.Index(text[k:], "\n\n")
		if end < 0 {
			end = len(text)
		} else {
			end += k
		}
		out = append(out, region{start: k, end: end, block: true})
		pos = end
	}
	return out
}

// withGivenRanges puts the caller's exact code ranges first: a found region
// that overlaps one of them is dropped. Ranges outside the text, empty, or not
// on rune boundaries are ignored.
func withGivenRanges(text string, found []region, inline, blocks []Span) []region {
	var given []region
	add := func(spans []Span, block bool) {
		for _, s := range spans {
			if s.Start < 0 || s.End > len(text) || s.Start >= s.End ||
				!utf8.RuneStart(text[s.Start]) || s.End < len(text) && !utf8.RuneStart(text[s.End]) {
				continue
			}
			r := region{start: s.Start, end: s.End, block: block || strings.Contains(text[s.Start:s.End], "\n")}
			if !overlaps(given, r) {
				given = append(given, r)
			}
		}
	}
	add(blocks, true)
	add(inline, false)
	for _, r := range found {
		if !overlaps(given, r) {
			given = append(given, r)
		}
	}
	sort.Slice(given, func(a, b int) bool { return given[a].start < given[b].start })
	return given
}

// indexWord finds s in text where it does not continue a word on either side
// ("platform" is not found inside "platforms"), or returns -1.
func indexWord(text, s string) int {
	for off := 0; off <= len(text)-len(s); {
		k := strings.Index(text[off:], s)
		if k < 0 {
			return -1
		}
		k += off
		before, after := runeBefore(text, k), runeAt(text, k+len(s))
		okBefore := !isWordRune(runeAt(s, 0)) || !isWordRune(before)
		last := runeBefore(s, len(s))
		okAfter := !isWordRune(last) || !isWordRune(after)
		if okBefore && okAfter {
			return k
		}
		off = k + 1
	}
	return -1
}

func overlaps(rs []region, r region) bool {
	for _, q := range rs {
		if r.start < q.end && q.start < r.end {
			return true
		}
	}
	return false
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || unicode.Is(unicode.Mn, r)
}

// isAtomRune reports whether r may appear inside an atom.
func isAtomRune(r rune) bool {
	return isWordRune(r) || r == '.' || r == '+' || r == '#' || r == '@' || r == '\'' || r == '’'
}

func runeAt(s string, i int) rune {
	if i < 0 || i >= len(s) {
		return 0
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return r
}

func runeBefore(s string, i int) rune {
	if i <= 0 || i > len(s) {
		return 0
	}
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return r
}

func isUnitEnd(r rune) bool {
	return r == 0 || unicode.IsSpace(r) || strings.ContainsRune("`\"'()[]{}<>,;|", r)
}

// atomize splits text into atoms and sentences. It is linear in len(text).
func atomize(text string, regions []region) []atom {
	var atoms []atom
	ri := 0
	regionOf := func(pos int) int {
		for ri < len(regions) && regions[ri].end <= pos {
			ri++
		}
		if ri < len(regions) && regions[ri].start <= pos && pos < regions[ri].end {
			return ri
		}
		return -1
	}
	i := 0
	for i < len(text) {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !isAtomRune(r) && r != '/' && r != '~' && r != '-' && r != '$' {
			i += size
			continue
		}
		unitStart := i == 0 || isUnitEnd(runeBefore(text, i))
		// Web addresses and paths are single atoms.
		if unitStart {
			j := i
			for j < len(text) {
				q, qs := utf8.DecodeRuneInString(text[j:])
				if isUnitEnd(q) {
					break
				}
				j += qs
			}
			unit := text[i:j]
			isURL := strings.HasPrefix(unit, "http://") || strings.HasPrefix(unit, "https://") || strings.HasPrefix(unit, "www.")
			isPath := strings.HasPrefix(unit, "/") && len(unit) > 1 && unit[1] != '/' ||
				strings.HasPrefix(unit, "~/") || strings.HasPrefix(unit, "./") || strings.HasPrefix(unit, "../") ||
				strings.HasPrefix(unit, ".") && len(unit) > 1 && isWordRune(runeAt(unit, 1)) && strings.Contains(unit, "/")
			if isURL || isPath {
				e := j
				for e > i && strings.ContainsRune(".:!?", rune(text[e-1])) {
					e--
				}
				if e > i {
					atoms = append(atoms, atom{start: i, end: e, text: text[i:e], code: regionOf(i), url: isURL, path: isPath})
				}
				i = j
				continue
			}
		}
		// An ordinary atom.
		start := i
		dollar := false
		switch {
		case r == '$':
			dollar = true
			i += size
			if runeAt(text, i) == '{' {
				i++
			}
			start = i
		case r == '-' && unitStart && (runeAt(text, i+1) == '-' || isWordRune(runeAt(text, i+1))):
			// a command-line flag keeps its dashes
			for i < len(text) && text[i] == '-' {
				i++
			}
		case r == '-' || r == '~' || r == '/':
			i += size
			continue
		}
		for i < len(text) {
			q, qs := utf8.DecodeRuneInString(text[i:])
			if isAtomRune(q) {
				i += qs
				continue
			}
			break
		}
		end := i
		// trim
		for end > start {
			last, ls := utf8.DecodeLastRuneInString(text[start:end])
			if last == '.' || last == '\'' || last == '’' {
				end -= ls
				continue
			}
			break
		}
		if end-start >= 2 && (strings.HasSuffix(text[start:end], "'s") || strings.HasSuffix(text[start:end], "’s")) {
			if strings.HasSuffix(text[start:end], "'s") {
				end -= 2
			} else {
				end -= len("’s")
			}
		}
		for start < end && (text[start] == '\'' || strings.HasPrefix(text[start:end], "’") || text[start] == '.' && !(start+1 < end && isWordRune(runeAt(text, start+1)))) {
			_, s := utf8.DecodeRuneInString(text[start:end])
			start += s
		}
		if i == start && i < len(text) {
			_, s := utf8.DecodeRuneInString(text[i:])
			i += s
			continue
		}
		if end > start && hasWordRune(text[start:end]) {
			if !dollar {
				b := runeBefore(text, start)
				dollar = b == '$' || (b == '{' && runeBefore(text, start-1) == '$')
			}
			atoms = append(atoms, atom{
				start: start, end: end, text: text[start:end], code: regionOf(start),
				call: i < len(text) && text[i] == '(', dollar: dollar,
			})
		}
		// a joiner between word characters continues the name in the next atom
		if i < len(text) && (text[i] == '-' || text[i] == '/') && isWordRune(runeAt(text, i+1)) {
			i++
		}
	}
	markSentences(text, atoms)
	return atoms
}

func hasWordRune(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return true
		}
	}
	return false
}

var abbreviations = map[string]bool{
	"e.g": true, "i.e": true, "etc": true, "vs": true, "cf": true, "approx": true, "fig": true, "eq": true,
	"no": true, "dr": true, "mr": true, "mrs": true, "ms": true, "st": true, "inc": true, "ltd": true, "al": true,
}

// markSentences assigns sentence numbers: a sentence ends at '.', '!' or '?'
// followed by a space and a word that does not start in lower case, at a blank
// line, or at a line break inside code.
func markSentences(text string, atoms []atom) {
	sent := 0
	for k := range atoms {
		if k > 0 {
			prev := &atoms[k-1]
			gap := text[prev.end:atoms[k].start]
			if sentenceBreak(prev, &atoms[k], gap, text) {
				sent++
			}
		}
		atoms[k].sent = sent
		atoms[k].first = k == 0 || atoms[k-1].sent != sent
	}
}

func sentenceBreak(prev, next *atom, gap, text string) bool {
	if strings.Contains(gap, "\n\n") || strings.Contains(gap, "\r\n\r\n") {
		return true
	}
	if prev.code >= 0 && prev.code == next.code {
		return strings.ContainsRune(gap, '\n')
	}
	// the gap starts right after prev; trailing dots trimmed from prev are in it
	idx := strings.IndexAny(gap, ".!?")
	if idx < 0 {
		return strings.Contains(gap, ":\n")
	}
	if idx == 0 && gap[0] == '.' && abbreviations[strings.ToLower(prev.text)] {
		return false
	}
	rest := gap[idx+1:]
	if rest != "" && !unicode.IsSpace(runeAt(rest, 0)) && !strings.ContainsAny(rest[:1], "\"')]`") {
		return false
	}
	if !strings.ContainsFunc(gap[idx:], unicode.IsSpace) {
		return false
	}
	return !unicode.IsLower(runeAt(next.text, 0)) || next.code >= 0
}
