package netguard

import (
	"errors"
	"fmt"
	"net"
	"strings"
)

// ResolveError is a host name that could not be resolved. Its message names the
// host and what went wrong but not the resolver's address, which a *net.DNSError
// includes ("lookup docs.example on 10.0.0.53:53: no such host"): the message
// reaches API clients in a job's last_errors and in page events, and the address
// of the operator's DNS server is none of their business. It unwraps to the
// resolver's error, so errors.As finds the *net.DNSError and timeouts are still
// recognised as timeouts.
type ResolveError struct {
	// Host is the name as requested.
	Host string
	// Err is the resolver's error.
	Err error
}

func (e *ResolveError) Error() string {
	return fmt.Sprintf("could not resolve host %s (%s)", e.Host, resolveReason(e.Err))
}

// Unwrap returns the resolver's error.
func (e *ResolveError) Unwrap() error { return e.Err }

// resolveReason says why a lookup failed, without the DNS server's address.
func resolveReason(err error) string {
	var de *net.DNSError
	switch {
	case !errors.As(err, &de):
		return err.Error()
	case de.IsNotFound:
		return "no such host"
	case de.IsTimeout:
		return "the DNS server did not answer in time"
	}
	reason := de.Err
	if de.Server != "" {
		reason = strings.ReplaceAll(reason, de.Server, "the DNS server")
		if host, _, err := net.SplitHostPort(de.Server); err == nil && host != "" {
			reason = strings.ReplaceAll(reason, host, "the DNS server")
		}
	}
	if reason == "" {
		reason = "DNS lookup failed"
	}
	return reason
}
