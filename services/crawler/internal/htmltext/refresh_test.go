package htmltext

import (
	"net/url"
	"testing"
)

func TestExtractMetaRefresh(t *testing.T) {
	const pageURL = "https://docs.example/guide/old.html"
	for _, tc := range []struct{ content, want string }{
		{"0; url=new.html", "https://docs.example/guide/new.html"},
		{"0;URL='/v2/new.html#part'", "https://docs.example/v2/new.html"},
		{"1, url='https://other.example/x'", "https://other.example/x"},
		{"5;url=new.html", "https://docs.example/guide/new.html"},
		{"0; new.html", "https://docs.example/guide/new.html"}, // "url=" left out
		{"6; url=new.html", ""}, // a page that reloads now and then
		{"300; url=new.html", ""},
		{"0", ""},                   // reloads itself
		{"0; url=old.html#top", ""}, // the page itself
		{"0; url=javascript:alert(1)", ""},
		{"0; url=", ""},
		{"soon; url=new.html", ""},
		{"-1; url=new.html", ""},
	} {
		body := `<html><head><meta http-equiv="Refresh" content="` + tc.content + `"><title>Moved</title></head>` +
			`<body><p>This page has moved.</p></body></html>`
		u, _ := url.Parse(pageURL)
		p, err := Extract([]byte(body), u, "text/html", nil)
		if err != nil {
			t.Fatal(err)
		}
		if p.Refresh != tc.want {
			t.Errorf("content %q: Refresh %q, want %q", tc.content, p.Refresh, tc.want)
		}
	}
	// A refresh inside <noscript> is for browsers without scripts (the parser,
	// like a browser with scripts, reads it as text): the page is a page.
	u, _ := url.Parse(pageURL)
	p, _ := Extract([]byte(`<html><head><noscript><meta http-equiv="refresh" content="0; url=/nojs"></noscript>`+
		`<title>App</title></head><body><p>Text of the page.</p></body></html>`), u, "text/html", nil)
	if p.Refresh != "" {
		t.Errorf("a refresh inside <noscript>: Refresh %q, want none", p.Refresh)
	}
}
