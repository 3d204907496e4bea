package netguard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kgsearch/kgsearch/services/crawler/internal/testsite"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		ip      string
		blocked bool
	}{
		{"8.8.8.8", false},
		{"1.1.1.1", false},
		{"93.184.216.34", false},
		{"2606:4700:4700::1111", false},
		{"::ffff:8.8.8.8", false},
		{"64:ff9b::808:808", false},
		{"2002:808:808::1", false},
		{"0.0.0.0", true},
		{"0.1.2.3", true},
		{"10.1.2.3", true},
		{"100.64.0.1", true},
		{"100.127.255.254", true},
		{"127.0.0.1", true},
		{"127.255.255.254", true},
		{"169.254.169.254", true},
		{"172.16.0.1", true},
		{"172.31.255.255", true},
		{"192.0.0.8", true},
		{"192.0.2.1", true},
		{"192.168.0.1", true},
		{"198.18.0.1", true},
		{"198.51.100.7", true},
		{"203.0.113.9", true},
		{"224.0.0.251", true},
		{"239.255.255.250", true},
		{"240.0.0.1", true},
		{"255.255.255.255", true},
		{"::", true},
		{"::1", true},
		{"::127.0.0.1", true},
		{"::ffff:127.0.0.1", true},
		{"::ffff:169.254.169.254", true},
		{"::ffff:10.0.0.1", true},
		{"64:ff9b::7f00:1", true},
		{"64:ff9b::a9fe:a9fe", true},
		{"64:ff9b:1::1", true},
		{"2002:7f00:1::", true},
		{"2002:c0a8:101::1", true},
		{"2001::1", true},
		{"2001:db8::1", true},
		{"3fff::1", true},
		{"100::1", true},
		{"fc00::1", true},
		{"fd12:3456::1", true},
		{"fe80::1", true},
		{"fe80::1%eth0", true},
		{"fec0::1", true},
		{"ff02::1", true},
		{"4000::1", true},
	}
	for _, tt := range tests {
		t.Run(tt.ip, func(t *testing.T) {
			r := Classify(netip.MustParseAddr(tt.ip))
			if got := r != ""; got != tt.blocked {
				t.Errorf("Classify(%s) = %q, blocked %v; want blocked %v", tt.ip, r, got, tt.blocked)
			}
		})
	}
}

// internalSpellings returns URLs that all point at an internal address; port
// is the port of a live test server on 127.0.0.1 so that a guard that failed
// would really connect.
func internalSpellings(port string) []string {
	hostPorts := []string{
		"127.0.0.1", "localhost", "LOCALHOST", "foo.localhost", "127.0.0.1.",
		"127.1", "127.0.1", "127.127.127.127", "2130706433", "0x7f000001",
		"0X7F000001", "0x7f.0x0.0x0.0x1", "0x7f.1", "017700000001", "0177.0.0.1",
		"0177.1", "00000177.0.0.1", "0", "0.0.0.0", "0x0", "[::1]",
		"[0:0:0:0:0:0:0:1]", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[::127.0.0.1]",
		"[::]", "[64:ff9b::7f00:1]", "[2002:7f00:1::]", "①②⑦.0.0.1", "127.0.0.1%2e",
	}
	var urls []string
	for _, h := range hostPorts {
		if strings.Contains(h, "%") {
			continue // not accepted by net/url: covered by the parse error
		}
		urls = append(urls, "http://"+h+":"+port+"/secret")
	}
	// Addresses nothing listens on here: a guard that failed would time out
	// or be refused by the kernel instead of returning a BlockedError.
	urls = append(urls,
		"http://169.254.169.254/latest/meta-data/",
		"http://2852039166/latest/meta-data/",
		"http://0251.0376.0251.0376/",
		"http://0xa9fea9fe/",
		"http://169.254.43518/",
		"http://[::ffff:169.254.169.254]/",
		"http://[fe80::1]/", "http://[fd00::1]/", "http://[fc00::]/",
		"http://10.0.0.1/", "http://012.1/", "http://192.168.1.1:8080/",
		"http://172.16.0.1/", "http://100.64.0.1/", "http://224.0.0.1/",
		"http://255.255.255.255/", "http://[ff02::1]/", "http://198.18.0.1/",
	)
	return urls
}

func countingServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "internal secret")
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func portOf(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Port()
}

func guardClient(t *testing.T, opts Options) *http.Client {
	t.Helper()
	if opts.DialTimeout == 0 {
		opts.DialTimeout = 2 * time.Second
	}
	tr, err := NewTransport(opts)
	if err != nil {
		t.Fatalf("NewTransport: %v", err)
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 5 * time.Second}
}

func TestInternalSpellingsRefusedAtDial(t *testing.T) {
	srv, hits := countingServer(t)
	client := guardClient(t, Options{})
	urls := internalSpellings(portOf(t, srv))
	if len(urls) < 25 {
		t.Fatalf("battery has %d spellings, want at least 25", len(urls))
	}
	for _, u := range urls {
		t.Run(u, func(t *testing.T) {
			before := hits.Load()
			resp, err := client.Get(u)
			if err == nil {
				resp.Body.Close()
				t.Fatalf("GET %s succeeded with %s, want a BlockedError", u, resp.Status)
			}
			var be *BlockedError
			if !errors.As(err, &be) || !errors.Is(err, ErrBlocked) {
				t.Fatalf("GET %s: got error %v, want a *BlockedError", u, err)
			}
			if be.Reason == "" {
				t.Errorf("BlockedError for %s has no reason", u)
			}
			if got := hits.Load() - before; got != 0 {
				t.Errorf("server got %d requests, want 0", got)
			}
		})
	}
}

func TestInternalSpellingsRefusedByCheckURL(t *testing.T) {
	g, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, raw := range internalSpellings("8080") {
		t.Run(raw, func(t *testing.T) {
			u, err := url.Parse(raw)
			if err != nil {
				t.Fatal(err)
			}
			if err := g.CheckURL(u); !errors.Is(err, ErrBlocked) {
				t.Errorf("CheckURL(%s) = %v, want ErrBlocked", raw, err)
			}
		})
	}
	for _, raw := range []string{"http://example.com/", "https://8.8.8.8/", "http://[2606:4700:4700::1111]/", "http://1.example/"} {
		u, _ := url.Parse(raw)
		if err := g.CheckURL(u); err != nil {
			t.Errorf("CheckURL(%s) = %v, want nil", raw, err)
		}
	}
}

func TestAllowList(t *testing.T) {
	allowed, allowedHits := countingServer(t)
	other, otherHits := countingServer(t)
	ap, op := portOf(t, allowed), portOf(t, other)

	tests := []struct {
		name    string
		allow   []string
		url     string
		wantErr bool
	}{
		{"ip:port allows that port", []string{"127.0.0.1:" + ap}, "http://127.0.0.1:" + ap + "/", false},
		{"ip:port allows other spellings of it", []string{"127.0.0.1:" + ap}, "http://2130706433:" + ap + "/", false},
		{"ip:port refuses another port", []string{"127.0.0.1:" + ap}, "http://127.0.0.1:" + op + "/", true},
		{"ip:port allows the localhost name", []string{"127.0.0.1:" + ap}, "http://localhost:" + ap + "/", false},
		{"ip:port allows *.localhost", []string{"127.0.0.1:" + ap}, "http://docs.localhost:" + ap + "/", false},
		{"name:port allows the name", []string{"localhost:" + ap}, "http://localhost:" + ap + "/", false},
		{"name:port refuses the IP", []string{"localhost:" + ap}, "http://127.0.0.1:" + ap + "/", true},
		{"name:port refuses another port", []string{"localhost:" + ap}, "http://localhost:" + op + "/", true},
		{"bare ip allows any port", []string{"127.0.0.1"}, "http://127.0.0.1:" + op + "/", false},
		{"cidr", []string{"127.0.0.0/8"}, "http://127.0.0.1:" + op + "/", false},
		{"cidr elsewhere", []string{"10.0.0.0/8"}, "http://127.0.0.1:" + op + "/", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := guardClient(t, Options{Allow: tt.allow})
			before := allowedHits.Load() + otherHits.Load()
			resp, err := client.Get(tt.url)
			if tt.wantErr {
				if err == nil {
					resp.Body.Close()
					t.Fatalf("GET %s with allow %q succeeded, want ErrBlocked", tt.url, tt.allow)
				}
				if !errors.Is(err, ErrBlocked) {
					t.Fatalf("GET %s: got %v, want ErrBlocked", tt.url, err)
				}
				if got := allowedHits.Load() + otherHits.Load() - before; got != 0 {
					t.Errorf("servers got %d requests, want 0", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("GET %s with allow %q: %v", tt.url, tt.allow, err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(body) != "internal secret" {
				t.Errorf("body = %q, want %q", body, "internal secret")
			}
			g, _ := New(Options{Allow: tt.allow})
			u, _ := url.Parse(tt.url)
			if err := g.CheckURL(u); err != nil {
				t.Errorf("CheckURL(%s) = %v, want nil for an allowed URL", tt.url, err)
			}
		})
	}
}

func TestRedirectToInternalRefusedAtDial(t *testing.T) {
	target, targetHits := countingServer(t)
	tp := portOf(t, target)
	redirects := map[string]string{
		"/metadata":  "http://169.254.169.254/latest/meta-data/iam/",
		"/loopback":  "http://127.0.0.1:" + tp + "/",
		"/localhost": "http://localhost:" + tp + "/",
		"/decimal":   "http://2130706433:" + tp + "/",
		"/mapped":    "http://[::ffff:127.0.0.1]:" + tp + "/",
		"/chain":     "/loopback",
	}
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if to, ok := redirects[r.URL.Path]; ok {
			http.Redirect(w, r, to, http.StatusFound)
			return
		}
		fmt.Fprint(w, "public page")
	}))
	t.Cleanup(front.Close)
	client := guardClient(t, Options{Allow: []string{"127.0.0.1:" + portOf(t, front)}})

	resp, err := client.Get(front.URL + "/")
	if err != nil {
		t.Fatalf("GET allowed front page: %v", err)
	}
	resp.Body.Close()

	for path := range redirects {
		t.Run(path, func(t *testing.T) {
			resp, err := client.Get(front.URL + path)
			if err == nil {
				resp.Body.Close()
				t.Fatalf("GET %s followed the redirect to %s, want ErrBlocked", path, resp.Request.URL)
			}
			if !errors.Is(err, ErrBlocked) {
				t.Fatalf("GET %s: got %v, want ErrBlocked", path, err)
			}
		})
	}
	if got := targetHits.Load(); got != 0 {
		t.Errorf("internal target got %d requests, want 0", got)
	}
}

// TestResolvedAddressChecked uses a DNS server that answers 127.0.0.1 for
// every name: the name looks public, only the resolved address gives it away.
func TestResolvedAddressChecked(t *testing.T) {
	srv, hits := countingServer(t)
	dns := fakeDNS(t, netip.MustParseAddr("127.0.0.1"))
	resolver := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", dns)
	}}
	client := guardClient(t, Options{Resolver: resolver})
	u := "http://rebind.attacker.test:" + portOf(t, srv) + "/"
	resp, err := client.Get(u)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("GET %s succeeded, want ErrBlocked", u)
	}
	var be *BlockedError
	if !errors.As(err, &be) {
		t.Fatalf("GET %s: got %v, want *BlockedError", u, err)
	}
	if be.IP != netip.MustParseAddr("127.0.0.1") || be.Host != "rebind.attacker.test" {
		t.Errorf("BlockedError = %+v, want host rebind.attacker.test and IP 127.0.0.1", be)
	}
	if hits.Load() != 0 {
		t.Errorf("server got %d requests, want 0", hits.Load())
	}
	// The pre-check cannot know: it must not pretend to.
	g, _ := New(Options{Resolver: resolver})
	pu, _ := url.Parse(u)
	if err := g.CheckURL(pu); err != nil {
		t.Errorf("CheckURL(%s) = %v, want nil (names are checked at dial time)", u, err)
	}
}

func TestControlRefusesInternalSocketAddress(t *testing.T) {
	srv, hits := countingServer(t)
	g, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := &net.Dialer{Control: g.Control, Timeout: 2 * time.Second}
	_, err = d.Dial("tcp", "127.0.0.1:"+portOf(t, srv))
	if !errors.Is(err, ErrBlocked) {
		t.Fatalf("Dial with Control: got %v, want ErrBlocked", err)
	}
	if hits.Load() != 0 {
		t.Errorf("server got %d requests, want 0", hits.Load())
	}
}

func TestNewRejectsBadAllowEntries(t *testing.T) {
	for _, e := range []string{"10.0.0.0/33", "host:99999", "", "bad host:80", "a..b"} {
		t.Run(e, func(t *testing.T) {
			_, err := New(Options{Allow: []string{e}})
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q", e)) {
				t.Errorf("New(Allow: %q) = %v, want an error naming the entry", e, err)
			}
		})
	}
}

func TestSplitList(t *testing.T) {
	got := SplitList(" 127.0.0.1:8099, localhost:9000 10.0.0.0/8,,")
	want := []string{"127.0.0.1:8099", "localhost:9000", "10.0.0.0/8"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("SplitList = %q, want %q", got, want)
	}
}

// fakeDNS answers every A query with addr and every other query with no
// records. It returns the server's address.
func fakeDNS(t *testing.T, addr netip.Addr) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go testsite.ServeDNS(pc, func(string) (netip.Addr, bool) { return addr, true })
	return pc.LocalAddr().String()
}
