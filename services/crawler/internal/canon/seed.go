package canon

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ErrUserInfo means a URL a person gave carries a user name or password
// (http://user:pass@host/): the crawler sends no credentials, and dropping them
// silently would crawl a different page than the one asked for.
var ErrUserInfo = errors.New("URL with a user name or password")

// InputError is a URL a person gave (a crawl's start URL, a page to index) that
// cannot be used. Its message says what to change, without repeating the URL
// (it may hold a password or be thousands of characters long) or naming a step
// of the crawler. It wraps the sentinel that classifies it (ErrScheme, ErrHost,
// ErrInvalid, ErrTooLong, ErrUserInfo).
type InputError struct {
	Msg string
	Err error
}

func (e *InputError) Error() string { return e.Msg }

// Unwrap returns the sentinel.
func (e *InputError) Unwrap() error { return e.Err }

func inputErr(sentinel error, format string, args ...any) *InputError {
	return &InputError{Msg: fmt.Sprintf(format, args...), Err: sentinel}
}

// Seed is Canonicalize for a URL a person typed, not a link found in a page: it
// is stricter (a URL with credentials or a control character is refused instead
// of cleaned, as a browser would clean a link) and its errors are *InputError
// that say what to change. Surrounding white space is ignored.
func Seed(raw string, opts Options) (string, error) {
	s := strings.TrimSpace(raw)
	if i := strings.IndexFunc(s, unicode.IsControl); i >= 0 {
		r, _ := utf8.DecodeRuneInString(s[i:])
		return "", inputErr(ErrInvalid, "the URL contains the control character U+%04X (after %d characters); remove it",
			r, utf8.RuneCountInString(s[:i]))
	}
	if len(s) > MaxBytes {
		return "", inputErr(ErrTooLong, "the URL is %s long; at most %d", sizeOf(s), MaxBytes)
	}
	if err := checkSeedForm(s); err != nil {
		return "", err
	}
	u, err := parse(s)
	if err != nil {
		return "", inputErr(ErrInvalid, "not a valid URL: %s", reasonAfter(err, ErrInvalid))
	}
	if u.User != nil { // checkSeedForm saw no '@' in the authority; belt and braces
		return "", inputErr(ErrUserInfo, userInfoMsg)
	}
	c, err := canonicalForm(u, s, opts)
	switch {
	case err == nil && len(c) > MaxBytes:
		return "", inputErr(ErrTooLong, "the URL is %d characters long once percent-encoded; at most %d", len(c), MaxBytes)
	case err == nil:
		return c, nil
	case errors.Is(err, ErrHost) && u.Host == "":
		return "", inputErr(ErrHost, "the URL has no host; write it as %s://host/path", strings.ToLower(u.Scheme))
	case errors.Is(err, ErrHost):
		return "", inputErr(ErrHost, "the URL's host is not valid: %s", reasonAfter(err, ErrHost))
	default:
		return "", inputErr(ErrInvalid, "not a valid URL: %s", reasonAfter(err, ErrInvalid))
	}
}

const userInfoMsg = "URLs with a user name or password are not supported; remove the user:password@ part " +
	"(the crawler fetches public pages only)"

// checkSeedForm checks the scheme and the authority of s before it is parsed, so
// that the common mistakes get an answer that says how to write the URL, and a
// password never reaches an error message.
func checkSeedForm(s string) error {
	scheme, rest, hasScheme := splitScheme(s)
	if !hasScheme {
		switch {
		case strings.HasPrefix(s, "//"):
			return inputErr(ErrScheme, "add http: or https: in front of the URL")
		case s == "" || strings.ContainsAny(s[:1], "/.?#"):
			return inputErr(ErrScheme, "a relative URL cannot be crawled; give an absolute URL starting with http:// or https://")
		default:
			return inputErr(ErrScheme, "the URL has no scheme; add http:// or https:// in front")
		}
	}
	lower := strings.ToLower(scheme)
	if lower != "http" && lower != "https" {
		if !strings.HasPrefix(rest, "//") && (strings.Contains(scheme, ".") || lower == "localhost" || startsWithDigit(rest)) {
			// docs.example.com:8080/x, localhost:8080/x: a host and a port
			return inputErr(ErrScheme, "the URL has no scheme; add http:// or https:// in front")
		}
		return inputErr(ErrScheme, "%s: URLs are not supported; use an http:// or https:// URL", clipScheme(lower))
	}
	if !strings.HasPrefix(rest, "//") {
		return inputErr(ErrHost, "the URL has no host; write it as %s://host/path", lower)
	}
	authority := rest[2:]
	if i := strings.IndexAny(authority, "/?#"); i >= 0 {
		authority = authority[:i]
	}
	if strings.Contains(authority, "@") {
		return inputErr(ErrUserInfo, userInfoMsg)
	}
	return nil
}

// splitScheme splits s at the colon that ends its scheme (RFC 3986 3.1: a
// letter, then letters, digits, '+', '-' or '.').
func splitScheme(s string) (scheme, rest string, ok bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return s[:i], s[i+1:], true
		default:
			return "", s, false
		}
	}
	return "", s, false
}

func startsWithDigit(s string) bool { return s != "" && s[0] >= '0' && s[0] <= '9' }

func clipScheme(s string) string {
	if len(s) > 20 {
		return s[:20] + "…"
	}
	return s
}

// sizeOf says how long s is: in characters when it is ASCII, else in bytes.
func sizeOf(s string) string {
	if ascii(s) {
		return fmt.Sprintf("%d characters", len(s))
	}
	return fmt.Sprintf("%d bytes (UTF-8)", len(s))
}

// reasonAfter is err's message after the sentinel's text, the part that
// describes the input.
func reasonAfter(err, sentinel error) string {
	msg := err.Error()
	if i := strings.Index(msg, sentinel.Error()); i >= 0 {
		if r := strings.TrimLeft(msg[i+len(sentinel.Error()):], ": "); r != "" {
			return r
		}
	}
	return sentinel.Error()
}
