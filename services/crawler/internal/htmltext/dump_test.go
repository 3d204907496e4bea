package htmltext

import (
	"encoding/json"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDumpExtract writes the extraction of every HTML page below the
// directories listed (colon-separated) in KGS_EXTRACT_DUMP_DIRS to the JSON
// Lines file KGS_EXTRACT_DUMP, one page a line, and logs the CPU time spent
// in Extract: a before/after record for changes to the extractor, which must
// not change what real pages give. Skipped without both variables.
func TestDumpExtract(t *testing.T) {
	out, dirs := os.Getenv("KGS_EXTRACT_DUMP"), os.Getenv("KGS_EXTRACT_DUMP_DIRS")
	if out == "" || dirs == "" {
		t.Skip("KGS_EXTRACT_DUMP and KGS_EXTRACT_DUMP_DIRS not set")
	}
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	type record struct {
		Path      string
		Err       string    `json:",omitempty"`
		Title     string    `json:",omitempty"`
		Extractor string    `json:",omitempty"`
		Text      string    `json:",omitempty"`
		Headings  []Heading `json:",omitempty"`
		Sections  []Section `json:",omitempty"`
		Links     []Link    `json:",omitempty"`
	}
	var spent time.Duration
	pages := 0
	for _, dir := range strings.Split(dirs, ":") {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || !(strings.HasSuffix(path, ".html") || strings.HasSuffix(path, ".htm")) {
				return nil
			}
			body, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, path)
			u := &url.URL{Scheme: "http", Host: "127.0.0.1:8099", Path: "/" + filepath.ToSlash(rel)}
			cpu0 := cpuTime()
			p, err := Extract(body, u, "text/html", nil)
			spent += cpuTime() - cpu0
			pages++
			r := record{Path: path}
			if err != nil {
				r.Err = err.Error()
			} else {
				r.Title, r.Extractor, r.Text, r.Headings, r.Sections, r.Links = p.Title, p.Extractor, p.Text, p.Headings, p.Sections, p.Links
			}
			return enc.Encode(r)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d pages, extraction CPU %v", pages, spent)
}
