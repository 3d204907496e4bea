package ranker

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// stopwords are dropped from query terms before term overlap is measured; they carry no
// topical meaning and would make every title look like a partial match.
var stopwords = map[string]struct{}{
	"a": {}, "an": {}, "and": {}, "are": {}, "as": {}, "at": {}, "be": {}, "by": {},
	"can": {}, "do": {}, "does": {}, "for": {}, "from": {}, "how": {}, "i": {}, "in": {},
	"into": {}, "is": {}, "it": {}, "its": {}, "of": {}, "on": {}, "or": {}, "that": {},
	"the": {}, "this": {}, "to": {}, "what": {}, "when": {}, "where": {}, "which": {},
	"who": {}, "why": {}, "with": {}, "you": {}, "your": {}, "my": {}, "we": {}, "not": {},
	"use": {}, "using": {}, "vs": {}, "about": {}, "there": {}, "their": {}, "was": {},
	"were": {}, "will": {}, "should": {}, "would": {}, "could": {}, "if": {}, "than": {},
}

// isWordRune reports whether r belongs to a word. Letters and digits do; so do '_' and
// '+' / '#' so that identifiers such as "c++", "c#" and "snake_case" stay one token.
func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '+' || r == '#'
}

// words splits s into lowercase words (runs of word runes).
func words(s string) []string {
	var out []string
	eachWord(s, func(w string, _ int) bool {
		out = append(out, w)
		return true
	})
	return out
}

// eachWord calls fn with every lowercase word of s and its byte offset in s, until fn
// returns false. Words that are already lowercase ASCII are passed without allocating.
func eachWord(s string, fn func(w string, at int) bool) {
	start := -1
	lower := true
	emit := func(end int) bool {
		w := s[start:end]
		if !lower {
			w = strings.ToLower(w)
		}
		return fn(w, start)
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			word := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '+' || c == '#'
			upper := c >= 'A' && c <= 'Z'
			if word || upper {
				if start < 0 {
					start, lower = i, true
				}
				lower = lower && !upper
			} else if start >= 0 {
				if !emit(i) {
					return
				}
				start = -1
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if isWordRune(r) {
			if start < 0 {
				start = i
			}
			lower = false
		} else if start >= 0 {
			if !emit(i) {
				return
			}
			start = -1
		}
		i += n
	}
	if start >= 0 {
		emit(len(s))
	}
}

// token is a stemmed word and whether it is a stopword.
type token struct {
	stem string
	stop bool
}

// appendTokens appends the tokens of s to dst. Words that cannot stem to anything the
// filter wants get an empty stem (which equals no query stem); a nil filter keeps all.
func appendTokens(dst []token, s string, pf prefixFilter) []token {
	eachWord(s, func(w string, _ int) bool {
		t := token{stop: isStopword(w)}
		if pf == nil || pf.may(w) {
			t.stem = stem(w)
		}
		dst = append(dst, t)
		return true
	})
	return dst
}

// maxStopwordLen is the length of the longest stopword; longer words skip the lookup.
const maxStopwordLen = 6

func isStopword(w string) bool {
	if len(w) > maxStopwordLen {
		return false
	}
	_, ok := stopwords[w]
	return ok
}

// prefixFilter holds the first two bytes of the stems a matcher looks for. stem keeps
// the first two bytes of every word of two or more bytes, so a word whose first two
// bytes are not in the filter cannot stem to a wanted stem and need not be stemmed.
type prefixFilter []uint16

func newPrefixFilter(stems []string) prefixFilter {
	pf := prefixFilter{}
	for _, s := range stems {
		if len(s) < 2 {
			continue // one-byte stems come only from one-byte words, which may() passes
		}
		k := uint16(s[0])<<8 | uint16(s[1])
		dup := false
		for _, x := range pf {
			dup = dup || x == k
		}
		if !dup {
			pf = append(pf, k)
		}
	}
	return pf
}

// may reports whether w could stem to one of the filter's stems.
func (pf prefixFilter) may(w string) bool {
	if len(w) < 2 {
		return true
	}
	k := uint16(w[0])<<8 | uint16(w[1])
	for _, x := range pf {
		if x == k {
			return true
		}
	}
	return false
}

// stem is a deliberately light English stemmer: it folds plurals and the commonest
// inflections ("connections" → "connection", "queries" → "query", "indexed" → "index",
// "indexing" → "index", "created" → "creat") and leaves everything else alone. Aggressive stemmers merge
// unrelated technical terms ("general"/"generate"); titles are short, so precision
// matters more than recall here.
func stem(w string) string {
	if len(w) <= 3 || !isASCIIAlpha(w) {
		return w
	}
	s := stripSuffix(w)
	// A final 'e' is dropped from longer stems so that "create", "created" and
	// "creating" all become "creat".
	if len(s) > 4 && s[len(s)-1] == 'e' {
		s = s[:len(s)-1]
	}
	return s
}

func stripSuffix(w string) string {
	n := len(w)
	switch {
	case strings.HasSuffix(w, "ies") && n > 4:
		return w[:n-3] + "y"
	case strings.HasSuffix(w, "sses"):
		return w[:n-2]
	case strings.HasSuffix(w, "xes") || strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes"):
		return w[:n-2]
	case strings.HasSuffix(w, "ing") && n > 5:
		return undouble(w[:n-3])
	case strings.HasSuffix(w, "ed") && n > 4 && !strings.HasSuffix(w, "eed"):
		return undouble(w[:n-2])
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		return w[:n-1]
	}
	return w
}

// undouble turns "runn" (from "running") into "run"; l, s and z stay doubled
// ("install", "pass", "buzz").
func undouble(w string) string {
	n := len(w)
	if n >= 3 && w[n-1] == w[n-2] && !strings.ContainsRune("aeioulsz", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}

func isASCIIAlpha(w string) bool {
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// Terms returns the normalised query terms of s: lowercase words, stopwords removed,
// lightly stemmed, duplicates removed, in first-seen order. If every word is a stopword,
// the stemmed words are returned so that a query like "how to" still has terms.
func Terms(s string) []string {
	ws := words(s)
	out := make([]string, 0, len(ws))
	seen := make(map[string]struct{}, len(ws))
	for _, w := range ws {
		if isStopword(w) {
			continue
		}
		t := stem(w)
		if _, dup := seen[t]; dup {
			continue
		}
		seen[t] = struct{}{}
		out = append(out, t)
	}
	if len(out) == 0 {
		for _, w := range ws {
			t := stem(w)
			if _, dup := seen[t]; dup {
				continue
			}
			seen[t] = struct{}{}
			out = append(out, t)
		}
	}
	return out
}

// runeLen is utf8.RuneCountInString, named for readability at call sites.
func runeLen(s string) int { return utf8.RuneCountInString(s) }
