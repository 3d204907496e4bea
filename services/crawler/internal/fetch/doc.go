// Package fetch downloads pages for the crawler politely and safely.
//
// A Fetcher wraps a colly collector whose HTTP transport dials through netguard
// (so internal addresses are refused at connect time, whatever a redirect or a
// DNS answer says). On top of colly it adds what a resumable, multi-process
// crawler needs per request rather than per in-memory queue:
//
//   - robots.txt, fetched once per host with our user agent and cached (an hour,
//     at most 256 hosts); its Disallow rules, Crawl-delay and Sitemap lines are
//     used (colly's own robots check is switched off because it ignores
//     Crawl-delay); a file with more than 1000 pattern rules refuses its host;
//   - per-host politeness: at most N requests in flight per host and a minimum
//     gap between request starts (the larger of the configured delay and the
//     host's Crawl-delay, capped), forgotten for hosts idle for the robots.txt
//     cache's lifetime;
//   - retries with exponential backoff on 429, 5xx and timeouts, honouring
//     Retry-After;
//   - a body size limit and a content-type filter applied on the response
//     headers, before the body is read; the limit holds for the decompressed
//     bytes of gzip bodies, which gunzipTransport inflates as a stream (colly
//     would inflate some of them whole);
//   - redirects are not followed inside the HTTP client: a 3xx is returned with
//     its Location so the caller can canonicalise the target, check its scope
//     and queue it like any other link (each URL is then fetched once);
//   - conditional GET (If-None-Match, If-Modified-Since) for recrawls.
//
// Sitemaps (urlset and sitemapindex, gzip accepted) are read by Sitemap.
package fetch
