package store

import (
	"strings"
	"testing"
)

func FuzzNormalizeDomain(f *testing.F) {
	for _, s := range []string{"Example.COM.", "a.b.c:8080", "[::1]:80", "10.0.0.1", "-bad-.com", "bücher.de", "", "a..b", "x'); DROP TABLE t; --"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, err := NormalizeDomain(in)
		if err != nil {
			return
		}
		if out == "" || len(out) > maxDomainLen {
			t.Fatalf("NormalizeDomain(%q) = %q: want 1..%d bytes", in, out, maxDomainLen)
		}
		if strings.ContainsAny(out, "'\" ;\\") {
			t.Fatalf("NormalizeDomain(%q) = %q: contains quote, space or semicolon", in, out)
		}
		again, err := NormalizeDomain(out)
		if err != nil || again != out {
			t.Fatalf("NormalizeDomain not idempotent: %q -> %q -> %q (%v)", in, out, again, err)
		}
	})
}

func FuzzSplitStatements(f *testing.F) {
	f.Add("CREATE TABLE a (x INT);\n-- c\nINSERT INTO a VALUES (1);\n")
	f.Add(";;\n;\n")
	f.Fuzz(func(t *testing.T, src string) {
		for _, st := range splitStatements(src) {
			if strings.TrimSpace(st) == "" {
				t.Fatalf("splitStatements(%q) returned an empty statement", src)
			}
			if strings.HasSuffix(st, ";") {
				t.Fatalf("statement %q keeps its terminating semicolon", st)
			}
		}
	})
}
