package extract

import (
	"strings"
	"unicode"
)

// acronymDef is "Write-Ahead Log (WAL)" or "WAL (Write-Ahead Log)" found in text.
type acronymDef struct {
	acronym   string
	expansion string
}

var expansionStopwords = map[string]bool{"of": true, "and": true, "for": true, "the": true, "to": true, "in": true,
	"on": true, "a": true, "an": true, "with": true, "over": true, "by": true, "as": true, "at": true, "&": true}

// findAcronyms scans a prepared chunk for acronym definitions.
func findAcronyms(c *chunkCtx) []acronymDef {
	var defs []acronymDef
	a := c.atoms
	for k := range a {
		if a[k].code >= 0 {
			continue
		}
		// "... (ACR)": the atom is alone between brackets
		if before(c.text, a[k].start) == '(' && after(c.text, a[k].end) == ')' && isAcronymToken(a[k].text) {
			letters := acronymLetters(a[k].text)
			if n := matchExpansion(c, k-1, letters); n > 0 {
				exp := c.text[a[k-n].start:a[k-1].end]
				defs = append(defs, acronymDef{acronym: a[k].text, expansion: exp})
			}
			continue
		}
		// "ACR (Expansion words)"
		if isAcronymToken(a[k].text) && k+1 < len(a) && strings.TrimSpace(c.text[a[k].end:a[k+1].start]) == "(" {
			letters := acronymLetters(a[k].text)
			end := k + 1
			for end < len(a) && a[end].sent == a[k].sent && end-k <= len(letters)+4 && after(c.text, a[end].end) != ')' {
				end++
			}
			if end < len(a) && after(c.text, a[end].end) == ')' && end-k <= len(letters)+4 {
				if n := matchExpansion(c, end, letters); n == end-k {
					exp := c.text[a[k+1].start:a[end].end]
					defs = append(defs, acronymDef{acronym: a[k].text, expansion: exp})
				}
			}
		}
	}
	return defs
}

func before(text string, i int) rune {
	for i > 0 {
		r := runeBefore(text, i)
		if r != ' ' {
			return r
		}
		i--
	}
	return 0
}

func after(text string, i int) rune {
	for i < len(text) {
		r := runeAt(text, i)
		if r != ' ' {
			return r
		}
		i++
	}
	return 0
}

// isAcronymToken: 2–10 characters, at least two capitals, starting with a
// letter (WAL, MVCC, PyPI, DoH, gRPC, APIs).
func isAcronymToken(s string) bool {
	if len(s) < 2 || len(s) > 10 {
		return false
	}
	upper := 0
	for _, r := range s {
		switch {
		case unicode.IsUpper(r):
			upper++
		case unicode.IsLower(r), unicode.IsDigit(r), r == '-':
		default:
			return false
		}
	}
	return upper >= 2 && unicode.IsLetter(runeAt(s, 0))
}

// acronymLetters lowers the letters of an acronym, dropping a plural s.
func acronymLetters(s string) []rune {
	s = strings.TrimSuffix(s, "s")
	var out []rune
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) {
			out = append(out, r)
		}
	}
	return out
}

// matchExpansion checks that the atoms ending at index last spell the acronym
// letters with their initials (an atom may give several letters in order, as
// "Multiversion" gives M and V; small words may be skipped). It returns the
// number of atoms of the expansion, 0 when there is none.
func matchExpansion(c *chunkCtx, last int, letters []rune) int {
	if last < 0 || len(letters) < 2 {
		return 0
	}
	sent := c.atoms[last].sent
	lo := last - len(letters) - 3
	if lo < 0 {
		lo = 0
	}
	var words []string
	for k := last; k >= lo && c.atoms[k].sent == sent && c.atoms[k].code < 0; k-- {
		words = append(words, strings.ToLower(c.atoms[k].text))
	}
	// words are in reverse order; try every start, shortest first
	for n := 1; n <= len(words); n++ {
		seq := make([]string, n)
		for q := 0; q < n; q++ {
			seq[q] = words[n-1-q]
		}
		if expansionSpells(seq, letters) && !expansionStopwords[seq[0]] {
			return n
		}
	}
	return 0
}

// expansionSpells reports whether the words spell the letters: every
// non-stopword contributes its first letter and may contribute later letters in
// order; stopwords may contribute their first letter or nothing.
func expansionSpells(words []string, letters []rune) bool {
	// memo[w][l]: 0 unknown, 1 true, 2 false (keeps the search polynomial)
	memo := make([][]uint8, len(words)+1)
	for i := range memo {
		memo[i] = make([]uint8, len(letters)+1)
	}
	var rec, solve func(w, l int) bool
	rec = func(w, l int) bool {
		if l > len(letters) {
			return false
		}
		if memo[w][l] == 0 {
			memo[w][l] = 2
			if solve(w, l) {
				memo[w][l] = 1
			}
		}
		return memo[w][l] == 1
	}
	solve = func(w, l int) bool {
		if w == len(words) {
			return l == len(letters)
		}
		word := []rune(words[w])
		if expansionStopwords[words[w]] && rec(w+1, l) {
			return true
		}
		if l >= len(letters) || len(word) == 0 || word[0] != letters[l] {
			return false
		}
		// take the first letter, then optionally more letters found in order
		pos, ll := 1, l+1
		if rec(w+1, ll) {
			return true
		}
		for ll < len(letters) {
			found := false
			for pos < len(word) {
				if word[pos] == letters[ll] {
					found = true
					pos++
					break
				}
				pos++
			}
			if !found {
				return false
			}
			ll++
			if rec(w+1, ll) {
				return true
			}
		}
		return false
	}
	return rec(0, 0)
}

// defineAcronyms turns definitions into document aliases: both the acronym and
// the expansion resolve to the known entity when either is known, or to a new
// entity named by the expansion.
func (x *Extractor) defineAcronyms(defs []acronymDef, aliases map[string]*entry) {
	for _, d := range defs {
		ak, ek := Key(d.acronym), Key(d.expansion)
		if ak == "" || ek == "" {
			continue
		}
		var e *entry
		if info, _ := x.lookup(ek); info != nil {
			e = info.e
		} else if info, _ := x.lookup(ak); info != nil {
			e = info.e
		} else if prev, ok := aliases[ek]; ok {
			e = prev
		} else if prev, ok := aliases[ak]; ok {
			e = prev
		} else {
			name := strings.Join(strings.Fields(d.expansion), " ")
			e = &entry{id: ek, name: name, typ: expansionType(d.expansion), aliases: []string{d.acronym}, source: SourceAcronym}
		}
		aliases[ak] = e
		aliases[ek] = e
		if s := singular(ek); s != "" {
			aliases[s] = e
		}
	}
}

func expansionType(exp string) string {
	words := strings.Fields(strings.ToLower(strings.ReplaceAll(exp, "-", " ")))
	if len(words) == 0 {
		return "concept"
	}
	if t := headTypes[words[len(words)-1]]; t != "" {
		return t
	}
	return "concept"
}
