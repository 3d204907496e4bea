// Package tokens counts cl100k_base tokens (the GPT-4 tokenizer) with tiktoken's
// offline BPE loader, for the tokens field of search responses.
package tokens

import (
	"fmt"
	"sync"

	tiktoken "github.com/pkoukk/tiktoken-go"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
)

var (
	once sync.Once
	enc  *tiktoken.Tiktoken
	err  error
)

// Counter returns a function counting the cl100k_base tokens of a text. The encoding
// is loaded once (from the module's embedded files, no network).
func Counter() (func(b []byte) int, error) {
	once.Do(func() {
		tiktoken.SetBpeLoader(tiktokenloader.NewOfflineLoader())
		enc, err = tiktoken.GetEncoding("cl100k_base")
	})
	if err != nil {
		return nil, fmt.Errorf("load tiktoken cl100k_base: %w", err)
	}
	return func(b []byte) int { return len(enc.EncodeOrdinary(string(b))) }, nil
}
