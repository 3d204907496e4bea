package canon

import (
	"net/url"
	"testing"
)

func FuzzCanonicalize(f *testing.F) {
	seeds := []string{
		"http://example.com/a/./b/../c?b=2&a=1#x",
		"HTTPS://User@WWW.Example.COM:443/%7e/%2f?utm_source=1&q=a+b",
		"http://bücher.example/a b/100%",
		"http://0x7f.1:8080/index.html/",
		"http://[::ffff:127.0.0.1]/",
		"http://example.com/?a&a=&&b=%zz",
		"http://a/%2E%2E/%2e/",
		"mailto:x@y",
		"http://a.b/..;/x?%26=%3D",
	}
	for _, s := range seeds {
		f.Add(s, false, false, false)
	}
	f.Fuzz(func(t *testing.T, raw string, www, strip, index bool) {
		opts := DefaultOptions()
		opts.StripWWW = www
		if strip {
			opts.TrailingSlash = StripTrailingSlash
		}
		if index {
			opts.IndexNames = DefaultIndexNames
		}
		c1, err := Canonicalize(raw, opts)
		if err != nil {
			return
		}
		c2, err := Canonicalize(c1, opts)
		if err != nil {
			t.Fatalf("Canonicalize(%q) = %q, which then fails: %v", raw, c1, err)
		}
		if c2 != c1 {
			t.Fatalf("not idempotent: %q -> %q -> %q", raw, c1, c2)
		}
		u, err := url.Parse(c1)
		if err != nil {
			t.Fatalf("canonical URL %q does not parse: %v", c1, err)
		}
		if u.Fragment != "" || u.User != nil {
			t.Fatalf("canonical URL %q keeps a fragment or user info", c1)
		}
	})
}
