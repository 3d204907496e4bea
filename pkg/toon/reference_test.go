package toon

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/kgsearch/kgsearch/pkg/toon/sample"
)

// TestReferenceImplementation encodes thousands of generated JSON documents with
// pkg/toon and with the reference implementation of the spec (@toon-format/toon
// 2.3.1, run by Node.js; deploy/local/toonref.sh fetches it and make test sets
// KGS_TOON_REFERENCE), and asks for byte-identical output under each delimiter, an
// indent of 4 and safe key folding; the reference's strict decoder must also read
// every document pkg/toon wrote back to the same value. The conformance fixtures
// (TestConformance) fix the rules; this finds the combinations they do not list.
func TestReferenceImplementation(t *testing.T) {
	module := os.Getenv("KGS_TOON_REFERENCE")
	if module == "" {
		t.Skip("KGS_TOON_REFERENCE is not set: deploy/local/toonref.sh path prints the reference module (make test sets it when node is on PATH)")
	}
	if _, err := os.Stat(module); err != nil {
		t.Fatalf("KGS_TOON_REFERENCE=%s: %v (deploy/local/toonref.sh path installs it)", module, err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("KGS_TOON_REFERENCE is set but node is not on PATH: %v", err)
	}

	type refOptions struct {
		Delimiter  string `json:"delimiter,omitempty"`
		Indent     int    `json:"indent,omitempty"`
		KeyFolding string `json:"keyFolding,omitempty"`
	}
	type testCase struct {
		JSON    string     `json:"json"`
		Ours    string     `json:"ours"`
		Options refOptions `json:"options"`
	}
	variants := []struct {
		ref  refOptions
		opts []Option
	}{
		{refOptions{}, nil},
		{refOptions{Delimiter: "\t"}, []Option{WithDelimiter('\t')}},
		{refOptions{Delimiter: "|"}, []Option{WithDelimiter('|')}},
		{refOptions{Indent: 4}, []Option{WithIndent(4)}},
		{refOptions{KeyFolding: "safe"}, []Option{WithKeyFolding("safe")}},
	}

	g := jsonGen{r: rand.New(rand.NewPCG(14, 2026))}
	docs := make([]string, 0, 3001)
	for range 3000 {
		docs = append(docs, g.document())
	}
	search, err := json.Marshal(sample.Search(10))
	if err != nil {
		t.Fatal(err)
	}
	docs = append(docs, string(search))

	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	var cases []testCase
	for i, doc := range docs {
		v := variants[i%len(variants)]
		ours, err := FromJSON([]byte(doc), v.opts...)
		if err != nil {
			t.Fatalf("FromJSON(%s): %v", doc, err)
		}
		c := testCase{JSON: doc, Ours: string(ours), Options: v.ref}
		cases = append(cases, c)
		if err := enc.Encode(c); err != nil {
			t.Fatal(err)
		}
	}

	cmd := exec.Command(node, "testdata/reference.mjs", module)
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node testdata/reference.mjs: %v\n%s", err, stderr.String())
	}

	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	n, failures := 0, 0
	for sc.Scan() {
		if n >= len(cases) {
			t.Fatalf("the reference answered more lines than the %d cases", len(cases))
		}
		c := cases[n]
		n++
		var got struct {
			Ref, Back, Want, Error string
		}
		if err := json.Unmarshal(sc.Bytes(), &got); err != nil {
			t.Fatalf("reference output line %d: %v", n, err)
		}
		var problem string
		switch {
		case got.Error != "":
			problem = "the reference failed: " + got.Error
		case got.Ref != c.Ours:
			problem = "encodings differ:\n--- reference\n" + got.Ref + "\n--- pkg/toon\n" + c.Ours
		case c.Options.KeyFolding == "" && got.Back != got.Want:
			problem = "the reference decodes pkg/toon's text to " + got.Back + ", want " + got.Want
		}
		if problem != "" {
			failures++
			if failures <= 5 {
				t.Errorf("case %d, options %+v, JSON %s: %s", n, c.Options, c.JSON, problem)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n != len(cases) {
		t.Fatalf("the reference answered %d of %d cases; stderr:\n%s", n, len(cases), stderr.String())
	}
	if failures > 0 {
		t.Errorf("%d of %d documents differ from the reference implementation", failures, len(cases))
	}
}

// jsonGen writes random JSON documents as text, so key order is chosen here (a Go
// map would lose it). The strings and keys are drawn from a list of the cases the
// quoting rules single out: reserved words, number shapes, delimiters, colons,
// brackets, hyphens, spaces at the ends, control characters, non-ASCII. Integers
// stay within ±2^53, which JavaScript's numbers hold exactly.
type jsonGen struct{ r *rand.Rand }

var (
	genStrings = []string{"", " ", "a", "hello world", " lead", "trail ", "true", "false", "null", "True",
		"1", "-1", "1.5", "1e5", "1E5", "01", "-", "- x", "a,b", "a:b", "a|b", "a\tb", "[x]", "{x}", "#c", `"q"`,
		`back\slash`, "new\nline", "cr\rx", "unicodé ✓", "emoji 😀", "x: y", "-0", "0.0", "1e-7", "key=val",
		"@at", "a b c", "\u0001ctl", "\u007fdel", ".5", "5.", "0x1F", "NaN", "Infinity", "a\u2028b", "  ", "#",
		"1_000", "+1", "e5", "a.b", "é"}
	genKeys = []string{"a", "b", "id", "name", "key with space", "-k", "a.b", "a:b", `"q"`, "", "x_y",
		"ümlaut", "#h", "[0]", "{}", "true", "_u", "A9", "a-b", "a.b.c", "1a", "$ref"}
	genNumbers = []string{"0", "1", "-1", "42", "3.14", "-2.5", "1e21", "1e-7", "123456789", "0.1", "1e20",
		"2.5e-5", "-0", "100.0", "7e300", "9007199254740991", "5e-324", "0.000001", "1E+2", "123456.789",
		"1.0e15", "1e16", "1.50"}
)

func (g jsonGen) pick(list []string) string { return list[g.r.IntN(len(list))] }

// jsonString is s as a JSON string literal.
func jsonString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // a Go string always marshals
	}
	return string(b)
}

func (g jsonGen) primitive() string {
	switch r := g.r.Float64(); {
	case r < 0.5:
		return jsonString(g.pick(genStrings))
	case r < 0.75:
		return g.pick(genNumbers)
	default:
		return []string{"true", "false", "null"}[g.r.IntN(3)]
	}
}

// keys picks n distinct keys.
func (g jsonGen) keys(n int) []string {
	perm := g.r.Perm(len(genKeys))
	out := make([]string, n)
	for i := range out {
		out[i] = genKeys[perm[i]]
	}
	return out
}

func (g jsonGen) object(keys []string, value func() string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(jsonString(k))
		b.WriteByte(':')
		b.WriteString(value())
	}
	b.WriteByte('}')
	return b.String()
}

func (g jsonGen) array(n int, item func() string) string {
	items := make([]string, n)
	for i := range items {
		items[i] = item()
	}
	return "[" + strings.Join(items, ",") + "]"
}

func (g jsonGen) value(depth int) string {
	next := func() string { return g.value(depth + 1) }
	switch r := g.r.Float64(); {
	case depth > 3 || r < 0.4:
		return g.primitive()
	case r < 0.6:
		return g.object(g.keys(g.r.IntN(5)), next)
	case r < 0.75: // uniform objects of primitives: a table
		keys := g.keys(1 + g.r.IntN(4))
		return g.array(g.r.IntN(5), func() string { return g.object(keys, g.primitive) })
	case r < 0.8: // same keys, some nested values: not a table
		keys := g.keys(1 + g.r.IntN(3))
		return g.array(1+g.r.IntN(3), func() string {
			return g.object(keys, func() string {
				if g.r.Float64() < 0.3 {
					return next()
				}
				return g.primitive()
			})
		})
	case r < 0.87:
		return g.array(g.r.IntN(6), g.primitive)
	case r < 0.93:
		return g.array(g.r.IntN(4), func() string { return g.array(g.r.IntN(4), g.primitive) })
	default:
		return g.array(g.r.IntN(5), next)
	}
}

// document is a root object most of the time, any value otherwise.
func (g jsonGen) document() string {
	if g.r.Float64() < 0.3 {
		return g.value(0)
	}
	return g.object(g.keys(1+g.r.IntN(5)), func() string { return g.value(1) })
}
