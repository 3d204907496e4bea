package embed

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// maxWordChars is the longest word, in characters, that WordPiece splits; longer
// words become [UNK] (max_input_chars_per_word in BERT's tokenizer).
const maxWordChars = 100

// wordPiece is the uncased BERT tokenizer: BERT normalisation (clean control
// characters, space out CJK ideographs, strip accents, lowercase), split on
// whitespace and punctuation, then greedy longest-match-first WordPiece.
// It matches Hugging Face's BertNormalizer + BertPreTokenizer + WordPiece for the
// all-MiniLM-L6-v2 vocabulary (see testdata/wordpiece_ids.json). Safe for
// concurrent use: it is read-only after construction.
type wordPiece struct {
	start map[string]int32 // pieces that begin a word
	cont  map[string]int32 // "##" pieces, stored without the prefix
	lower bool

	cls, sep, unk, pad int32
}

// loadVocab reads a BERT vocab.txt (one token per line, id = line number).
func loadVocab(path string, lower bool) (*wordPiece, error) {
	f, err := os.Open(path) //nolint:gosec // G304: the model directory comes from the operator's configuration
	if err != nil {
		return nil, fmt.Errorf("open vocabulary: %w", err)
	}
	defer f.Close()
	wp, err := readVocab(f, lower)
	if err != nil {
		return nil, fmt.Errorf("read vocabulary %s: %w", path, err)
	}
	return wp, nil
}

func readVocab(r io.Reader, lower bool) (*wordPiece, error) {
	wp := &wordPiece{start: map[string]int32{}, cont: map[string]int32{}, lower: lower}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	var id int32
	for sc.Scan() {
		tok := strings.TrimRight(sc.Text(), "\r")
		if rest, ok := strings.CutPrefix(tok, "##"); ok && rest != "" {
			if _, dup := wp.cont[rest]; !dup {
				wp.cont[rest] = id
			}
		} else if _, dup := wp.start[tok]; !dup {
			wp.start[tok] = id
		}
		id++
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for _, s := range []struct {
		name string
		dst  *int32
	}{{"[CLS]", &wp.cls}, {"[SEP]", &wp.sep}, {"[UNK]", &wp.unk}, {"[PAD]", &wp.pad}} {
		v, ok := wp.start[s.name]
		if !ok {
			return nil, fmt.Errorf("special token %s missing from the vocabulary (%d tokens)", s.name, id)
		}
		*s.dst = v
	}
	return wp, nil
}

// encode returns [CLS] pieces... [SEP], keeping at most maxTokens ids in all
// (the pieces are cut, the special tokens stay). maxTokens must be >= 2.
func (wp *wordPiece) encode(text string, maxTokens int) []int32 {
	ids := make([]int32, 0, min(maxTokens, len(text)/3+3))
	ids = append(ids, wp.cls)
	limit := maxTokens - 1 // room for [SEP]
	for _, word := range wp.words(text) {
		if len(ids) >= limit {
			break
		}
		ids = wp.appendWord(ids, word)
	}
	if len(ids) > limit {
		ids = ids[:limit]
	}
	return append(ids, wp.sep)
}

// appendWord appends the WordPiece ids of one pre-tokenised word.
func (wp *wordPiece) appendWord(ids []int32, word string) []int32 {
	if utf8.RuneCountInString(word) > maxWordChars {
		return append(ids, wp.unk)
	}
	n := len(ids)
	for start := 0; start < len(word); {
		dict := wp.start
		if start > 0 {
			dict = wp.cont
		}
		end := len(word)
		found := false
		for end > start {
			if id, ok := dict[word[start:end]]; ok {
				ids = append(ids, id)
				found = true
				break
			}
			_, size := utf8.DecodeLastRuneInString(word[start:end])
			end -= size
		}
		if !found {
			return append(ids[:n], wp.unk)
		}
		start = end
	}
	return ids
}

// words normalises text and splits it into words and single punctuation marks.
func (wp *wordPiece) words(text string) []string {
	text = wp.normalize(text)
	var out []string
	begin := -1
	for i, r := range text {
		switch {
		case unicode.IsSpace(r):
			if begin >= 0 {
				out = append(out, text[begin:i])
				begin = -1
			}
		case isBertPunct(r):
			if begin >= 0 {
				out = append(out, text[begin:i])
				begin = -1
			}
			out = append(out, text[i:i+utf8.RuneLen(r)])
		default:
			if begin < 0 {
				begin = i
			}
		}
	}
	if begin >= 0 {
		out = append(out, text[begin:])
	}
	return out
}

// normalize applies BERT's normaliser: drop NUL, U+FFFD and control/format
// characters, turn whitespace into spaces, surround CJK ideographs with spaces,
// and for the uncased model strip accents (NFD, drop Mn) and lowercase.
func (wp *wordPiece) normalize(text string) string {
	var b strings.Builder
	b.Grow(len(text) + 8)
	for _, r := range text {
		switch {
		case r == 0 || r == utf8.RuneError || isBertControl(r):
		case unicode.IsSpace(r):
			b.WriteByte(' ')
		case isCJK(r):
			b.WriteByte(' ')
			b.WriteRune(r)
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	s := b.String()
	if !wp.lower {
		return s
	}
	s = norm.NFD.String(s)
	b.Reset()
	for _, r := range s {
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// isBertControl reports the characters BERT's cleaner removes: Unicode "Other"
// (Cc, Cf, Co, Cs and unassigned), except tab, newline and carriage return.
func isBertControl(r rune) bool {
	if r == '\t' || r == '\n' || r == '\r' {
		return false
	}
	if unicode.In(r, unicode.C) {
		return true
	}
	return !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z)
}

// isBertPunct: ASCII punctuation (including symbols such as $ + < = > ^ ` | ~)
// or any Unicode punctuation category.
func isBertPunct(r rune) bool {
	if r < 128 {
		return (r >= 33 && r <= 47) || (r >= 58 && r <= 64) || (r >= 91 && r <= 96) || (r >= 123 && r <= 126)
	}
	return unicode.IsPunct(r)
}

// isCJK reports CJK Unified Ideographs and their extensions / compatibility blocks,
// the ranges BERT tokenises one character at a time.
func isCJK(r rune) bool {
	return (r >= 0x4E00 && r <= 0x9FFF) ||
		(r >= 0x3400 && r <= 0x4DBF) ||
		(r >= 0x20000 && r <= 0x2A6DF) ||
		(r >= 0x2A700 && r <= 0x2B73F) ||
		(r >= 0x2B740 && r <= 0x2B81F) ||
		(r >= 0x2B820 && r <= 0x2CEAF) ||
		(r >= 0xF900 && r <= 0xFAFF) ||
		(r >= 0x2F800 && r <= 0x2FA1F)
}
