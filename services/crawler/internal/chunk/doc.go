// Package chunk splits extracted text into overlapping, token-sized chunks that
// keep their place in the document.
//
// Splitting is structure-aware and recursive: the text is first cut into the
// sections given by the extractor (one per heading); a section that is too
// large is cut at paragraphs (blank lines), then at lines, then at sentence
// ends, then between words, and only as a last resort inside a word (at a
// token boundary that is also a character boundary). The resulting pieces are
// packed greedily into chunks of at most Options.MaxTokens tokens; each new
// chunk of a section starts with up to Options.Overlap tokens from the end of
// the previous one, beginning at a word boundary. Sections smaller than
// Options.MinTokens are merged with the following sections (when the result
// still fits) so that a heading on its own does not become a chunk; the
// merged chunk carries the heading path the sections share.
//
// Tokens are counted with tiktoken (cl100k_base by default, loaded offline).
// The text is encoded once; counts for any range come from the token start
// offsets, so a chunk's Tokens is the number of tokens of the whole text that
// start inside it. Re-encoding the chunk alone can differ by a token at the
// edges.
//
// Every chunk satisfies text[c.Start:c.End] == c.Text, with byte offsets into
// the text that was split, so that search results can cite the exact passage.
package chunk
