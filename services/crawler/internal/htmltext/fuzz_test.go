package htmltext

import (
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"
)

func FuzzExtract(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("testdata", "article.html")); err == nil {
		f.Add(b, "text/html")
	}
	f.Add([]byte("<h1>A</h1><h3>B</h3><p>x<br>y</p><h2>C</h2><pre>\n a\n</pre><table><tr><td><h2>in cell</h2></td></tr></table>"), "text/html")
	f.Add([]byte("<ul><li>a<ul><li>b</li></ul></li></ul><dl><dt>t<dd>d</dl><a href='javascript:x'>j</a><a href='//h/p#f'>l</a>"), "")
	f.Add([]byte("plain\r\ntext\xff"), "text/plain; charset=utf-8")
	f.Add([]byte("\xef\xbb\xbf<html lang='zz-ZZ'><meta charset=shift_jis><title>\x82\xa0</title>"), "text/html")
	base, _ := url.Parse("http://example.com/dir/page.html")
	f.Fuzz(func(t *testing.T, body []byte, contentType string) {
		p, err := Extract(body, base, contentType, nil)
		if err != nil {
			return
		}
		if !utf8.ValidString(p.Text) {
			t.Fatalf("text is not valid UTF-8: %q", p.Text)
		}
		checkInvariants(t, p)
		for _, l := range p.Links {
			u, err := url.Parse(l.URL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Fragment != "" {
				t.Fatalf("bad link %q", l.URL)
			}
		}
	})
}
