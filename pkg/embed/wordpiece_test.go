package embed

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A vocabulary small enough to reason about by hand; ids are line numbers.
const tinyVocab = `[PAD]
[UNK]
[CLS]
[SEP]
un
##aff
##able
the
cafe
,
!
.
##s
file
open
(
)
日
本
$
`

func tinyWordPiece(t *testing.T) *wordPiece {
	t.Helper()
	wp, err := readVocab(strings.NewReader(tinyVocab), true)
	if err != nil {
		t.Fatalf("readVocab: %v", err)
	}
	return wp
}

func TestWordPieceTiny(t *testing.T) {
	wp := tinyWordPiece(t)
	tests := []struct {
		name string
		text string
		max  int
		want []int32
	}{
		{"empty", "", 16, []int32{2, 3}},
		{"whitespace only", " \t\n ", 16, []int32{2, 3}},
		{"greedy longest match", "unaffable", 16, []int32{2, 4, 5, 6, 3}},
		{"lowercase and accents", "The CAFÉ", 16, []int32{2, 7, 8, 3}},
		{"punctuation split", "the,cafe!", 16, []int32{2, 7, 9, 8, 10, 3}},
		{"ascii symbol is punctuation", "$the", 16, []int32{2, 19, 7, 3}},
		{"continuation piece", "files", 16, []int32{2, 13, 12, 3}},
		{"unknown word is one UNK", "unaffablex cafe", 16, []int32{2, 1, 8, 3}},
		{"cjk split per character", "日本", 16, []int32{2, 17, 18, 3}},
		{"control characters dropped", "ca\u0000fe\u200b", 16, []int32{2, 8, 3}},
		{"word over 100 chars is UNK", strings.Repeat("un", 51), 16, []int32{2, 1, 3}},
		{"truncated keeps CLS and SEP", "the cafe the cafe the", 4, []int32{2, 7, 8, 3}},
		{"truncation cuts inside a word", "the unaffable", 4, []int32{2, 7, 4, 3}},
		{"minimum length", "the cafe", 2, []int32{2, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := wp.encode(tt.text, tt.max)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("encode(%q, %d) mismatch (-want +got):\n%s", tt.text, tt.max, diff)
			}
		})
	}
}

func TestReadVocabMissingSpecial(t *testing.T) {
	_, err := readVocab(strings.NewReader("[PAD]\n[UNK]\n[CLS]\nhello\n"), true)
	if err == nil || !strings.Contains(err.Error(), "[SEP]") {
		t.Fatalf("readVocab without [SEP]: got error %v, want one naming [SEP]", err)
	}
}

// TestWordPieceMatchesHuggingFace compares with ids from Hugging Face's Rust
// tokenizer for the all-MiniLM-L6-v2 tokenizer.json (testdata/wordpiece_ids.json).
func TestWordPieceMatchesHuggingFace(t *testing.T) {
	dir, _ := modelPaths(t)
	wp, err := loadVocab(filepath.Join(dir, "vocab.txt"), true)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("testdata/wordpiece_ids.json")
	if err != nil {
		t.Fatal(err)
	}
	var golden struct {
		Cases []struct {
			Text string  `json:"text"`
			IDs  []int32 `json:"ids"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(raw, &golden); err != nil {
		t.Fatal(err)
	}
	if len(golden.Cases) < 20 {
		t.Fatalf("golden file has %d cases, want at least 20", len(golden.Cases))
	}
	for _, c := range golden.Cases {
		name := c.Text
		if len(name) > 40 {
			name = name[:40]
		}
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(c.IDs, wp.encode(c.Text, 1<<20)); diff != "" {
				t.Errorf("encode(%q) mismatch (-huggingface +ours):\n%s", c.Text, diff)
			}
			// Truncated to 256 tokens: the first 255 ids, then [SEP].
			const maxTokens = 256
			want := c.IDs
			if len(want) > maxTokens {
				want = append(append([]int32{}, want[:maxTokens-1]...), wp.sep)
			}
			if diff := cmp.Diff(want, wp.encode(c.Text, maxTokens)); diff != "" {
				t.Errorf("encode(%q, 256) mismatch (-want +got):\n%s", c.Text, diff)
			}
		})
	}
}

func FuzzWordPiece(f *testing.F) {
	for _, s := range []string{"", "unaffable", "Héllo, 日本!", "\u0000\ufffd", strings.Repeat("x", 300)} {
		f.Add(s, 8)
	}
	wp, err := readVocab(strings.NewReader(tinyVocab), true)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string, maxLen int) {
		maxLen = 2 + abs(maxLen)%64
		ids := wp.encode(text, maxLen)
		if len(ids) < 2 || len(ids) > maxLen {
			t.Fatalf("encode(%q, %d) gave %d ids, want 2..%d", text, maxLen, len(ids), maxLen)
		}
		if ids[0] != wp.cls || ids[len(ids)-1] != wp.sep {
			t.Fatalf("encode(%q) = %v, want [CLS] ... [SEP]", text, ids)
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
