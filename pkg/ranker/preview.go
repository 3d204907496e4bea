package ranker

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// span is a sentence of a text: byte offsets [start, end) with surrounding space trimmed.
type span struct{ start, end int }

// Preview returns the best passage of text for the query terms (words or multi-word
// entities; they are normalised like Terms) in at most maxChars characters, and the byte
// offsets [start, end) of that passage in text.
//
// The sentence matching the most distinct terms is taken (the earliest on ties, the
// first sentence when nothing matches), then neighbouring sentences are added, the
// better-matching neighbour first, while the passage fits. A single sentence longer than
// maxChars is cut around its first match. Cuts fall on whitespace, never inside a word,
// unless one word alone is longer than maxChars. Runs of whitespace in the snippet are
// collapsed to one space, so snippet is text[start:end] with whitespace collapsed.
// maxChars <= 0 or a blank text give "", 0, 0.
func Preview(text string, terms []string, maxChars int) (snippet string, start, end int) {
	return newWantSet(terms).preview(text, maxChars)
}

// newWantSet normalises the preview terms once, for use on many texts.
func newWantSet(terms []string) wantSet {
	want := wantSet{set: map[string]struct{}{}}
	var stems []string
	for _, t := range terms {
		for _, w := range Terms(t) {
			want.set[w] = struct{}{}
			stems = append(stems, w)
		}
	}
	want.filter = newPrefixFilter(stems)
	return want
}

// preview is Preview with the terms already normalised.
func (want wantSet) preview(text string, maxChars int) (snippet string, start, end int) {
	if maxChars <= 0 {
		return "", 0, 0
	}
	sents := sentences(text)
	if len(sents) == 0 {
		return "", 0, 0
	}
	scores := make([]int, len(sents))
	best := 0
	for i, s := range sents {
		scores[i] = matchCount(text[s.start:s.end], want)
		if scores[i] > scores[best] {
			best = i
		}
	}

	lo, hi := best, best
	if runeLen(text[sents[best].start:sents[best].end]) > maxChars {
		start, end = cutAround(text, sents[best], want, maxChars)
		return collapseSpace(text[start:end]), start, end
	}
	fits := func(a, b int) bool { return runeLen(text[sents[a].start:sents[b].end]) <= maxChars }
	for {
		left, right := lo-1, hi+1
		canL := left >= 0 && fits(left, hi)
		canR := right < len(sents) && fits(lo, right)
		switch {
		case canL && canR:
			if scores[left] > scores[right] {
				lo = left
			} else {
				hi = right
			}
			continue
		case canR:
			hi = right
			continue
		case canL:
			lo = left
			continue
		}
		break
	}
	start, end = sents[lo].start, sents[hi].end
	return collapseSpace(text[start:end]), start, end
}

// sentences splits text at '.', '!' or '?' followed by whitespace, and at line breaks.
func sentences(text string) []span {
	var out []span
	add := func(a, b int) {
		for a < b {
			r, n := utf8.DecodeRuneInString(text[a:])
			if !unicode.IsSpace(r) {
				break
			}
			a += n
		}
		for b > a {
			r, n := utf8.DecodeLastRuneInString(text[a:b])
			if !unicode.IsSpace(r) {
				break
			}
			b -= n
		}
		if b > a {
			out = append(out, span{a, b})
		}
	}
	from := 0
	for i, r := range text {
		switch r {
		case '\n':
			add(from, i)
			from = i + 1
		case '.', '!', '?':
			next := i + 1
			if next >= len(text) {
				continue
			}
			nr, _ := utf8.DecodeRuneInString(text[next:])
			if unicode.IsSpace(nr) {
				add(from, next)
				from = next
			}
		}
	}
	add(from, len(text))
	return out
}

// matchCount is the number of distinct wanted terms among the words of s.
func matchCount(s string, want wantSet) int {
	if len(want.set) == 0 {
		return 0
	}
	var got []string // distinct matches; queries have few terms, so a slice beats a map
	eachWord(s, func(w string, _ int) bool {
		t, ok := want.has(w)
		if !ok {
			return true
		}
		for _, g := range got {
			if g == t {
				return true
			}
		}
		got = append(got, t)
		return true
	})
	return len(got)
}

// cutAround returns a window of at most maxChars runes inside sentence s that starts up
// to a third of the budget before the first wanted word, with both ends on whitespace.
func cutAround(text string, s span, want wantSet, maxChars int) (int, int) {
	first := s.start
	if pos := firstMatch(text[s.start:s.end], want); pos >= 0 {
		first = s.start + pos
	}
	// Step back up to a third of the budget for context.
	start := first
	for back := 0; back < maxChars/3 && start > s.start; back++ {
		_, n := utf8.DecodeLastRuneInString(text[s.start:start])
		start -= n
	}
	// Move forward to the start of a word if we landed inside one.
	if start > s.start && start < first {
		for start < first {
			r, _ := utf8.DecodeLastRuneInString(text[:start])
			if unicode.IsSpace(r) {
				break
			}
			_, n := utf8.DecodeRuneInString(text[start:])
			start += n
		}
	}
	// Take maxChars runes, then back off to the last whitespace.
	end := start
	for count := 0; count < maxChars && end < s.end; count++ {
		_, n := utf8.DecodeRuneInString(text[end:])
		end += n
	}
	if end < s.end {
		r, _ := utf8.DecodeRuneInString(text[end:])
		if !unicode.IsSpace(r) {
			cut := strings.LastIndexFunc(text[start:end], unicode.IsSpace)
			if cut > 0 {
				end = start + cut
			}
		}
	}
	// Trim trailing space left by the cut.
	for end > start {
		r, n := utf8.DecodeLastRuneInString(text[start:end])
		if !unicode.IsSpace(r) {
			break
		}
		end -= n
	}
	return start, end
}

// firstMatch returns the byte offset in s of the first word whose stem is wanted, or -1.
func firstMatch(s string, want wantSet) int {
	pos := -1
	eachWord(s, func(w string, at int) bool {
		if _, ok := want.has(w); ok {
			pos = at
			return false
		}
		return true
	})
	return pos
}

// collapseSpace replaces each run of whitespace with a single space.
func collapseSpace(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return unicode.IsSpace(r) && r != ' ' }) && !strings.Contains(s, "  ") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// wantSet is the set of wanted stems with a prefix filter that skips stemming words
// that cannot match.
type wantSet struct {
	set    map[string]struct{}
	filter prefixFilter
}

// has returns the stem of the lowercase word w and whether it is wanted.
func (want wantSet) has(w string) (string, bool) {
	if len(want.set) == 0 || !want.filter.may(w) {
		return "", false
	}
	t := stem(w)
	_, ok := want.set[t]
	return t, ok
}
