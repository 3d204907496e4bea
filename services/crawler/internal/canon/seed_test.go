package canon

import (
	"errors"
	"strings"
	"testing"
)

func TestSeedAccepts(t *testing.T) {
	for in, want := range map[string]string{
		"  https://Docs.Example.com/guide?utm_source=x  ": "https://docs.example.com/guide",
		"http://127.0.0.1:8099/library/":                  "http://127.0.0.1:8099/library/",
		"HTTP://[::1]:8080/a":                             "http://[::1]:8080/a",
		"https://bücher.example/a b":                      "https://xn--bcher-kva.example/a%20b",
		"http://example.com/mail@home":                    "http://example.com/mail@home", // '@' in the path is not user info
	} {
		got, err := Seed(in, DefaultOptions())
		if err != nil || got != want {
			t.Errorf("Seed(%q): got %q, %v; want %q", in, got, err, want)
		}
	}
}

// TestSeedRefuses: each mistake is refused with a message that says what to do,
// classified by its sentinel, never repeating a password or naming an internal step.
func TestSeedRefuses(t *testing.T) {
	long := "http://example.com/" + strings.Repeat("a", 5000)
	for _, tc := range []struct {
		in       string
		sentinel error
		want     string
	}{
		{"http://user:s3cret@example.com/", ErrUserInfo, "user name or password are not supported"},
		{"https://user@example.com/a", ErrUserInfo, "user name or password"},
		{"http://u:s3cret@127.0.0.1:8099/x/y@z", ErrUserInfo, "remove the user:password@ part"},
		{"http://127.0.0.1:8099/\x00", ErrInvalid, "control character U+0000"},
		{"http://127.0.0.1:8099/a\x7fb", ErrInvalid, "control character U+007F"},
		{"http://exa\tmple.com/", ErrInvalid, "control character U+0009"},
		{"file:///etc/passwd", ErrScheme, "file: URLs are not supported; use an http:// or https:// URL"},
		{"javascript:alert(1)", ErrScheme, "javascript: URLs are not supported"},
		{"data:text/html,hi", ErrScheme, "data: URLs are not supported"},
		{"ftp://example.com/", ErrScheme, "ftp: URLs are not supported"},
		{"127.0.0.1:8099/x", ErrScheme, "add http:// or https:// in front"},
		{"docs.example.com/guide", ErrScheme, "add http:// or https:// in front"},
		{"docs.example.com:8080/guide", ErrScheme, "add http:// or https:// in front"},
		{"localhost:8099/x", ErrScheme, "add http:// or https:// in front"},
		{"//example.com/a", ErrScheme, "add http: or https: in front"},
		{"/docs/", ErrScheme, "relative URL"},
		{"http:example.com", ErrHost, "write it as http://host/path"},
		{"https:///path", ErrHost, "has no host; write it as https://host/path"},
		{"http://exa_mple..com/", ErrHost, "host is not valid"},
		{"http://a b.example/", ErrInvalid, "not a valid URL"},
		{"http://example.com:99999/", ErrInvalid, "not a valid URL"},
		{long, ErrTooLong, "the URL is 5019 characters long; at most 2048"},
		{"http://example.com/" + strings.Repeat("é", 700), ErrTooLong, "once percent-encoded; at most 2048"},
	} {
		_, err := Seed(tc.in, DefaultOptions())
		var ie *InputError
		if !errors.As(err, &ie) || !errors.Is(err, tc.sentinel) {
			t.Errorf("Seed(%.60q): got %v, want an *InputError wrapping %v", tc.in, err, tc.sentinel)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, tc.want) {
			t.Errorf("Seed(%.60q): got %q, want it to contain %q", tc.in, msg, tc.want)
		}
		for _, bad := range []string{"s3cret", "canonicalize", "first path segment", long[:40]} {
			if strings.Contains(msg, bad) {
				t.Errorf("Seed(%.60q): message %q contains %q", tc.in, msg, bad)
			}
		}
	}
}
