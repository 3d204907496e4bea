package pipeline

import (
	"github.com/kgsearch/kgsearch/services/crawler/internal/chunk"
	"github.com/kgsearch/kgsearch/services/crawler/internal/htmltext"
)

// ChunkSplitter adapts chunk.Splitter: it splits a page along the
// extractor's sections, so every chunk keeps its heading path.
type ChunkSplitter struct{ S *chunk.Splitter }

// Split implements Splitter.
func (c ChunkSplitter) Split(page *htmltext.Page) ([]Piece, error) {
	var sections []chunk.Section
	if len(page.Sections) > 0 {
		sections = make([]chunk.Section, len(page.Sections))
		for i, s := range page.Sections {
			sections[i] = chunk.Section{HeadingPath: s.HeadingPath, Start: s.Start, End: s.End}
		}
	}
	chunks, err := c.S.Split(page.Text, sections)
	if err != nil {
		return nil, err
	}
	out := make([]Piece, len(chunks))
	for i, ch := range chunks {
		out[i] = Piece{Text: ch.Text, Tokens: ch.Tokens, Start: ch.Start, End: ch.End, HeadingPath: ch.HeadingPath}
	}
	return out, nil
}
