package canon

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

func TestCanonicalizeDefaults(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"http://example.com", "http://example.com/"},
		{"HTTP://Example.COM/", "http://example.com/"},
		{"  http://example.com/a  ", "http://example.com/a"},
		{"http://example.com:80/a", "http://example.com/a"},
		{"https://example.com:443/a", "https://example.com/a"},
		{"http://example.com:443/a", "http://example.com:443/a"},
		{"https://example.com:80/a", "https://example.com:80/a"},
		{"http://example.com:0080/a", "http://example.com/a"},
		{"http://example.com:/a", "http://example.com/a"},
		{"http://example.com:8080/a", "http://example.com:8080/a"},
		{"http://example.com/a#frag", "http://example.com/a"},
		{"http://example.com/a#", "http://example.com/a"},
		{"http://example.com/#/route", "http://example.com/"},
		{"http://user:pass@example.com/a", "http://example.com/a"},
		{"http://example.com./a", "http://example.com/a"},
		{"http://example.com/a/./b/../c", "http://example.com/a/c"},
		{"http://example.com/../../a", "http://example.com/a"},
		{"http://example.com/a/b/..", "http://example.com/a/"},
		{"http://example.com/a/.", "http://example.com/a/"},
		{"http://example.com/a/%2E%2E/b", "http://example.com/b"},
		{"http://example.com/a/%2e/b", "http://example.com/a/b"},
		{"http://example.com/a//b", "http://example.com/a//b"},
		{"http://example.com/a/", "http://example.com/a/"},
		{"http://example.com/%7euser", "http://example.com/~user"},
		{"http://example.com/%41%42c", "http://example.com/ABc"},
		{"http://example.com/a%2fb", "http://example.com/a%2Fb"},
		{"http://example.com/a%c3%a9", "http://example.com/a%C3%A9"},
		{"http://example.com/aé", "http://example.com/a%C3%A9"},
		{"http://example.com/a b", "http://example.com/a%20b"},
		{"http://example.com/100%", "http://example.com/100%25"},
		{"http://example.com/100%zz", "http://example.com/100%25zz"},
		{"http://example.com/a\tb\n", "http://example.com/ab"},
		{"http://example.com/?", "http://example.com/"},
		{"http://example.com/?&&", "http://example.com/"},
		{"http://example.com/?b=2&a=1", "http://example.com/?a=1&b=2"},
		{"http://example.com/?a=2&a=1", "http://example.com/?a=1&a=2"},
		{"http://example.com/?a&a=", "http://example.com/?a&a="},
		{"http://example.com/?q=a+b", "http://example.com/?q=a+b"},
		{"http://example.com/?q=%7e%2f", "http://example.com/?q=~%2F"},
		{"http://example.com/?q=a%26b&p=1", "http://example.com/?p=1&q=a%26b"},
		{"http://example.com/?q=x=y", "http://example.com/?q=x=y"},
		{"http://example.com/?utm_source=x&id=3&utm_medium=y", "http://example.com/?id=3"},
		{"http://example.com/?UTM_Campaign=x", "http://example.com/"},
		{"http://example.com/?gclid=1&fbclid=2&mc_cid=3&mc_eid=4&ref_src=5", "http://example.com/"},
		{"http://example.com/?%75tm_source=x", "http://example.com/"},
		{"http://example.com/?utm=1", "http://example.com/?utm=1"},
		{"http://bücher.example/", "http://xn--bcher-kva.example/"},
		{"http://BÜCHER.example/", "http://xn--bcher-kva.example/"},
		{"http://xn--bcher-kva.example/", "http://xn--bcher-kva.example/"},
		{"http://www.example.com/", "http://www.example.com/"},
		{"http://2130706433/", "http://127.0.0.1/"},
		{"http://0x7f.1/", "http://127.0.0.1/"},
		{"http://0177.0.0.1/", "http://127.0.0.1/"},
		{"http://127.1/", "http://127.0.0.1/"},
		{"http://[::FFFF:127.0.0.1]:8080/", "http://[::ffff:127.0.0.1]:8080/"},
		{"http://[0:0:0:0:0:0:0:1]:80/", "http://[::1]/"},
		{"http://under_score.example.com/", "http://under_score.example.com/"},
		{"https://example.com/a;b=c,d", "https://example.com/a;b=c,d"},
		{"https://example.com/a:b@c", "https://example.com/a:b@c"},
	}
	opts := DefaultOptions()
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Canonicalize(tt.in, opts)
			if err != nil {
				t.Fatalf("Canonicalize(%q): unexpected error %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("Canonicalize(%q) = %q, want %q", tt.in, got, tt.want)
			}
			again, err := Canonicalize(got, opts)
			if err != nil || again != got {
				t.Errorf("Canonicalize(%q) = %q, %v; want it unchanged (idempotence)", got, again, err)
			}
		})
	}
}

// TestSpellingsOfOnePage checks that many spellings of one page collapse into
// one canonical URL, which is what keeps the crawler from fetching it twice.
func TestSpellingsOfOnePage(t *testing.T) {
	spellings := []string{
		"http://example.com/docs/page?a=1&b=2",
		"HTTP://EXAMPLE.COM/docs/page?a=1&b=2",
		"http://example.com:80/docs/page?a=1&b=2",
		"http://example.com/docs/page?b=2&a=1",
		"http://example.com/docs/page?a=1&b=2#section-3",
		"http://example.com/docs/./page?a=1&b=2",
		"http://example.com/docs/x/../page?a=1&b=2",
		"http://example.com/docs/%70age?a=1&b=2",
		"http://example.com/%64ocs/page?%61=1&b=2",
		"http://example.com/docs/page?a=1&b=2&utm_source=news&utm_medium=mail",
		"http://example.com/docs/page?fbclid=abc&a=1&b=2",
		"http://example.com/docs/page?a=1&&b=2&",
		"http://www.example.com/docs/page?a=1&b=2",
		"http://WWW.Example.Com./docs/page/?a=1&b=2",
		"http://example.com/docs/page/index.html?a=1&b=2",
	}
	opts := DefaultOptions()
	opts.StripWWW = true
	opts.TrailingSlash = StripTrailingSlash
	opts.IndexNames = DefaultIndexNames
	want := "http://example.com/docs/page?a=1&b=2"
	for _, s := range spellings {
		got, err := Canonicalize(s, opts)
		if err != nil {
			t.Errorf("Canonicalize(%q): %v", s, err)
			continue
		}
		if got != want {
			t.Errorf("Canonicalize(%q) = %q, want %q", s, got, want)
		}
	}
}

func TestCanonicalizeOptions(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		in   string
		want string
	}{
		{"www stripped", Options{StripWWW: true}, "http://www.example.com/a", "http://example.com/a"},
		{"www kept when nothing remains", Options{StripWWW: true}, "http://www.com/a", "http://www.com/a"},
		{"www only as first label", Options{StripWWW: true}, "http://a.www.example.com/", "http://a.www.example.com/"},
		{"trailing slash stripped", Options{TrailingSlash: StripTrailingSlash}, "http://example.com/a/", "http://example.com/a"},
		{"many trailing slashes stripped", Options{TrailingSlash: StripTrailingSlash}, "http://example.com/a///", "http://example.com/a"},
		{"root slash kept", Options{TrailingSlash: StripTrailingSlash}, "http://example.com/", "http://example.com/"},
		{"index kept by default", Options{}, "http://example.com/d/index.html", "http://example.com/d/index.html"},
		{"index dropped", Options{IndexNames: DefaultIndexNames}, "http://example.com/d/index.html", "http://example.com/d/"},
		{"index dropped case-insensitively", Options{IndexNames: DefaultIndexNames}, "http://example.com/INDEX.HTM", "http://example.com/"},
		{"index not matched inside a name", Options{IndexNames: DefaultIndexNames}, "http://example.com/myindex.html", "http://example.com/myindex.html"},
		{"index and slash", Options{IndexNames: DefaultIndexNames, TrailingSlash: StripTrailingSlash}, "http://example.com/a/index.html/", "http://example.com/a"},
		{"zero options keep tracking params", Options{}, "http://example.com/?utm_source=x", "http://example.com/?utm_source=x"},
		{"custom params", Options{StripParams: []string{"sessionid", "sort_*"}}, "http://example.com/?SessionID=1&sort_by=a&q=x", "http://example.com/?q=x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Canonicalize(tt.in, tt.opts)
			if err != nil {
				t.Fatalf("Canonicalize(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("Canonicalize(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestCanonicalizeErrors(t *testing.T) {
	tests := []struct {
		in   string
		want error
	}{
		{"ftp://example.com/", ErrScheme},
		{"mailto:someone@example.com", ErrScheme},
		{"javascript:alert(1)", ErrScheme},
		{"file:///etc/passwd", ErrScheme},
		{"//example.com/a", ErrScheme},
		{"/relative/path", ErrScheme},
		{"", ErrScheme},
		{"http:example.com", ErrHost},
		{"http:///a", ErrHost},
		{"http://:80/", ErrHost},
		{"http://a..b/", ErrHost},
		{"http://example.com:99999/", ErrInvalid},
		{"http://exa mple.com/", ErrInvalid},
		{"http://[::1/", ErrInvalid},
		{"http://1.2.3.4.5/", ErrHost},
		{"http://256.1.1.1/", ErrHost},
		{"http://0x1g.example/", nil}, // not numeric: an ordinary (odd) name
		// The canonical URL must fit the documents.url column.
		{"http://example.com/" + strings.Repeat("a", MaxBytes-len("http://example.com/")), nil},
		{"http://example.com/" + strings.Repeat("a", MaxBytes-len("http://example.com/")+1), ErrTooLong},
		{"http://example.com/?q=" + strings.Repeat("%C3%A9", 400), ErrTooLong},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Canonicalize(tt.in, DefaultOptions())
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Canonicalize(%q): unexpected error %v", tt.in, err)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("Canonicalize(%q) = %q, %v; want error %v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	base, _ := url.Parse("http://Example.com/docs/guide/intro.html?x=1#top")
	tests := []struct {
		ref, want string
		err       error
	}{
		{"next.html", "http://example.com/docs/guide/next.html", nil},
		{"../api/", "http://example.com/docs/api/", nil},
		{"./", "http://example.com/docs/guide/", nil},
		{"/abs?b=1&a=2#f", "http://example.com/abs?a=2&b=1", nil},
		{"?page=2", "http://example.com/docs/guide/intro.html?page=2", nil},
		{"#section", "http://example.com/docs/guide/intro.html?x=1", nil},
		{"//other.org/p", "http://other.org/p", nil},
		{"https://other.org:443/", "https://other.org/", nil},
		{"mailto:a@b.c", "", ErrScheme},
		{"javascript:void(0)", "", ErrScheme},
	}
	for _, tt := range tests {
		t.Run(tt.ref, func(t *testing.T) {
			got, err := Resolve(base, tt.ref, DefaultOptions())
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("Resolve(%q) = %q, %v; want error %v", tt.ref, got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("Resolve(%q) = %q, %v; want %q", tt.ref, got, err, tt.want)
			}
		})
	}
}

func TestInScope(t *testing.T) {
	tests := []struct {
		u       string
		domains []string
		want    bool
	}{
		{"http://example.com/", []string{"example.com"}, true},
		{"http://docs.example.com/", []string{"example.com"}, true},
		{"http://a.b.example.com/", []string{"example.com"}, true},
		{"http://EXAMPLE.com./", []string{"Example.COM"}, true},
		{"http://example.com/", []string{"www.example.com"}, true},
		{"http://www.example.com/", []string{"example.com"}, true},
		{"http://api.example.com/", []string{"www.example.com"}, false},
		{"http://notexample.com/", []string{"example.com"}, false},
		{"http://example.com.evil.org/", []string{"example.com"}, false},
		{"http://example.org/", []string{"example.com"}, false},
		{"http://docs.example.com/", []string{"*.example.com"}, true},
		{"http://docs.example.com/", []string{".example.com"}, true},
		{"http://bücher.example/", []string{"xn--bcher-kva.example"}, true},
		{"http://127.0.0.1:8080/", []string{"127.0.0.1"}, true},
		{"http://2130706433/", []string{"127.0.0.1"}, true},
		{"http://1.127.0.0.1/", []string{"127.0.0.1"}, false},
		{"http://example.com/", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.u, func(t *testing.T) {
			u, err := url.Parse(tt.u)
			if err != nil {
				t.Fatal(err)
			}
			if got := InScope(u, tt.domains); got != tt.want {
				t.Errorf("InScope(%q, %q) = %v, want %v", tt.u, tt.domains, got, tt.want)
			}
		})
	}
}

func TestParseHostIP(t *testing.T) {
	tests := []struct {
		host string
		want string // "" means not an IP
	}{
		{"127.0.0.1", "127.0.0.1"},
		{"2130706433", "127.0.0.1"},
		{"0x7f000001", "127.0.0.1"},
		{"0X7F.0.0.1", "127.0.0.1"},
		{"0x7f.1", "127.0.0.1"},
		{"017700000001", "127.0.0.1"},
		{"0177.0.0.01", "127.0.0.1"},
		{"127.1", "127.0.0.1"},
		{"127.0.1", "127.0.0.1"},
		{"127.0.0.1.", "127.0.0.1"},
		{"0", "0.0.0.0"},
		{"0x", "0.0.0.0"},
		{"169.254.43518", "169.254.169.254"},
		{"2852039166", "169.254.169.254"},
		{"[::1]", "::1"},
		{"::ffff:127.0.0.1", "::ffff:127.0.0.1"},
		{"example.com", ""},
		{"1.example", ""},
		{"4294967296", ""},
		{"256.0.0.1", ""},
		{"08", ""},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			a, ok := ParseHostIP(tt.host)
			got := ""
			if ok {
				got = a.String()
			}
			if got != tt.want {
				t.Errorf("ParseHostIP(%q) = %q, want %q", tt.host, got, tt.want)
			}
		})
	}
}
