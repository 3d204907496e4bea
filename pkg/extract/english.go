package extract

import (
	_ "embed"
	"strings"
	"unicode"
)

//go:embed english.txt
var englishTxt string

// englishWords holds the base forms of english.txt.
var englishWords = func() map[string]struct{} {
	m := make(map[string]struct{}, 2048)
	for _, line := range strings.Split(englishTxt, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		for _, w := range strings.Fields(line) {
			m[strings.ToLower(w)] = struct{}{}
		}
	}
	return m
}()

// placeholderNames are the metasyntactic names of examples (foo, bar): never an
// entity of their own.
var placeholderNames = map[string]bool{"foo": true, "bar": true, "baz": true, "qux": true, "quux": true,
	"spam": true, "eggs": true, "ham": true, "xyz": true, "abc": true, "blah": true, "args": true, "arg": true}

// isEnglishWord reports whether a lower-case word is an everyday English word or
// generic documentation vocabulary, in its base form or a regular inflection
// ("values", "named", "calling", "entries", "widely").
func isEnglishWord(w string) bool {
	if inEnglish(w) {
		return true
	}
	n := len(w)
	try := func(base string) bool { return len(base) >= 3 && inEnglish(base) } // not "be" in "bing"
	switch {
	case strings.HasSuffix(w, "ies") && n > 4 && try(w[:n-3]+"y"),
		strings.HasSuffix(w, "es") && try(w[:n-2]),
		strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && try(w[:n-1]),
		strings.HasSuffix(w, "ied") && n > 4 && try(w[:n-3]+"y"),
		strings.HasSuffix(w, "ed") && (try(w[:n-2]) || try(w[:n-1]) || doubled(w[:n-2]) && try(w[:n-3])),
		strings.HasSuffix(w, "ing") && (try(w[:n-3]) || try(w[:n-3]+"e") || doubled(w[:n-3]) && try(w[:n-4])),
		strings.HasSuffix(w, "ly") && (try(w[:n-2]) || strings.HasSuffix(w, "ily") && try(w[:n-3]+"y")),
		strings.HasSuffix(w, "er") && (try(w[:n-2]) || try(w[:n-1])),
		strings.HasSuffix(w, "ers") && (try(w[:n-3]) || try(w[:n-2])):
		return true
	}
	return false
}

func inEnglish(w string) bool {
	if _, ok := englishWords[w]; ok {
		return true
	}
	return isCommonWord(w) || functionWords[w]
}

func doubled(s string) bool {
	n := len(s)
	return n >= 2 && s[n-1] == s[n-2]
}

// isPlainWord reports whether s is a single word of letters only, in lower,
// title or upper case ("default", "Changed", "DEFAULT"): nothing in its shape says it is an
// identifier (no underscore, dot, digit, call parentheses or inner capital).
func isPlainWord(s string) bool {
	if s == "" {
		return false
	}
	upper := strings.ToUpper(s) == s
	for i, r := range s {
		if !unicode.IsLetter(r) || i > 0 && unicode.IsUpper(r) && !upper {
			return false
		}
	}
	return true
}

// isProseWord reports whether s is a plain word that English prose uses: a code
// span or a learned term made of it alone says nothing about a named thing.
func isProseWord(s string) bool {
	if !isPlainWord(s) {
		return false
	}
	w := strings.ToLower(s)
	return len(w) <= 2 || isEnglishWord(w) || placeholderNames[w]
}

// identifierShaped reports whether a name looks like a code identifier or a
// proper technical name by its shape alone: an underscore, dot, digit, call
// parentheses, or a capital after the first letter (CamelCase, acronyms).
func identifierShaped(s string) bool {
	var prev rune
	for _, r := range s {
		switch {
		case r == '_' || r == '.' || r == '(' || unicode.IsDigit(r):
			return true
		case unicode.IsUpper(r) && unicode.IsLetter(prev):
			return true // within a word: PgBouncer, macOS, GiST, HTTP
		}
		prev = r
	}
	return false
}

// proseKey reports whether a name, once normalised to its key, is an everyday
// word or too short to be a name: "/a", "--file" and "-b" match as "a",
// "file" and "b" and would turn ordinary prose into mentions.
func proseKey(name string) bool {
	k := Key(name)
	return len(k) <= 2 || isProseWord(k)
}

// isPlaceholderFlag reports whether a command-line flag is an example
// placeholder (--foo, -bar).
func isPlaceholderFlag(s string) bool {
	return placeholderNames[strings.ToLower(strings.TrimLeft(s, "-/"))]
}
