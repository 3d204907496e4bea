package tokens

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tiktoken "github.com/pkoukk/tiktoken-go"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
)

func reference(t testing.TB) *tiktoken.Tiktoken {
	t.Helper()
	tiktoken.SetBpeLoader(tiktokenloader.NewOfflineLoader())
	enc, err := tiktoken.GetEncoding("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	return enc
}

func counter(t testing.TB) *Counter {
	t.Helper()
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestKnownCounts(t *testing.T) {
	c := counter(t)
	tests := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"hello world", 2},
		{"tiktoken is great!", 6},
	}
	for _, tt := range tests {
		if got := c.Count([]byte(tt.in)); got != tt.want {
			t.Errorf("Count(%q): got %d, want %d", tt.in, got, tt.want)
		}
	}
}

// TestMatchesTiktoken compares Count with tiktoken-go on hand-picked edge cases, the
// repository's HTML test pages and random mixtures of the character classes the
// cl100k pattern distinguishes.
func TestMatchesTiktoken(t *testing.T) {
	c, ref := counter(t), reference(t)
	cases := []string{
		"don't", "DON'T", "I'm", "they're", "we've", "you'll", "he'd", "'s'S'll'LL", "''s", "' s", "'hello",
		"  hello", "\thello", "\n\nhello", "a  \n  b", "a \r\n\r\n  b", "x   ", "   ", "\n", " \n ", "a\u00a0b", "a\u2003\u2003b",
		"12345678", "x1234y", "١٢٣٤", "3.14159", "v1.2.3-rc1", "(hello)", "[[x]]", "...\n\n", " ...\r\n", "a—b", "“quoted”",
		"naïve café", "日本語のテキスト", "emoji 😀👍🏽 done", "tab\tsep\tvalues", `{"json":[1,2,3],"k":"v"}`,
		"results[2]{rank,url}:\n  1,\"https://x.org/a?b=c\",Title\n", "https://127.0.0.1:8099/tutorial/venv.html",
		"\x85next line", "\u2028line sep", "ǅungla", "Ⅻ roman", "x\u0301y",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "Z", "é", "ß", "日", "7", "٣", " ", "  ", "\n", "\r\n", "\t", "'", "'s", "'LL", ".", ",", "-", "—",
		"😀", "\u00a0", "\u3000", "_", "$", "\x85", "{", "\"", "ab", "the", " the", "123456"}
	for range 3000 {
		var b strings.Builder
		for range 1 + rng.IntN(20) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		cases = append(cases, b.String())
	}
	pages, _ := filepath.Glob("../../testdata/relevance/*/site/*.html")
	for _, p := range pages {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, string(raw))
	}
	for _, s := range cases {
		if got, want := c.Count([]byte(s)), len(ref.EncodeOrdinary(s)); got != want {
			t.Errorf("Count(%q): got %d, want %d (tiktoken-go)", s, got, want)
		}
	}
}

func FuzzCount(f *testing.F) {
	for _, s := range []string{"hello world", "don't stop", "  \n\n x", "日本 😀", "a1234b", "'LL 're", "\xff\xfe"} {
		f.Add(s)
	}
	c, ref := counter(f), reference(f)
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := c.Count([]byte(s)), len(ref.EncodeOrdinary(s)); got != want {
			t.Errorf("Count(%q): got %d, want %d (tiktoken-go)", s, got, want)
		}
	})
}

func BenchmarkCount(b *testing.B) {
	raw, err := os.ReadFile("../../testdata/relevance/devdocs/site/postgres-replication.html")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("ours", func(b *testing.B) {
		c := counter(b)
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			c.Count(raw)
		}
	})
	b.Run("tiktoken-go", func(b *testing.B) {
		ref := reference(b)
		s := string(raw)
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			ref.EncodeOrdinary(s)
		}
	})
}
