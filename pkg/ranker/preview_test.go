package ranker

import (
	"strings"
	"testing"
	"unicode/utf8"
)

const previewText = "SQLite is a C library. It provides a lightweight disk-based database. " +
	"The sqlite3 module provides a connection object. Use the cursor to run queries."

func TestPreview(t *testing.T) {
	// Sentence lengths: s0 "SQLite is a C library." 22, s1 46, s2 48, s3 30; separators 1.
	s1 := "It provides a lightweight disk-based database."
	s2 := "The sqlite3 module provides a connection object."
	s3 := "Use the cursor to run queries."
	tests := []struct {
		name     string
		terms    []string
		maxChars int
		want     string
	}{
		// Best s2 (48); s1+s2 = 95 > 60, s2+s3 = 79 > 60 → s2 alone.
		{"best sentence only", []string{"connection"}, 60, s2},
		// Budget 100: neighbours s1 and s3 both score 0 → tie → right: s2+s3 = 79;
		// then s1..s3 = 126 > 100 → stop.
		{"extends right on tie", []string{"connection"}, 100, s2 + " " + s3},
		// "database" is in s1: s1 (46); s0+s1 = 69 ≤ 80 and s1+s2 = 95 > 80 → s0 s1.
		{"extends to the side that fits", []string{"database"}, 80, "SQLite is a C library. " + s1},
		// "cursor" (s3) and "connection" (s2) score 1 each; query "connection cursor": s2 and s3 both 1 → earliest s2.
		{"earliest on equal matches", []string{"connection", "cursor"}, 50, s2},
		// Two terms in one sentence beat one: "sqlite3" is a word of its own, so query
		// "sqlite3 module" matches s2 twice → s2.
		{"more distinct terms win", []string{"sqlite3 module"}, 48, s2},
		// Nothing matches: the first sentence, then right while it fits (22+1+46 = 69 > 30).
		{"no match gives the lead", []string{"zebra"}, 30, "SQLite is a C library."},
		{"whole text fits", []string{"connection"}, 400, previewText},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, start, end := Preview(previewText, tt.terms, tt.maxChars)
			if got != tt.want {
				t.Errorf("snippet: got %q, want %q", got, tt.want)
			}
			if wantStart := strings.Index(previewText, tt.want); start != wantStart || end != wantStart+len(tt.want) {
				t.Errorf("offsets: got [%d,%d), want [%d,%d)", start, end, wantStart, wantStart+len(tt.want))
			}
		})
	}
}

func TestPreviewCutsLongSentence(t *testing.T) {
	// "alpha " × 30 (bytes 0..179), "needle " at 180, "beta " × 30, ".".
	text := strings.Repeat("alpha ", 30) + "needle " + strings.Repeat("beta ", 30) + "."
	// maxChars 40: step back 40/3 = 13 runes from 180 → 167 (the space before the alpha
	// at 168); the rune before 167 is 'a' so move forward to 168. 40 runes → 208, which
	// is inside the fifth "beta" (betas start at 187, 192, 197, 202, 207) → back to the
	// last space, at 206. Result [168, 206).
	got, start, end := Preview(text, []string{"needle"}, 40)
	if want := "alpha alpha needle beta beta beta beta"; got != want {
		t.Errorf("snippet: got %q, want %q", got, want)
	}
	if start != 168 || end != 206 {
		t.Errorf("offsets: got [%d,%d), want [168,206)", start, end)
	}
}

func TestPreviewEdgeCases(t *testing.T) {
	tests := []struct {
		name      string
		text      string
		terms     []string
		maxChars  int
		want      string
		wantStart int
	}{
		{"zero budget", previewText, []string{"sqlite"}, 0, "", 0},
		{"empty text", "", []string{"x"}, 50, "", 0},
		{"blank text", " \n\t ", []string{"x"}, 50, "", 0},
		// Line breaks split sentences; whitespace inside is collapsed.
		{"newline split and collapse", "Line one\n\nconnection   is\there.", []string{"connection"}, 30, "connection is here.", 10},
		// One word longer than the budget: hard cut at a rune boundary.
		{"giant word", strings.Repeat("x", 50), nil, 10, strings.Repeat("x", 10), 0},
		// Multi-byte text: offsets stay on rune boundaries; "Zürich" is 6 runes, 7 bytes.
		{"unicode", "Über die Datenbank. Zürich connection müssen wir.", []string{"connection"}, 40, "Zürich connection müssen wir.", 21},
		// A dot not followed by space does not split ("v1.2", "x.test").
		{"dot inside token", "Version v1.2 adds connection pools. Next.", []string{"connection"}, 36, "Version v1.2 adds connection pools.", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, start, _ := Preview(tt.text, tt.terms, tt.maxChars)
			if got != tt.want || start != tt.wantStart {
				t.Errorf("got %q at %d, want %q at %d", got, start, tt.want, tt.wantStart)
			}
		})
	}
}

func FuzzPreview(f *testing.F) {
	f.Add(previewText, "connection", 60)
	f.Add("a.b. c\n\n d", "b", 3)
	f.Add("Über die Datenbank. Zürich", "zürich", 5)
	f.Fuzz(func(t *testing.T, text, term string, maxChars int) {
		if maxChars > 10000 {
			maxChars %= 10000
		}
		got, start, end := Preview(text, []string{term}, maxChars)
		if start < 0 || end < start || end > len(text) {
			t.Fatalf("offsets [%d,%d) out of range for len %d", start, end, len(text))
		}
		if maxChars <= 0 {
			if got != "" {
				t.Fatalf("maxChars %d gave %q, want empty", maxChars, got)
			}
			return
		}
		if n := utf8.RuneCountInString(text[start:end]); n > maxChars {
			t.Fatalf("span has %d runes, want at most %d", n, maxChars)
		}
		if utf8.ValidString(text) && got != collapseSpace(text[start:end]) {
			t.Fatalf("snippet %q is not the collapsed span %q", got, text[start:end])
		}
	})
}
