package chunk

import (
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func newSplitter(t testing.TB, mutate func(*Options)) *Splitter {
	t.Helper()
	o := DefaultOptions()
	if mutate != nil {
		mutate(&o)
	}
	s, err := New(o)
	if err != nil {
		t.Fatalf("New(%+v): %v", o, err)
	}
	return s
}

// words returns n distinct-looking words of prose.
func words(r *rand.Rand, n int) string {
	vocab := strings.Fields("the crawler fetches pages and splits their text into chunks that keep offsets headings tokens overlap embeddings vector search graph entity relation document section paragraph sentence word python function returns value argument iterable")
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			if i%12 == 0 {
				b.WriteString(". ")
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteString(vocab[r.Intn(len(vocab))])
	}
	b.WriteByte('.')
	return b.String()
}

// checkChunks verifies the invariants every Split result must satisfy.
func checkChunks(t testing.TB, s *Splitter, text string, sections []Section, chunks []Chunk) {
	t.Helper()
	if sections == nil {
		sections = []Section{{Start: 0, End: len(text)}}
	}
	covered := make([]bool, len(text))
	prevStart := -1
	for i, c := range chunks {
		if c.Index != i {
			t.Fatalf("chunk %d has Index %d", i, c.Index)
		}
		if c.Start < 0 || c.End > len(text) || c.Start >= c.End {
			t.Fatalf("chunk %d offsets [%d,%d) invalid for %d bytes", i, c.Start, c.End, len(text))
		}
		if text[c.Start:c.End] != c.Text {
			t.Fatalf("chunk %d: text[%d:%d] = %q, want chunk text %q", i, c.Start, c.End, text[c.Start:c.End], c.Text)
		}
		if c.Start <= prevStart {
			t.Fatalf("chunk %d starts at %d, not after the previous start %d", i, c.Start, prevStart)
		}
		prevStart = c.Start
		if c.Tokens > s.opts.MaxTokens || c.Tokens <= 0 {
			t.Fatalf("chunk %d has %d tokens, want 1..%d", i, c.Tokens, s.opts.MaxTokens)
		}
		if !utf8.ValidString(c.Text) {
			t.Fatalf("chunk %d is not valid UTF-8", i)
		}
		if strings.TrimSpace(c.Text) != c.Text {
			t.Fatalf("chunk %d has surrounding white space: %q", i, c.Text)
		}
		for k := c.Start; k < c.End; k++ {
			covered[k] = true
		}
	}
	// No text is lost: every non-space character of every section is in a chunk.
	for _, sec := range sections {
		for k, r := range text[sec.Start:sec.End] {
			if !unicode.IsSpace(r) && !covered[sec.Start+k] {
				t.Fatalf("byte %d (%q) of section [%d,%d) is in no chunk", sec.Start+k, r, sec.Start, sec.End)
			}
		}
	}
}

func TestSplitSmallTextIsOneChunk(t *testing.T) {
	s := newSplitter(t, nil)
	text := "  Hello, world.\n\nA second paragraph.  \n"
	chunks, err := s.Split(text, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkChunks(t, s, text, nil, chunks)
	want := []Chunk{{Index: 0, Text: "Hello, world.\n\nA second paragraph.", Start: 2, End: 36, Tokens: s.CountTokens("Hello, world.\n\nA second paragraph.")}}
	if d := cmp.Diff(want, chunks); d != "" {
		t.Errorf("chunks (-want +got):\n%s", d)
	}
}

func TestSplitPrefersParagraphs(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	s := newSplitter(t, func(o *Options) { o.MaxTokens, o.Overlap = 100, 0 })
	var paras []string
	for i := 0; i < 6; i++ {
		paras = append(paras, words(r, 35)) // ~40 tokens each
	}
	text := strings.Join(paras, "\n\n")
	chunks, err := s.Split(text, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkChunks(t, s, text, nil, chunks)
	if len(chunks) < 2 {
		t.Fatalf("got %d chunks, want several", len(chunks))
	}
	// Every chunk must start at a paragraph start and end at a paragraph end.
	starts, ends := map[int]bool{}, map[int]bool{}
	pos := 0
	for _, p := range paras {
		starts[pos], ends[pos+len(p)] = true, true
		pos += len(p) + 2
	}
	for _, c := range chunks {
		if !starts[c.Start] || !ends[c.End] {
			t.Errorf("chunk [%d,%d) does not follow paragraph boundaries", c.Start, c.End)
		}
	}
}

func TestSplitSentencesThenWords(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	s := newSplitter(t, func(o *Options) { o.MaxTokens, o.Overlap, o.MinTokens = 40, 0, 0 })
	text := words(r, 400) // one paragraph, sentences of 12 words
	chunks, err := s.Split(text, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkChunks(t, s, text, nil, chunks)
	for _, c := range chunks[:len(chunks)-1] {
		if !strings.HasSuffix(c.Text, ".") {
			t.Errorf("chunk %d ends mid-sentence: %q", c.Index, c.Text[max(0, len(c.Text)-30):])
		}
	}

	// A "sentence" longer than a chunk is cut between words.
	long := strings.Repeat("word ", 300)
	chunks, err = s.Split(long, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkChunks(t, s, long, nil, chunks)
	for _, c := range chunks {
		if strings.HasPrefix(c.Text, "ord") || strings.HasSuffix(c.Text, "wor") {
			t.Errorf("chunk %d cuts inside a word: %q", c.Index, c.Text)
		}
	}
}

func TestSplitHardCutKeepsCharacters(t *testing.T) {
	s := newSplitter(t, func(o *Options) { o.MaxTokens, o.Overlap, o.MinTokens = 16, 4, 0 })
	for _, text := range []string{
		strings.Repeat("é", 500),
		strings.Repeat("漢字", 300),
		strings.Repeat("a1b2", 400),
		strings.Repeat("🙂", 100),
	} {
		chunks, err := s.Split(text, nil)
		if err != nil {
			t.Fatal(err)
		}
		checkChunks(t, s, text, nil, chunks)
		if len(chunks) < 2 {
			t.Errorf("%q...: got %d chunks, want several", text[:8], len(chunks))
		}
	}
}

func TestSplitOverlap(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	text := words(r, 1500)
	for _, overlap := range []int{0, 8, 32, 64} {
		t.Run(fmt.Sprint(overlap), func(t *testing.T) {
			s := newSplitter(t, func(o *Options) { o.MaxTokens, o.Overlap = 128, overlap })
			chunks, err := s.Split(text, nil)
			if err != nil {
				t.Fatal(err)
			}
			checkChunks(t, s, text, nil, chunks)
			if len(chunks) < 5 {
				t.Fatalf("got %d chunks, want at least 5", len(chunks))
			}
			run := &run{s: s, text: text, starts: s.tok.starts(text)}
			for i := 1; i < len(chunks); i++ {
				prev, cur := chunks[i-1], chunks[i]
				if overlap == 0 {
					if cur.Start < prev.End {
						t.Fatalf("chunks %d and %d overlap with Overlap=0", i-1, i)
					}
					continue
				}
				if cur.Start >= prev.End {
					t.Fatalf("chunk %d starts at %d, after the end %d of chunk %d: no overlap", i, cur.Start, prev.End, i-1)
				}
				if n := run.tokens(cur.Start, prev.End); n > overlap {
					t.Errorf("chunks %d and %d share %d tokens, want at most %d", i-1, i, n, overlap)
				}
				if n := run.tokens(cur.Start, prev.End); n < overlap/2 {
					t.Errorf("chunks %d and %d share only %d tokens, want about %d", i-1, i, n, overlap)
				}
				if c := text[cur.Start-1]; c != ' ' && c != '\n' {
					t.Errorf("chunk %d starts inside a word: %q", i, text[cur.Start-5:cur.Start+5])
				}
			}
		})
	}
}

func TestSplitSectionsAndHeadingPaths(t *testing.T) {
	r := rand.New(rand.NewSource(4))
	var b strings.Builder
	var sections []Section
	add := func(path []string, body string) {
		start := b.Len()
		b.WriteString(path[len(path)-1])
		b.WriteString("\n\n")
		b.WriteString(body)
		b.WriteString("\n\n")
		sections = append(sections, Section{HeadingPath: path, Start: start, End: b.Len()})
	}
	add([]string{"Guide"}, "")                                    // heading only: merged forward
	add([]string{"Guide", "Install"}, words(r, 150))              // one chunk
	add([]string{"Guide", "Configure"}, words(r, 600))            // several chunks
	add([]string{"Guide", "Configure", "Env vars"}, words(r, 20)) // small: merged with the next sibling
	add([]string{"Guide", "Configure", "Flags"}, words(r, 60))    //
	add([]string{"Reference"}, words(r, 100))                     // new top-level heading
	text := b.String()
	s := newSplitter(t, nil)
	chunks, err := s.Split(text, sections)
	if err != nil {
		t.Fatal(err)
	}
	checkChunks(t, s, text, sections, chunks)

	pathOf := func(substr string) []string {
		i := strings.Index(text, substr)
		for _, c := range chunks {
			if c.Start <= i && i < c.End {
				return c.HeadingPath
			}
		}
		t.Fatalf("%q is in no chunk", substr)
		return nil
	}
	if d := cmp.Diff([]string{"Guide", "Install"}, pathOf("Guide")); d != "" {
		t.Errorf("heading-only section should merge into its child (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"Guide", "Configure"}, pathOf("Env vars")); d != "" {
		t.Errorf("merged sibling sections should carry the shared path (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"Reference"}, pathOf("Reference")); d != "" {
		t.Errorf("path of the last section (-want +got):\n%s", d)
	}
	// No chunk crosses from one merged group into another.
	groupOf := func(pos int) int {
		for i, sec := range sections {
			if sec.Start <= pos && pos < sec.End {
				return i
			}
		}
		return -1
	}
	mergedWith := map[int]int{0: 1, 3: 4}
	for _, c := range chunks {
		g1, g2 := groupOf(c.Start), groupOf(c.End-1)
		if g1 != g2 && mergedWith[g1] != g2 {
			t.Errorf("chunk %d spans sections %d and %d", c.Index, g1, g2)
		}
	}
	configure := 0
	for _, c := range chunks {
		if cmp.Equal(c.HeadingPath, []string{"Guide", "Configure"}) {
			configure++
		}
	}
	if configure < 3 {
		t.Errorf("section Configure gave %d chunks, want at least 3", configure)
	}
}

func TestWithHeadings(t *testing.T) {
	c := Chunk{Text: "body", HeadingPath: []string{"A", "B"}}
	if got, want := c.WithHeadings(), "A > B\n\nbody"; got != want {
		t.Errorf("WithHeadings() = %q, want %q", got, want)
	}
	if got := (Chunk{Text: "body"}).WithHeadings(); got != "body" {
		t.Errorf("WithHeadings() without path = %q, want %q", got, "body")
	}
}

func TestTokensMatchEncoder(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	s := newSplitter(t, nil)
	text := words(r, 3000) + "\n\n" + strings.Repeat("naïve café 東京 ", 200)
	chunks, err := s.Split(text, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkChunks(t, s, text, nil, chunks)
	for _, c := range chunks {
		exact := s.CountTokens(c.Text)
		if d := exact - c.Tokens; d < -2 || d > 2 {
			t.Errorf("chunk %d: Tokens = %d, encoding the chunk alone gives %d", c.Index, c.Tokens, exact)
		}
		if exact > s.opts.MaxTokens+2 {
			t.Errorf("chunk %d: %d tokens when encoded alone, want ≤ %d+2", c.Index, exact, s.opts.MaxTokens)
		}
	}
}

func TestSplitErrors(t *testing.T) {
	s := newSplitter(t, nil)
	if _, err := s.Split("bad \xff utf8", nil); !errors.Is(err, ErrInvalidText) {
		t.Errorf("Split(invalid UTF-8) error = %v, want ErrInvalidText", err)
	}
	for _, secs := range [][]Section{
		{{Start: 0, End: 100}},
		{{Start: 5, End: 3}},
		{{Start: 4, End: 8}, {Start: 2, End: 6}},
		{{Start: -1, End: 2}},
	} {
		if _, err := s.Split("0123456789", secs); err == nil || !strings.Contains(err.Error(), "section") {
			t.Errorf("Split with sections %v: error = %v, want one naming the section", secs, err)
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		o    Options
		want string
	}{
		{Options{MaxTokens: 0}, "MaxTokens"},
		{Options{MaxTokens: 100, Overlap: 60}, "Overlap"},
		{Options{MaxTokens: 100, Overlap: -1}, "Overlap"},
		{Options{MaxTokens: 100, MinTokens: 101}, "MinTokens"},
		{Options{MaxTokens: 100, Encoding: "nope_base"}, "nope_base"},
	}
	for _, tt := range tests {
		_, err := New(tt.o)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%+v) error = %v, want one naming %s", tt.o, err, tt.want)
		}
	}
	if _, err := New(DefaultOptions()); err != nil {
		t.Errorf("New(DefaultOptions()) = %v", err)
	}
}
