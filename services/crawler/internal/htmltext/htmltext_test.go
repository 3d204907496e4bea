package htmltext

import (
	"errors"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func mustURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// textHas reports each wanted string the page's text lacks.
func textHas(t *testing.T, p *Page, want ...string) {
	t.Helper()
	for _, s := range want {
		if !strings.Contains(p.Text, s) {
			t.Errorf("text lacks %q (extractor %s):\n%s", s, p.Extractor, p.Text)
		}
	}
}

// textLacks reports each unwanted string the page's text holds.
func textLacks(t *testing.T, p *Page, unwanted ...string) {
	t.Helper()
	for _, s := range unwanted {
		if strings.Contains(p.Text, s) {
			t.Errorf("text holds %q (extractor %s):\n%s", s, p.Extractor, p.Text)
		}
	}
}

func extractFile(t *testing.T, name, pageURL string, hdr http.Header) *Page {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Extract(body, mustURL(t, pageURL), "text/html; charset=utf-8", hdr)
	if err != nil {
		t.Fatalf("Extract(%s): %v", name, err)
	}
	checkInvariants(t, p)
	return p
}

// checkInvariants verifies the offset promises of Page.
func checkInvariants(t testing.TB, p *Page) {
	t.Helper()
	pos := 0
	for i, s := range p.Sections {
		if s.Start != pos || s.End <= s.Start || s.End > len(p.Text) {
			t.Fatalf("section %d = [%d,%d), want it to start at %d and end within %d bytes", i, s.Start, s.End, pos, len(p.Text))
		}
		pos = s.End
	}
	if pos != len(p.Text) {
		t.Fatalf("sections cover %d of %d bytes", pos, len(p.Text))
	}
	for _, h := range p.Headings {
		if h.Start < 0 || h.End > len(p.Text) || h.Start > h.End || p.Text[h.Start:h.End] != h.Text {
			t.Fatalf("heading %q at [%d,%d) does not match the text", h.Text, h.Start, h.End)
		}
	}
}

func TestExtractArticle(t *testing.T) {
	hdr := http.Header{"Last-Modified": {"Mon, 02 Jan 2006 15:04:05 GMT"}}
	p := extractFile(t, "article.html", "https://docs.example.com/guide/chunking.html", hdr)

	t.Run("metadata", func(t *testing.T) {
		got := map[string]string{
			"title":       p.Title,
			"description": p.Description,
			"language":    p.Language,
			"canonical":   p.Canonical,
			"published":   p.Published.Format(time.RFC3339),
			"modified":    p.Modified.Format(time.RFC3339),
			"extractor":   p.Extractor,
		}
		want := map[string]string{
			"title":       "Chunking Guide | Example Docs",
			"description": "How the indexer splits documents.",
			"language":    "en",
			"canonical":   "https://docs.example.com/guide/chunking?ref=canon",
			"published":   "2025-03-04T09:20:30Z",
			"modified":    "2025-06-07T00:00:00Z", // JSON-LD wins over Last-Modified
			"extractor":   ExtractorReadability,
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("metadata mismatch (-want +got):\n%s", d)
		}
	})

	t.Run("boilerplate removed", func(t *testing.T) {
		for _, s := range []string{"COOKIE-BANNER-TEXT", "HEADER-TEXT", "NAV-TEXT", "SIDEBAR-TEXT", "FOOTER-TEXT", "SCRIPT-TEXT", "HIDDEN-TEXT", "¶", "Accept all"} {
			if strings.Contains(p.Text, s) {
				t.Errorf("text contains boilerplate %q", s)
			}
		}
	})

	t.Run("body kept with structure", func(t *testing.T) {
		for _, s := range []string{
			"Chunking Guide\n\nThe indexer splits every extracted document into chunks",
			"large enough to carry meaning on its own.\n\nStructure first\n\nSplitting follows",
			"- Headings start new sections.\n- Paragraphs are kept whole when they fit.",
			"Tokens are counted with cl100k_base, and consecutive chunks",
			"splitter := chunk.New(chunk.Options{\n    MaxTokens: 256,\n    Overlap:   32,\n})",
			"Option | Default\nMaxTokens | 256\nOverlap | 32",
			"Mail the docs team or jump to the top.",
		} {
			if !strings.Contains(p.Text, s) {
				t.Errorf("text lacks %q\ntext:\n%s", s, p.Text)
			}
		}
	})

	t.Run("headings and sections", func(t *testing.T) {
		var got []string
		for _, h := range p.Headings {
			got = append(got, strings.Repeat("#", h.Level)+" "+h.Text)
		}
		want := []string{"# Chunking Guide", "## Structure first", "### Overlap", "## Offsets"}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("headings (-want +got):\n%s", d)
		}
		i := strings.Index(p.Text, "Tokens are counted")
		var path []string
		for _, s := range p.Sections {
			if s.Start <= i && i < s.End {
				path = s.HeadingPath
			}
		}
		if d := cmp.Diff([]string{"Chunking Guide", "Structure first", "Overlap"}, path); d != "" {
			t.Errorf("heading path of the overlap paragraph (-want +got):\n%s", d)
		}
	})

	t.Run("links", func(t *testing.T) {
		byURL := map[string]Link{}
		for _, l := range p.Links {
			if _, dup := byURL[l.URL]; dup {
				t.Errorf("link %s listed twice", l.URL)
			}
			byURL[l.URL] = l
		}
		want := map[string]Link{
			"https://docs.example.com/guide/":                    {URL: "https://docs.example.com/guide/", Text: "Guides NAV-TEXT"},
			"https://docs.example.com/reference/splitter.html":   {URL: "https://docs.example.com/reference/splitter.html", Text: "splitter reference", InContent: true},
			"https://other.example.org/paper.pdf":                {URL: "https://other.example.org/paper.pdf", Text: "original paper", Rel: "nofollow noopener", InContent: true},
			"https://docs.example.com/imprint?utm_source=footer": {URL: "https://docs.example.com/imprint?utm_source=footer", Text: "Imprint"},
		}
		for u, w := range want {
			if d := cmp.Diff(w, byURL[u]); d != "" {
				t.Errorf("link %s (-want +got):\n%s", u, d)
			}
		}
		if !byURL["https://other.example.org/paper.pdf"].NoFollow() {
			t.Errorf("paper link: NoFollow() = false, want true")
		}
		for u := range byURL {
			if strings.HasPrefix(u, "mailto:") || strings.Contains(u, "#") {
				t.Errorf("unexpected link %s (mailto and fragments must be dropped)", u)
			}
		}
	})

	t.Run("code spans", func(t *testing.T) {
		want := []string{"cl100k_base", "32", "chunk.Options.Overlap"}
		if d := cmp.Diff(want, p.Code); d != "" {
			t.Errorf("code (-want +got):\n%s", d)
		}
	})
}

func TestExtractDatesAndHeaders(t *testing.T) {
	tests := []struct {
		name          string
		html          string
		hdr           http.Header
		wantPublished string
		wantModified  string
		wantLang      string
		wantRobots    Robots
	}{
		{
			name:         "last-modified header when the page says nothing",
			html:         `<html><body><p>Short page.</p></body></html>`,
			hdr:          http.Header{"Last-Modified": {"Wed, 21 Oct 2015 07:28:00 GMT"}},
			wantModified: "2015-10-21T07:28:00Z",
		},
		{
			name:          "meta date and itemprop",
			html:          `<html lang="de-AT"><head><meta name="date" content="2024-01-15"><meta itemprop="dateModified" content="2024-02-01T08:00:00Z"></head><body><p>x</p></body></html>`,
			wantPublished: "2024-01-15T00:00:00Z",
			wantModified:  "2024-02-01T08:00:00Z",
			wantLang:      "de",
		},
		{
			name:          "json-ld",
			html:          `<html><head><script type="application/ld+json">{"@type":"BlogPosting","datePublished":"2023-05-06T07:08:09+02:00","dateModified":"2023-05-07"}</script></head><body><p>x</p></body></html>`,
			wantPublished: "2023-05-06T05:08:09Z",
			wantModified:  "2023-05-07T00:00:00Z",
		},
		{
			name:       "robots meta and header",
			html:       `<html><head><meta name="robots" content="noindex"></head><body><p>x</p></body></html>`,
			hdr:        http.Header{"X-Robots-Tag": {"nofollow", "otherbot: noindex"}},
			wantRobots: Robots{NoIndex: true, NoFollow: true},
		},
		{
			name:     "content-language header",
			html:     `<html><body><p>x</p></body></html>`,
			hdr:      http.Header{"Content-Language": {"fr-CA"}},
			wantLang: "fr",
		},
		{
			name:     "detected language",
			html:     `<html><body><p>Der schnelle braune Fuchs springt über den faulen Hund, und die Katze schläft den ganzen Tag auf dem warmen Sofa im Wohnzimmer.</p></body></html>`,
			wantLang: "de",
		},
	}
	fmtTime := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.Format(time.RFC3339)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Extract([]byte(tt.html), mustURL(t, "http://example.com/p"), "text/html", tt.hdr)
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, p)
			if got := fmtTime(p.Published); got != tt.wantPublished {
				t.Errorf("Published = %q, want %q", got, tt.wantPublished)
			}
			if got := fmtTime(p.Modified); got != tt.wantModified {
				t.Errorf("Modified = %q, want %q", got, tt.wantModified)
			}
			if tt.wantLang != "" && p.Language != tt.wantLang {
				t.Errorf("Language = %q, want %q", p.Language, tt.wantLang)
			}
			if p.Robots != tt.wantRobots {
				t.Errorf("Robots = %+v, want %+v", p.Robots, tt.wantRobots)
			}
		})
	}
}

func TestExtractPlainText(t *testing.T) {
	body := "Release notes\r\n\r\nVersion 2 adds chunk offsets.\r\nVersion 3 adds overlap.\n"
	p, err := Extract([]byte(body), mustURL(t, "http://example.com/NOTES.txt"), "text/plain; charset=utf-8", nil)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, p)
	want := "Release notes\n\nVersion 2 adds chunk offsets.\nVersion 3 adds overlap."
	if p.Text != want || p.Title != "Release notes" || p.Extractor != ExtractorPlain {
		t.Errorf("got text %q title %q extractor %q, want %q, %q, %q", p.Text, p.Title, p.Extractor, want, "Release notes", ExtractorPlain)
	}

	latin1 := []byte("caf\xe9 cr\xe8me")
	p, err = Extract(latin1, mustURL(t, "http://example.com/menu.txt"), "text/plain; charset=iso-8859-1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Text != "café crème" {
		t.Errorf("latin-1 text = %q, want %q", p.Text, "café crème")
	}
}

func TestExtractUnsupported(t *testing.T) {
	for _, ct := range []string{"application/pdf", "image/png", "application/octet-stream", "application/zip"} {
		t.Run(ct, func(t *testing.T) {
			_, err := Extract([]byte("%PDF-1.4 ..."), mustURL(t, "http://example.com/x"), ct, nil)
			if !errors.Is(err, ErrUnsupportedType) {
				t.Errorf("Extract(%s) error = %v, want ErrUnsupportedType", ct, err)
			}
		})
	}
	// Sniffing: no content type, PDF magic.
	_, err := Extract([]byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n"), mustURL(t, "http://example.com/x"), "", nil)
	if !errors.Is(err, ErrUnsupportedType) {
		t.Errorf("sniffed PDF: error = %v, want ErrUnsupportedType", err)
	}
}

func TestExtractCharset(t *testing.T) {
	body := []byte("<html><head><meta charset=\"windows-1252\"></head><body><p>Na\xefve caf\xe9 text with enough words to be the main content of this small page.</p></body></html>")
	p, err := Extract(body, mustURL(t, "http://example.com/"), "text/html", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Text, "Naïve café") {
		t.Errorf("text = %q, want it to contain %q", p.Text, "Naïve café")
	}
}

// pydocDir returns the HTML root of the Python 3.11 manual from Debian's
// python3.11-doc package, or skips the test. It looks at KGS_PYDOC_DIR, then
// where deploy/local/pydocs.sh unpacks it (${KGS_STATE:-<repo>/.state}/pydocs),
// then the system location.
func pydocDir(t testing.TB) string {
	t.Helper()
	const rel = "pydocs/root/usr/share/doc/python3.11/html"
	candidates := []string{os.Getenv("KGS_PYDOC_DIR")}
	if st := os.Getenv("KGS_STATE"); st != "" {
		candidates = append(candidates, filepath.Join(st, rel))
	}
	candidates = append(candidates, filepath.Join("..", "..", "..", "..", ".state", rel), "/usr/share/doc/python3.11/html")
	for _, d := range candidates {
		if d == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(d, "library", "functions.html")); err == nil {
			return d
		}
	}
	t.Skip("Python 3.11 HTML manual not found: run deploy/local/pydocs.sh install or set KGS_PYDOC_DIR")
	return ""
}

// TestPythonDocs checks extraction quality on real Sphinx pages: body text,
// code examples and function signatures kept; sidebars and prev/next
// navigation gone.
func TestPythonDocs(t *testing.T) {
	dir := pydocDir(t)
	boilerplate := []string{"© Copyright", "Created using Sphinx", "Previous topic", "Next topic", "This Page", "Report a Bug", "Show Source", "Quick search", "Navigation", "Table of Contents", "modules |", "Python »", "Found a bug?", "Last updated on"}
	tests := []struct {
		page         string
		firstHeading string
		wantText     []string
		minHeadings  int
	}{
		{
			page:         "library/functions.html",
			firstHeading: "Built-in Functions",
			wantText: []string{
				"abs(x)\n\nReturn the absolute value of a number.",
				"def all(iterable):\n    for element in iterable:\n        if not element:\n            return False\n    return True",
				"class bool(x=False)",
				"zip(*iterables, strict=False)",
				">>> bin(3)\n'0b11'",
			},
			minHeadings: 1,
		},
		{
			page:         "tutorial/controlflow.html",
			firstHeading: "4. More Control Flow Tools",
			wantText: []string{
				"4.1. if Statements",
				">>> for n in range(2, 10):",
				"Perhaps the most well-known statement type is the if statement.",
			},
			minHeadings: 10,
		},
		{
			page:         "library/stdtypes.html",
			firstHeading: "Built-in Types",
			wantText:     []string{"Truth Value Testing", "str.split(sep=None, maxsplit=-1)"},
			minHeadings:  20,
		},
		{
			// A table-of-contents page: readability alone returns the footer.
			page:         "faq/index.html",
			firstHeading: "Python Frequently Asked Questions",
			wantText:     []string{"- General Python FAQ\n- Programming FAQ"},
			minHeadings:  1,
		},
		{
			page:         "glossary.html",
			firstHeading: "Glossary",
			wantText:     []string{"The default Python prompt of the interactive shell."},
			minHeadings:  1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.page, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join(dir, tt.page))
			if err != nil {
				t.Fatal(err)
			}
			p, err := Extract(body, mustURL(t, "http://127.0.0.1:8099/"+tt.page), "text/html", nil)
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, p)
			if len(p.Headings) < tt.minHeadings || p.Headings[0].Text != tt.firstHeading {
				t.Fatalf("got %d headings, first %v; want ≥ %d, first %q", len(p.Headings), p.Headings[:min(1, len(p.Headings))], tt.minHeadings, tt.firstHeading)
			}
			for _, s := range tt.wantText {
				if !strings.Contains(p.Text, s) {
					t.Errorf("text lacks %q", s)
				}
			}
			for _, s := range boilerplate {
				if strings.Contains(p.Text, s) {
					t.Errorf("text contains boilerplate %q", s)
				}
			}
			if p.Language != "en" {
				t.Errorf("Language = %q, want en", p.Language)
			}
			if len(p.Links) == 0 {
				t.Errorf("no links found")
			}
		})
	}
}

func TestExtractMainLandmarkOnLinkListPage(t *testing.T) {
	// A Sphinx-shaped table-of-contents page: given the whole page,
	// readability prefers the footer's sentences over the list of links;
	// the text must be the landmark's (readability, given only the
	// landmark, finds the same text).
	p := extractFile(t, "toc.html", "http://example.com/manual/cookbook/index.html", nil)
	if p.Extractor != ExtractorLandmark && p.Extractor != ExtractorReadability {
		t.Errorf("Extractor = %q, want %q or %q", p.Extractor, ExtractorLandmark, ExtractorReadability)
	}
	want := "Cookbook Questions\n\n- Getting started questions\n- Building from source questions\n- Deployment questions\n- Performance questions\n- Desktop interface questions\n- “Why is the tool on my machine?” questions"
	if p.Text != want {
		t.Errorf("text = %q, want %q", p.Text, want)
	}
}

// TestPythonDocsSurvey extracts every page of the Python manual and checks
// that none leaks Sphinx boilerplate or comes out (nearly) empty. It takes a
// minute or two, so it runs only with KGS_PYDOC_SURVEY=1.
func TestPythonDocsSurvey(t *testing.T) {
	if os.Getenv("KGS_PYDOC_SURVEY") != "1" {
		t.Skip("set KGS_PYDOC_SURVEY=1 to extract the whole Python manual")
	}
	dir := pydocDir(t)
	counts := map[string]int{}
	pages := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".html") || strings.Contains(path, "_static") {
			return err
		}
		body, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		p, err := Extract(body, mustURL(t, "http://127.0.0.1:8099/"+filepath.ToSlash(rel)), "text/html", nil)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			return nil
		}
		checkInvariants(t, p)
		pages++
		counts[p.Extractor]++
		if len(p.Text) < 60 {
			t.Errorf("%s: only %d bytes of text (%s)", rel, len(p.Text), p.Extractor)
		}
		for _, s := range []string{"Previous topic", "Next topic", "Show Source", "Quick search", "Report a Bug", "Created using Sphinx"} {
			if strings.Contains(p.Text, s) {
				t.Errorf("%s: text contains boilerplate %q (%s)", rel, s, p.Extractor)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d pages, extractors %v", pages, counts)
}
