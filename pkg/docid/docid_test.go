package docid

import "testing"

// The id is stored in MariaDB and Neo4j: changing the function orphans every
// stored document, so its output is pinned.
func TestFromURL(t *testing.T) {
	tests := []struct{ url, want string }{
		{"https://example.org/", "8198d1bac40a1033653a78e48800cefc"},
		{"", "e3b0c44298fc1c149afbf4c8996fb924"},
	}
	for _, tt := range tests {
		if got := FromURL(tt.url); got != tt.want {
			t.Errorf("FromURL(%q): got %s, want %s", tt.url, got, tt.want)
		}
	}
}

func TestValid(t *testing.T) {
	for s, want := range map[string]bool{
		FromURL("https://example.org/"):     true,
		"8198d1bac40a1033653a78e48800cefc":  true,
		"8198D1BAC40A1033653A78E48800CEFC":  false,
		"8198d1bac40a1033653a78e48800cef":   false,
		"8198d1bac40a1033653a78e48800cefcc": false,
		"8198d1bac40a1033653a78e48800cefg":  false,
		"":                                  false,
	} {
		if got := Valid(s); got != want {
			t.Errorf("Valid(%q) = %v, want %v", s, got, want)
		}
	}
}
