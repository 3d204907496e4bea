package toon

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// fixtureDir locates the official TOON conformance fixtures (locateFixtures) or
// fails the test saying how to get them.
func fixtureDir(t testing.TB) string {
	t.Helper()
	dir, err := locateFixtures()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// locateFixtures finds the fixtures: the KGS_TOON_FIXTURES environment variable
// (make test sets it from deploy/local/toonspec.sh, which fetches them from the
// npm registry), else the copy that script unpacks under the state folder, else a
// shared checkout next to the repository.
func locateFixtures() (string, error) {
	isDir := func(d string) bool { st, err := os.Stat(d); return err == nil && st.IsDir() }
	if dir := os.Getenv("KGS_TOON_FIXTURES"); dir != "" {
		if !isDir(dir) {
			return "", fmt.Errorf("TOON conformance fixtures not found at KGS_TOON_FIXTURES=%s: it must be the folder holding encode/ and decode/ (deploy/local/toonspec.sh path prints one)", dir)
		}
		return dir, nil
	}
	state := os.Getenv("KGS_STATE")
	if state == "" {
		state = filepath.Join("..", "..", ".state")
	}
	for _, d := range []string{
		filepath.Join(state, "toon-spec", "3.3.2", "package", "tests", "fixtures"),
		filepath.Join("..", "..", "..", "shared", "fixtures", "toon-spec", "fixtures"),
	} {
		if isDir(d) {
			return d, nil
		}
	}
	return "", errors.New("TOON conformance fixtures not found: run deploy/local/toonspec.sh install (make test does), or set KGS_TOON_FIXTURES to the folder holding encode/ and decode/")
}

type fixtureFile struct {
	Version  string        `json:"version"`
	Category string        `json:"category"`
	Tests    []fixtureCase `json:"tests"`
}

type fixtureCase struct {
	Name        string          `json:"name"`
	Input       json.RawMessage `json:"input"`
	Expected    json.RawMessage `json:"expected"`
	ShouldError bool            `json:"shouldError"`
	Options     struct {
		Delimiter    *string `json:"delimiter"`
		Indent       *int    `json:"indent"`
		Strict       *bool   `json:"strict"`
		KeyFolding   *string `json:"keyFolding"`
		FlattenDepth *int    `json:"flattenDepth"`
		ExpandPaths  *string `json:"expandPaths"`
	} `json:"options"`
}

func (c *fixtureCase) options() []Option {
	var opts []Option
	o := c.Options
	if o.Delimiter != nil {
		opts = append(opts, WithDelimiter([]rune(*o.Delimiter)[0]))
	}
	if o.Indent != nil {
		opts = append(opts, WithIndent(*o.Indent))
	}
	if o.Strict != nil {
		opts = append(opts, WithStrict(*o.Strict))
	}
	if o.KeyFolding != nil {
		opts = append(opts, WithKeyFolding(*o.KeyFolding))
	}
	if o.FlattenDepth != nil {
		opts = append(opts, WithFlattenDepth(*o.FlattenDepth))
	}
	if o.ExpandPaths != nil {
		opts = append(opts, WithExpandPaths(*o.ExpandPaths))
	}
	return opts
}

type fixtureSet struct {
	category string
	file     string
	cases    []fixtureCase
}

func loadFixtures(t testing.TB) []fixtureSet {
	t.Helper()
	dir := fixtureDir(t)
	var sets []fixtureSet
	for _, cat := range []string{"encode", "decode"} {
		files, err := filepath.Glob(filepath.Join(dir, cat, "*.json"))
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Fatalf("no %s fixtures in %s", cat, filepath.Join(dir, cat))
		}
		sort.Strings(files)
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var ff fixtureFile
			if err := json.Unmarshal(data, &ff); err != nil {
				t.Fatalf("parse fixture %s: %v", f, err)
			}
			sets = append(sets, fixtureSet{category: cat, file: strings.TrimSuffix(filepath.Base(f), ".json"), cases: ff.Tests})
		}
	}
	return sets
}

// runFixture runs one case and returns a description of the failure, or "".
func runFixture(cat string, c *fixtureCase) string {
	switch cat {
	case "encode":
		var want string
		if err := json.Unmarshal(c.Expected, &want); err != nil {
			return fmt.Sprintf("expected is not a string: %v", err)
		}
		got, err := FromJSON(c.Input, c.options()...)
		if c.ShouldError {
			if err == nil {
				return fmt.Sprintf("got output %q, want an error", got)
			}
			return ""
		}
		if err != nil {
			return fmt.Sprintf("got error %v, want %q", err, want)
		}
		if string(got) != want {
			return fmt.Sprintf("got:\n%s\nwant:\n%s", got, want)
		}
	case "decode":
		var input string
		if err := json.Unmarshal(c.Input, &input); err != nil {
			return fmt.Sprintf("input is not a string: %v", err)
		}
		got, err := ToJSON([]byte(input), c.options()...)
		if c.ShouldError {
			if err == nil {
				return fmt.Sprintf("got %s, want an error", got)
			}
			return ""
		}
		if err != nil {
			return fmt.Sprintf("got error %v, want %s", err, c.Expected)
		}
		if d := diffJSON(got, c.Expected); d != "" {
			return fmt.Sprintf("got %s, want %s (%s)", got, c.Expected, d)
		}
	}
	return ""
}

// TestConformance runs every official fixture and requires all to pass.
func TestConformance(t *testing.T) {
	sets := loadFixtures(t)
	total, passed := 0, 0
	for _, set := range sets {
		t.Run(set.category+"/"+set.file, func(t *testing.T) {
			for i := range set.cases {
				c := &set.cases[i]
				total++
				if msg := runFixture(set.category, c); msg != "" {
					t.Errorf("%s: %s", c.Name, msg)
					continue
				}
				passed++
			}
		})
	}
	fmt.Printf("toon conformance: %d/%d passed\n", passed, total)
	if total != 400 {
		t.Errorf("got %d fixture cases, want 400 (spec 3.3 suite)", total)
	}
}

// diffJSON compares two JSON texts as ordered JSON-model values: key order
// matters and numbers compare by canonical value.
func diffJSON(a, b []byte) string {
	ar := getArena()
	defer putArena(ar)
	pa := jsonParser{s: string(a), a: ar}
	na, err := pa.parseDocument()
	if err != nil {
		return "left: " + err.Error()
	}
	pb := jsonParser{s: string(b), a: ar}
	nb, err := pb.parseDocument()
	if err != nil {
		return "right: " + err.Error()
	}
	return diffNode("$", &na, &nb)
}

func diffNode(path string, a, b *node) string {
	if a.kind != b.kind {
		return fmt.Sprintf("%s: kind %d vs %d", path, a.kind, b.kind)
	}
	switch a.kind {
	case kBool:
		if a.bits != b.bits {
			return path + ": bool differs"
		}
	case kNum, kString:
		if a.s != b.s {
			return fmt.Sprintf("%s: %q vs %q", path, a.s, b.s)
		}
	case kArray, kObject:
		if len(a.kids) != len(b.kids) {
			return fmt.Sprintf("%s: %d vs %d children", path, len(a.kids), len(b.kids))
		}
		for i := range a.kids {
			p := fmt.Sprintf("%s[%d]", path, i)
			if a.kind == kObject {
				if a.kids[i].key != b.kids[i].key {
					return fmt.Sprintf("%s: key %q vs %q", path, a.kids[i].key, b.kids[i].key)
				}
				p = path + "." + a.kids[i].key
			}
			if d := diffNode(p, &a.kids[i], &b.kids[i]); d != "" {
				return d
			}
		}
	}
	return ""
}
