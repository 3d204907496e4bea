package netguard

import (
	"errors"
	"net/url"
	"testing"

	"github.com/kgsearch/kgsearch/services/crawler/internal/canon"
)

// FuzzCheckURL checks that the pre-check never panics and agrees with
// Classify on every host that is an IP address in some spelling.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{"http://0x7f.1/", "http://[::ffff:127.0.0.1]:80/", "http://example.com/", "http://2852039166/", "http://①②⑦.0.0.1/", "http://[fe80::1%25eth0]/", "http://localhost:1/"} {
		f.Add(s)
	}
	g, err := New(Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		err = g.CheckURL(u)
		if err != nil && !errors.Is(err, ErrBlocked) && u.Port() == "" {
			t.Fatalf("CheckURL(%q) = %v: want nil or ErrBlocked", raw, err)
		}
		if ip, ok := canon.ParseHostIP(u.Hostname()); ok && Classify(ip) != "" && err == nil {
			t.Fatalf("CheckURL(%q) = nil, but %s is %s", raw, ip, Classify(ip))
		}
	})
}
