// Package tokens counts cl100k_base tokens (the GPT-4 tokenizer) for the tokens field
// of search responses, with the BPE ranks of tiktoken's offline loader (no network).
//
// tiktoken-go splits text with the cl100k regular expression through regexp2, a
// backtracking engine, which took about 2 µs per token and a quarter of a search's CPU.
// Count does the same split with a hand-written scanner (split below), then the same
// byte-pair merges, and caches the count of each piece; TestMatchesTiktoken and
// FuzzCount check that it gives exactly tiktoken-go's counts.
package tokens

import (
	"fmt"
	"math"
	"sync"
	"unicode"
	"unicode/utf8"

	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
)

// cl100kFile is the name the offline loader knows the cl100k_base ranks by.
const cl100kFile = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"

// Counter counts tokens. It is safe for concurrent use.
type Counter struct {
	ranks map[string]int

	mu    sync.RWMutex
	cache map[string]int
}

// maxCache bounds the piece cache (pieces are words, numbers and punctuation runs).
const maxCache = 200_000

var (
	once   sync.Once
	shared *Counter
	errLd  error
)

// New returns the shared cl100k_base counter, loading the ranks on first use.
func New() (*Counter, error) {
	once.Do(func() {
		ranks, err := tiktokenloader.NewOfflineLoader().LoadTiktokenBpe(cl100kFile)
		if err != nil {
			errLd = fmt.Errorf("load cl100k_base ranks: %w", err)
			return
		}
		shared = &Counter{ranks: ranks, cache: make(map[string]int, 4096)}
	})
	return shared, errLd
}

// Count returns the number of cl100k_base tokens of b (ordinary text, no special tokens).
func (c *Counter) Count(b []byte) int {
	s := string(b)
	if !utf8.ValidString(s) {
		s = string([]rune(s)) // as tiktoken-go does: each invalid byte becomes U+FFFD
	}
	n := 0
	split(s, func(piece string) {
		n += c.pieceTokens(piece)
	})
	return n
}

func (c *Counter) pieceTokens(p string) int {
	if _, ok := c.ranks[p]; ok {
		return 1
	}
	c.mu.RLock()
	n, ok := c.cache[p]
	c.mu.RUnlock()
	if ok {
		return n
	}
	n = bpeCount([]byte(p), c.ranks)
	c.mu.Lock()
	if len(c.cache) < maxCache {
		c.cache[p] = n
	}
	c.mu.Unlock()
	return n
}

// bpeCount merges the byte pairs of piece by rank, lowest first, as tiktoken does, and
// returns the number of parts left.
func bpeCount(piece []byte, ranks map[string]int) int {
	if len(piece) <= 1 {
		return len(piece)
	}
	type part struct{ start, rank int }
	parts := make([]part, len(piece)+1)
	for i := range parts {
		parts[i] = part{i, math.MaxInt}
	}
	rank := func(i, skip int) int {
		if i+skip+2 < len(parts) {
			if r, ok := ranks[string(piece[parts[i].start:parts[i+skip+2].start])]; ok {
				return r
			}
		}
		return math.MaxInt
	}
	for i := 0; i < len(parts)-2; i++ {
		parts[i].rank = rank(i, 0)
	}
	for len(parts) > 1 {
		minRank, at := math.MaxInt, -1
		for i := 0; i < len(parts)-1; i++ {
			if parts[i].rank < minRank {
				minRank, at = parts[i].rank, i
			}
		}
		if at < 0 {
			break
		}
		parts[at].rank = rank(at, 1)
		if at > 0 {
			parts[at-1].rank = rank(at-1, 1)
		}
		parts = append(parts[:at+1], parts[at+2:]...)
	}
	return len(parts) - 1
}

// split calls emit with each piece of s as the cl100k_base pattern
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// cuts it: at each position the first alternative that matches, with regexp2's
// backtracking semantics. s must be valid UTF-8.
func split(s string, emit func(string)) {
	i := 0
	for i < len(s) {
		n := matchAt(s, i)
		if n <= 0 { // cannot happen: \s+ or a punctuation run always matches; be safe
			_, n = utf8.DecodeRuneInString(s[i:])
		}
		emit(s[i : i+n])
		i += n
	}
}

func at(s string, i int) (rune, int) {
	if i >= len(s) {
		return -1, 0
	}
	r := rune(s[i])
	if r < utf8.RuneSelf {
		return r, 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

func isLetter(r rune) bool {
	return r >= 0 && (r < utf8.RuneSelf && ('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') || r >= utf8.RuneSelf && unicode.IsLetter(r))
}
func isNumber(r rune) bool {
	return r >= 0 && (r < utf8.RuneSelf && '0' <= r && r <= '9' || r >= utf8.RuneSelf && unicode.IsNumber(r))
}
func isNL(r rune) bool { return r == '\r' || r == '\n' }

// isSpace is .NET's \s: [\f\n\r\t\v\x85\p{Z}].
func isSpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\v', '\f', '\r', 0x85:
		return true
	}
	return r >= utf8.RuneSelf && unicode.In(r, unicode.Z)
}

// matchAt returns the length of the piece starting at i.
func matchAt(s string, i int) int {
	r, w := at(s, i)
	// 1. contractions
	if r == '\'' {
		r1, w1 := at(s, i+w)
		switch unicode.ToLower(r1) {
		case 's', 't', 'm', 'd':
			return w + w1
		case 'r', 'v', 'l':
			r2, w2 := at(s, i+w+w1)
			want := map[rune]rune{'r': 'e', 'v': 'e', 'l': 'l'}[unicode.ToLower(r1)]
			if unicode.ToLower(r2) == want {
				return w + w1 + w2
			}
		}
	}
	// 2. [^\r\n\p{L}\p{N}]?\p{L}+
	if !isNL(r) && !isLetter(r) && !isNumber(r) {
		if r1, _ := at(s, i+w); isLetter(r1) {
			return w + letters(s, i+w)
		}
	} else if isLetter(r) {
		return letters(s, i)
	}
	// 3. \p{N}{1,3}
	if isNumber(r) {
		n := 0
		for k := 0; k < 3; k++ {
			rk, wk := at(s, i+n)
			if !isNumber(rk) {
				break
			}
			n += wk
		}
		return n
	}
	// 4.  ?[^\s\p{L}\p{N}]+[\r\n]*
	start := i
	if r == ' ' {
		start = i + 1
	}
	if n := punct(s, start); n > 0 {
		end := start + n
		for {
			rk, wk := at(s, end)
			if !isNL(rk) {
				break
			}
			end += wk
		}
		return end - i
	}
	// (Without the optional space the run would start at a space, which is \s: no match.)
	// 5. \s*[\r\n]+  6. \s+(?!\S)  7. \s+
	if isSpace(r) {
		end, lastNL := i, -1
		for {
			rk, wk := at(s, end)
			if !isSpace(rk) {
				break
			}
			if isNL(rk) {
				lastNL = end + wk
			}
			end += wk
		}
		if lastNL > 0 {
			return lastNL - i
		}
		if end == len(s) {
			return end - i
		}
		// followed by \S: give back the last whitespace character if one remains
		_, lw := utf8.DecodeLastRuneInString(s[i:end])
		if end-lw > i {
			return end - lw - i
		}
		return end - i
	}
	return 0
}

func letters(s string, i int) int {
	n := 0
	for {
		r, w := at(s, i+n)
		if !isLetter(r) {
			return n
		}
		n += w
	}
}

// punct is the length of the run of [^\s\p{L}\p{N}] at i.
func punct(s string, i int) int {
	n := 0
	for {
		r, w := at(s, i+n)
		if r < 0 || isSpace(r) || isLetter(r) || isNumber(r) {
			return n
		}
		n += w
	}
}
