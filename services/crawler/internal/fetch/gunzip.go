package fetch

import (
	"bufio"
	"compress/gzip"
	"io"
	"net/http"
	"strings"
)

// gunzipTransport decompresses gzip bodies itself, as a stream, before colly
// sees them. colly gunzips a body when Content-Encoding names gzip without the
// transport having decoded it ("x-gzip", "gzip, identity"), when the
// Content-Type names gzip, or when the path ends in .xml.gz; it limits the
// compressed bytes to the body limit but reads the decompressed stream whole,
// so a 200 KB answer made it allocate 516 MB and a 10 MB one would take
// gigabytes: any crawled site could exhaust the crawler's memory. A response
// that leaves here is marked Uncompressed, so colly does not gunzip it again,
// and its body limit then bounds the decompressed bytes.
type gunzipTransport struct{ next http.RoundTripper }

func (t gunzipTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp.Uncompressed || !gzipped(resp) {
		return resp, err
	}
	br := bufio.NewReader(resp.Body)
	resp.Uncompressed = true
	if magic, err := br.Peek(2); err != nil || magic[0] != 0x1f || magic[1] != 0x8b {
		// Not gzip after all (a type or a name that says so): the bytes as sent.
		resp.Body = readCloser{br, resp.Body}
		return resp, nil
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		resp.Body = readCloser{br, resp.Body}
		return resp, nil //nolint:nilerr // an unreadable gzip header: the bytes as sent, as for a body that is not gzip
	}
	resp.Body = readCloser{zr, resp.Body}
	resp.Header.Del("Content-Encoding")
	resp.Header.Del("Content-Length")
	resp.ContentLength = -1
	return resp, nil
}

// gzipped reports whether colly would gunzip resp (its http_backend's test).
func gzipped(resp *http.Response) bool {
	enc := strings.ToLower(resp.Header.Get("Content-Encoding"))
	if strings.Contains(enc, "gzip") {
		return true
	}
	if enc == "" && strings.Contains(strings.ToLower(resp.Header.Get("Content-Type")), "gzip") {
		return true
	}
	return resp.Request != nil && strings.HasSuffix(strings.ToLower(resp.Request.URL.Path), ".xml.gz")
}

// readCloser reads from r and closes c.
type readCloser struct {
	r io.Reader
	c io.Closer
}

func (rc readCloser) Read(p []byte) (int, error) { return rc.r.Read(p) }
func (rc readCloser) Close() error               { return rc.c.Close() }
