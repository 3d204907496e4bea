package canon

import "testing"

func BenchmarkCanonicalize(b *testing.B) {
	urls := []string{
		"http://example.com/docs/page.html",
		"HTTP://Example.COM:80/a/./b/../c/%7euser?utm_source=x&b=2&a=1#frag",
		"https://bücher.example/straße?q=a+b&fbclid=123",
	}
	opts := DefaultOptions()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Canonicalize(urls[i%len(urls)], opts); err != nil {
			b.Fatal(err)
		}
	}
}
