package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

// TestResolveErrorHidesTheResolver: a failed lookup reads "could not resolve
// host X (why)" without the DNS server's address, and still unwraps to the
// *net.DNSError (so a timeout is a timeout). The errors are constructed: no
// lookup is made.
func TestResolveErrorHidesTheResolver(t *testing.T) {
	const server = "10.255.255.53:53"
	for _, tc := range []struct {
		err     error
		want    string
		timeout bool
	}{
		{&net.DNSError{Err: "no such host", Name: "bücher.invalid", Server: server, IsNotFound: true},
			"could not resolve host bücher.invalid (no such host)", false},
		{&net.DNSError{Err: "i/o timeout", Name: "slow.example", Server: server, IsTimeout: true},
			"could not resolve host slow.example (the DNS server did not answer in time)", true},
		{&net.DNSError{Err: "server misbehaving", Name: "odd.example", Server: server, IsTemporary: true},
			"could not resolve host odd.example (server misbehaving)", false},
		{&net.DNSError{Err: "read udp 10.0.0.2:4242->10.255.255.53:53: connection refused", Name: "odd.example", Server: server},
			"could not resolve host odd.example (read udp 10.0.0.2:4242->the DNS server: connection refused)", false},
		{&net.DNSError{Err: "lookup failed at 10.255.255.53", Name: "odd.example", Server: server},
			"could not resolve host odd.example (lookup failed at the DNS server)", false},
		{fmt.Errorf("lookup: %w", context.DeadlineExceeded), "could not resolve host odd.example (lookup: context deadline exceeded)", false},
	} {
		host := "odd.example"
		var de *net.DNSError
		if errors.As(tc.err, &de) {
			host = de.Name
		}
		err := error(&ResolveError{Host: host, Err: tc.err})
		if got := err.Error(); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
		if strings.Contains(err.Error(), "10.255.255.53") {
			t.Errorf("%q shows the resolver's address", err.Error())
		}
		if tc.timeout {
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				t.Errorf("%q: not recognised as a timeout", err.Error())
			}
		}
		if de != nil && !errors.As(err, new(*net.DNSError)) {
			t.Errorf("%q does not unwrap to the *net.DNSError", err.Error())
		}
	}
}

// TestDialReportsLookupFailureWithoutTheResolver: DialContext answers a failed
// lookup with a *ResolveError. The lookup is a fake that fails at once: nothing
// is resolved or dialled.
func TestDialReportsLookupFailureWithoutTheResolver(t *testing.T) {
	g, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	var asked string
	g.lookup = func(_ context.Context, _, host string) ([]netip.Addr, error) {
		asked = host
		return nil, &net.DNSError{Err: "no such host", Name: host, Server: "10.255.255.53:53", IsNotFound: true}
	}
	conn, err := g.DialContext(context.Background(), "tcp", "docs.invalid:80")
	if conn != nil {
		conn.Close()
		t.Fatal("dialled a connection")
	}
	var re *ResolveError
	if asked != "docs.invalid" || !errors.As(err, &re) || err.Error() != "could not resolve host docs.invalid (no such host)" {
		t.Errorf("got %v (lookup of %q), want a *ResolveError reading %q", err, asked, "could not resolve host docs.invalid (no such host)")
	}
}

// TestBlockedNameHidesTheAddress: a name that resolves to an internal address
// is refused without saying which address it resolved to (whoever may submit
// URLs would learn the address of every internal name); the address stays in
// the error for logs. Literals and localhost keep theirs. The lookup is a fake:
// nothing is resolved or dialled.
func TestBlockedNameHidesTheAddress(t *testing.T) {
	g, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	g.lookup = func(context.Context, string, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("172.18.0.2")}, nil
	}
	conn, err := g.DialContext(context.Background(), "tcp", "mariadb:3306")
	if conn != nil {
		conn.Close()
		t.Fatal("dialled a connection")
	}
	var be *BlockedError
	want := "mariadb resolves to an internal address: private (172.16.0.0/12)"
	if !errors.As(err, &be) || err.Error() != want || be.IP != netip.MustParseAddr("172.18.0.2") {
		t.Errorf("got %v, want %q with the address kept in IP", err, want)
	}
	for host, want := range map[string]string{
		"localhost": "localhost resolves to 127.0.0.1, an internal address: loopback (127.0.0.0/8)",
		"0x7f.1":    "0x7f.1 resolves to 127.0.0.1, an internal address: loopback (127.0.0.0/8)",
		"10.0.0.5":  "10.0.0.5 is an internal address: private (10.0.0.0/8)",
		"[fd00::1]": "fd00::1 is an internal address: unique-local (fc00::/7)",
	} {
		u, _ := url.Parse("http://" + host + "/")
		if err := g.CheckURL(u); err == nil || err.Error() != want {
			t.Errorf("CheckURL(%s): got %v, want %q", host, err, want)
		}
	}
}
