package chunk

import (
	"testing"
	"unicode/utf8"
)

func FuzzSplit(f *testing.F) {
	f.Add("Title\n\nFirst paragraph. Second sentence!\n\nNext para\nwith a line.", uint8(8), uint8(2), uint8(3))
	f.Add("é漢🙂 a\u00a0b\t\tc\r\n\r\nd", uint8(0), uint8(0), uint8(0))
	f.Add("x", uint8(200), uint8(100), uint8(7))
	f.Fuzz(func(t *testing.T, text string, maxTok, overlap, cut uint8) {
		if !utf8.ValidString(text) {
			t.Skip()
		}
		o := Options{MaxTokens: 8 + int(maxTok)%120}
		o.Overlap = int(overlap) % (o.MaxTokens/2 + 1)
		o.MinTokens = int(cut) % (o.MaxTokens + 1)
		s, err := New(o)
		if err != nil {
			t.Fatalf("New(%+v): %v", o, err)
		}
		// Two sections split at a character boundary near cut.
		c := int(cut) % (len(text) + 1)
		for c > 0 && c < len(text) && !utf8.RuneStart(text[c]) {
			c--
		}
		sections := []Section{{HeadingPath: []string{"a"}, Start: 0, End: c}, {HeadingPath: []string{"a", "b"}, Start: c, End: len(text)}}
		chunks, err := s.Split(text, sections)
		if err != nil {
			t.Fatalf("Split: %v", err)
		}
		checkChunks(t, s, text, sections, chunks)
	})
}
