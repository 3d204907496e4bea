package chunk

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/pkoukk/tiktoken-go"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
)

// ErrInvalidText is returned for text that is not valid UTF-8 (offsets
// would not survive the round trip through the tokenizer).
var ErrInvalidText = errors.New("text is not valid UTF-8")

// Options sizes the chunks.
type Options struct {
	// MaxTokens is the largest chunk, in tokens (≥ 8).
	MaxTokens int
	// Overlap is how many tokens from the end of a chunk the next chunk of the
	// same section repeats (0 ≤ Overlap ≤ MaxTokens/2).
	Overlap int
	// MinTokens: a section smaller than this is merged with the following
	// sections while the result fits in MaxTokens (0 disables merging).
	MinTokens int
	// Encoding is the tiktoken encoding name; "" means cl100k_base.
	Encoding string
}

// DefaultOptions returns 256-token chunks with a 32-token overlap, merging
// sections under 48 tokens, counted with cl100k_base.
func DefaultOptions() Options {
	return Options{MaxTokens: 256, Overlap: 32, MinTokens: 48, Encoding: "cl100k_base"}
}

// Validate reports the first option that is out of range.
func (o Options) Validate() error {
	switch {
	case o.MaxTokens < 8:
		return fmt.Errorf("chunk options: MaxTokens = %d, want at least 8", o.MaxTokens)
	case o.Overlap < 0 || o.Overlap > o.MaxTokens/2:
		return fmt.Errorf("chunk options: Overlap = %d, want 0..%d (half of MaxTokens)", o.Overlap, o.MaxTokens/2)
	case o.MinTokens < 0 || o.MinTokens > o.MaxTokens:
		return fmt.Errorf("chunk options: MinTokens = %d, want 0..%d (MaxTokens)", o.MinTokens, o.MaxTokens)
	}
	return nil
}

// Section is a range of the text under one heading path (the extractor's
// sections). Sections must be in order and must not overlap; text outside
// every section is not chunked.
type Section struct {
	HeadingPath []string
	Start, End  int
}

// Chunk is one piece of the text.
type Chunk struct {
	// Index numbers the chunks of one text from 0.
	Index int
	// Text is exactly text[Start:End] of the text that was split.
	Text       string
	Start, End int
	// HeadingPath holds the headings the chunk sits under, outermost first.
	HeadingPath []string
	// Tokens is the number of tokens of the chunk.
	Tokens int
}

// WithHeadings returns the chunk text preceded by its heading path
// ("A > B\n\n" + text), a better input for embedding models than the bare
// text of a chunk in the middle of a section.
func (c Chunk) WithHeadings() string {
	if len(c.HeadingPath) == 0 {
		return c.Text
	}
	return strings.Join(c.HeadingPath, " > ") + "\n\n" + c.Text
}

// Splitter splits texts into chunks. It is safe for concurrent use.
type Splitter struct {
	opts Options
	tok  *tokenizer
}

// New returns a Splitter for opts (see DefaultOptions).
func New(opts Options) (*Splitter, error) {
	if opts.Encoding == "" {
		opts.Encoding = "cl100k_base"
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	tok, err := loadTokenizer(opts.Encoding)
	if err != nil {
		return nil, err
	}
	return &Splitter{opts: opts, tok: tok}, nil
}

// Options returns the options the splitter uses.
func (s *Splitter) Options() Options { return s.opts }

// CountTokens returns the number of tokens in text.
func (s *Splitter) CountTokens(text string) int {
	return len(s.tok.enc.EncodeOrdinary(text))
}

// Split cuts text into chunks. sections come from the extractor; nil means
// the whole text is one section without headings.
func (s *Splitter) Split(text string, sections []Section) ([]Chunk, error) {
	if !utf8.ValidString(text) {
		return nil, ErrInvalidText
	}
	if sections == nil {
		sections = []Section{{Start: 0, End: len(text)}}
	}
	prev := 0
	for i, sec := range sections {
		if sec.Start < prev || sec.End < sec.Start || sec.End > len(text) {
			return nil, fmt.Errorf("split: section %d [%d,%d) is out of order or outside the text (%d bytes)", i, sec.Start, sec.End, len(text))
		}
		prev = sec.End
	}
	r := &run{s: s, text: text, starts: s.tok.starts(text)}
	for _, g := range r.groups(sections) {
		r.splitSection(g)
	}
	return r.chunks, nil
}

// run holds the state of one Split call.
type run struct {
	s      *Splitter
	text   string
	starts []int // byte offset of every token start, ascending
	chunks []Chunk
}

// tokens counts the tokens that overlap [a, b): those starting inside it
// plus one that starts before a and runs into it.
func (r *run) tokens(a, b int) int {
	if b <= a {
		return 0
	}
	first := sort.SearchInts(r.starts, a+1) - 1
	if first < 0 {
		first = 0
	}
	return sort.SearchInts(r.starts, b) - first
}

// groups merges sections smaller than MinTokens with their successors.
func (r *run) groups(sections []Section) []Section {
	out := make([]Section, 0, len(sections))
	minTok, maxTok := r.s.opts.MinTokens, r.s.opts.MaxTokens
	for _, sec := range sections {
		if n := len(out); n > 0 {
			last := &out[n-1]
			if last.End == sec.Start && r.tokens(last.Start, last.End) < minTok && r.tokens(last.Start, sec.End) <= maxTok {
				last.End = sec.End
				last.HeadingPath = mergePaths(last.HeadingPath, sec.HeadingPath)
				continue
			}
		}
		out = append(out, Section{HeadingPath: sec.HeadingPath, Start: sec.Start, End: sec.End})
	}
	return out
}

// mergePaths returns the heading path of two merged sections: the second
// path when the first is its prefix (a parent heading followed by its first
// child), else their common prefix.
func mergePaths(a, b []string) []string {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	if n == len(a) {
		return b
	}
	return slices.Clip(a[:n])
}

type span struct{ a, b int }

func (r *run) splitSection(sec Section) {
	a, b := r.trim(sec.Start, sec.End)
	if a >= b {
		return
	}
	pieces := r.split(a, b, levelParagraph)
	maxTok, overlap := r.s.opts.MaxTokens, r.s.opts.Overlap
	curStart, curEnd := -1, -1
	for i := 0; i < len(pieces); {
		p := pieces[i]
		if curStart < 0 {
			curStart, curEnd = p.a, p.b
			i++
			continue
		}
		if r.tokens(curStart, p.b) <= maxTok {
			curEnd = p.b
			i++
			continue
		}
		r.emit(curStart, curEnd, sec.HeadingPath)
		ov := r.overlapStart(curStart, curEnd, overlap)
		if ov < curEnd && r.tokens(ov, p.b) <= maxTok {
			curStart = ov
		} else {
			curStart = -1
		}
	}
	if curStart >= 0 {
		r.emit(curStart, curEnd, sec.HeadingPath)
	}
}

func (r *run) emit(a, b int, path []string) {
	a, b = r.trim(a, b)
	if a >= b {
		return
	}
	r.chunks = append(r.chunks, Chunk{
		Index:       len(r.chunks),
		Text:        r.text[a:b],
		Start:       a,
		End:         b,
		HeadingPath: path,
		Tokens:      r.tokens(a, b),
	})
}

// trim moves a and b inwards past white space.
func (r *run) trim(a, b int) (int, int) {
	for a < b {
		c, size := utf8.DecodeRuneInString(r.text[a:b])
		if !unicode.IsSpace(c) {
			break
		}
		a += size
	}
	for b > a {
		c, size := utf8.DecodeLastRuneInString(r.text[a:b])
		if !unicode.IsSpace(c) {
			break
		}
		b -= size
	}
	return a, b
}

// overlapStart returns where the chunk after [a, b) starts so that it repeats
// at most n tokens of it, at the start of a word; b when there is no room.
func (r *run) overlapStart(a, b, n int) int {
	if n == 0 {
		return b
	}
	first := sort.SearchInts(r.starts, a)
	end := sort.SearchInts(r.starts, b)
	j := end - n
	if j <= first {
		j = first + 1
	}
	if j >= end {
		return b
	}
	pos := r.starts[j]
	// Move forward to the start of a word.
	for pos < b {
		prev, _ := utf8.DecodeLastRuneInString(r.text[:pos])
		cur, size := utf8.DecodeRuneInString(r.text[pos:])
		if unicode.IsSpace(prev) && !unicode.IsSpace(cur) {
			break
		}
		pos += size
	}
	if pos <= a {
		return b
	}
	return pos
}

const (
	levelParagraph = iota
	levelLine
	levelSentence
	levelWord
	levelToken
)

// split cuts [a, b) into contiguous pieces of at most MaxTokens tokens,
// preferring the coarsest boundaries.
func (r *run) split(a, b, level int) []span {
	if r.tokens(a, b) <= r.s.opts.MaxTokens {
		return []span{{a, b}}
	}
	if level == levelToken {
		return r.hardCut(a, b)
	}
	cuts := r.boundaries(a, b, level)
	if len(cuts) == 0 {
		return r.split(a, b, level+1)
	}
	var out []span
	prev := a
	for _, c := range append(cuts, b) {
		if c > prev {
			out = append(out, r.split(prev, c, level+1)...)
		}
		prev = c
	}
	return out
}

// boundaries returns cut positions strictly inside (a, b) for a level. A cut
// lies just after the separator, so the separator stays with the text before
// it.
func (r *run) boundaries(a, b, level int) []int {
	t := r.text[a:b]
	var cuts []int
	add := func(i int) {
		if i > 0 && i < len(t) {
			cuts = append(cuts, a+i)
		}
	}
	switch level {
	case levelParagraph:
		for i := 0; ; {
			k := strings.Index(t[i:], "\n\n")
			if k < 0 {
				break
			}
			j := i + k
			for j < len(t) && (t[j] == '\n' || t[j] == ' ' || t[j] == '\t' || t[j] == '\r') {
				j++
			}
			add(j)
			i = j
		}
	case levelLine:
		for i := 0; i < len(t); i++ {
			if t[i] == '\n' {
				add(i + 1)
			}
		}
	case levelSentence:
		for i := 0; i < len(t); {
			c, size := utf8.DecodeRuneInString(t[i:])
			i += size
			if !isSentenceEnd(c) {
				continue
			}
			// Skip closing quotes and brackets, then require white space
			// (CJK full stops need none).
			for i < len(t) && strings.IndexByte("\"')]", t[i]) >= 0 {
				i++
			}
			j := i
			for j < len(t) {
				s, sz := utf8.DecodeRuneInString(t[j:])
				if !unicode.IsSpace(s) {
					break
				}
				j += sz
			}
			if j > i || c == '。' || c == '！' || c == '？' {
				add(j)
			}
			i = j
		}
	case levelWord:
		inSpace := false
		for i, c := range t {
			sp := unicode.IsSpace(c)
			if inSpace && !sp {
				add(i)
			}
			inSpace = sp
		}
	}
	return cuts
}

func isSentenceEnd(c rune) bool {
	switch c {
	case '.', '!', '?', ';', '…', '。', '！', '？':
		return true
	}
	return false
}

// hardCut cuts [a, b) every MaxTokens tokens, moving each cut back to a
// character boundary.
func (r *run) hardCut(a, b int) []span {
	var out []span
	limit := r.s.opts.MaxTokens
	for a < b {
		// i is the token containing a (a may fall inside a token).
		i := max(sort.SearchInts(r.starts, a+1)-1, 0)
		if i+limit >= len(r.starts) || r.starts[i+limit] >= b {
			out = append(out, span{a, b})
			break
		}
		c := r.starts[i+limit]
		for c > a && !utf8.RuneStart(r.text[c]) {
			c--
		}
		if c == a { // one character longer than MaxTokens tokens
			_, size := utf8.DecodeRuneInString(r.text[a:])
			c = a + size
		}
		out = append(out, span{a, c})
		a = c
	}
	return out
}

// tokenizer wraps a tiktoken encoding with the byte length of every token.
type tokenizer struct {
	enc    *tiktoken.Tiktoken
	tokLen []int32
}

var (
	tokMu    sync.Mutex
	tokCache = map[string]*tokenizer{}
)

func loadTokenizer(name string) (*tokenizer, error) {
	tokMu.Lock()
	defer tokMu.Unlock()
	if t, ok := tokCache[name]; ok {
		return t, nil
	}
	tiktoken.SetBpeLoader(tiktokenloader.NewOfflineLoader())
	enc, err := tiktoken.GetEncoding(name)
	if err != nil {
		return nil, fmt.Errorf("load tiktoken encoding %q: %w", name, err)
	}
	t := &tokenizer{enc: enc, tokLen: make([]int32, 1<<18)}
	for id := range t.tokLen {
		t.tokLen[id] = int32(len(enc.Decode([]int{id})))
	}
	tokCache[name] = t
	return t, nil
}

func (t *tokenizer) length(tok int) int {
	if tok >= 0 && tok < len(t.tokLen) {
		if n := t.tokLen[tok]; n > 0 {
			return int(n)
		}
	}
	return len(t.enc.Decode([]int{tok}))
}

// starts returns the byte offset at which every token of text starts.
func (t *tokenizer) starts(text string) []int {
	toks := t.enc.EncodeOrdinary(text)
	starts := make([]int, len(toks))
	pos := 0
	for i, tok := range toks {
		starts[i] = min(pos, len(text))
		pos += t.length(tok)
	}
	return starts
}
