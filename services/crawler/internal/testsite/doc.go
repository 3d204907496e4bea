// Package testsite serves a generated website for crawler tests, on an
// httptest server, with every difficulty a polite and exact crawler must
// handle, and knows the right answer.
//
// The site has a home page, an article index and articles, documentation
// pages, a deep chain of pages (for depth limits), and these traps:
//
//   - boilerplate on every HTML page (cookie banner, header, navigation,
//     sidebar, footer) around a distinct body that carries Marker(path);
//   - links to one page in many spellings: fragments, tracking parameters,
//     reordered query parameters, "./" and "../" segments, an upper-case
//     scheme, a trailing slash that redirects, and with Options.Host set an
//     upper-case host and a www. host;
//   - redirects: a 301 to a canonical page, a 302→307→301 chain, and a 302
//     out of scope;
//   - robots.txt disallowing /private/ with a Crawl-delay and a Sitemap line;
//     sitemap.xml listing pages including /orphan, linked from nowhere;
//   - an endless calendar (/calendar/2026/01 links the next month forever);
//   - /slow (delayed), /flaky (500 a few times, then 200), /busy (429 with
//     Retry-After, then 200), /missing (404), a PDF and a PNG, a plain-text
//     page, and /huge (larger than the crawler's body limit);
//   - Last-Modified and ETag on every page with If-Modified-Since and
//     If-None-Match answered by 304; Update changes a page, Remove makes it
//     410 Gone, Unlink takes it out of the link graph (no page's own links
//     and not the sitemap lead to it, while it still answers), for recrawl
//     and prune tests.
//
// Every request is counted (Hits, Requests), so tests can assert that no page
// was fetched twice, that robots.txt was obeyed and that Crawl-delay was
// honoured. CanonicalPages computes the exact set of canonical URLs a correct
// crawler stores for given depth, robots, sitemap and canonicalisation
// settings, following the engine's conventions: the seed at depth 0, sitemap
// URLs at depth 1, links at depth+1, a redirect target at the depth of the
// redirecting URL, failures retried until they succeed, and /huge skipped.
//
// With Options.Host (e.g. "site.test") links use that name and its www.
// variant; Resolver returns a *net.Resolver backed by a small DNS server that
// answers 127.0.0.1 for those names, to pass to netguard.Options.Resolver.
//
// NewShellSite serves a second, small site whose pages but one are empty
// shells that JavaScript renders in the browser (Docsify, a React build, a
// Next.js export, a page with only a <noscript>), for the crawler's
// script_rendered outcome and warning; ShellPages holds its pages.
package testsite
