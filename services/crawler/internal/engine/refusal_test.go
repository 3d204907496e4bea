package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kgsearch/kgsearch/services/crawler/internal/fetch"
	"github.com/kgsearch/kgsearch/services/crawler/internal/netguard"
)

// TestSSRFRefusalInWords: a page the guard refuses when it is dialled (the
// host is a name, so it could not be refused when queued) ends skipped as
// ssrf with an error a user can read in the job's last_errors and page
// event: what was refused, why, and the setting that allows it; no internal
// package names and no wrapping of the fetch. Nothing is sent: localhost is
// refused before any connection.
func TestSSRFRefusalInWords(t *testing.T) {
	g, err := netguard.New(netguard.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := fetch.New(fetch.Config{UserAgent: "kgsearch-test/1.0", Guard: g, Timeout: 2 * time.Second, HostParallel: 1, MaxBodyBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Fetch(context.Background(), fetch.Request{URL: "http://localhost:1/page", IgnoreRobots: true})
	if err == nil {
		t.Fatal("fetch of localhost: no error, want the guard's refusal")
	}
	out := classifyFetchError(context.Background(), err)
	if out.reason != SkipSSRF || out.err == nil {
		t.Fatalf("outcome: %+v, want skipped as ssrf", out)
	}
	msg := out.err.Error()
	want := "localhost resolves to 127.0.0.1, an internal address: loopback (127.0.0.0/8); internal addresses are refused unless the operator allows them in CRAWLER_ALLOW_HOSTS"
	if msg != want {
		t.Errorf("refusal:\n got %q\nwant %q", msg, want)
	}
	for _, internal := range []string{"netguard", "fetch ", "Get \"", "dial"} {
		if strings.Contains(msg, internal) {
			t.Errorf("refusal %q names %q", msg, internal)
		}
	}
}
