// Package canon turns the many spellings of a web address into one canonical
// URL, so the crawler fetches and stores every page once.
//
// Canonicalize applies, in order: only http and https are accepted (anything
// else is ErrScheme); user info and the fragment are dropped; scheme and host
// are lower-cased; an internationalised host becomes punycode and a trailing
// dot on the host is removed; numeric IPv4 spellings (2130706433, 0x7f.1,
// 0177.0.0.1, 127.1) and IPv6 literals are written in their standard form;
// the default port (80 for http, 443 for https) is removed; percent-encoding is
// normalised (upper-case hex, unreserved characters decoded, characters that
// must be escaped escaped); dot segments are resolved; tracking parameters
// (utm_*, gclid, fbclid, ...) are removed; the remaining query parameters are
// sorted by name then value; an empty query is removed.
//
// Options adds the choices that depend on the site: treating www.example.com
// and example.com as one host, dropping a trailing slash, and treating
// /dir/index.html as /dir/. They are off by default because /a and /a/ can be
// different pages on a real server.
//
// Seed is Canonicalize for a URL a person typed (a crawl's start URL, a page to
// index): a URL with a user name or password or a control character is refused
// instead of cleaned, and its errors (*InputError) say what to change without
// repeating the URL.
//
// Canonicalize is idempotent: Canonicalize(Canonicalize(x)) == Canonicalize(x)
// (checked by FuzzCanonicalize). InScope decides whether a URL belongs to a list
// of allowed domains (subdomains included). The id of a canonical URL is
// docid.FromURL (pkg/docid).
package canon
