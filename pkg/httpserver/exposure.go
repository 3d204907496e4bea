package httpserver

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// ErrNoAPIKeys is the refusal to serve on a non-loopback address without API keys.
var ErrNoAPIKeys = errors.New("refusing to start: the listen address is reachable from other machines " +
	"and no API keys are configured; set KGS_API_KEYS (comma-separated keys of at least 16 characters), " +
	"bind a loopback address such as 127.0.0.1, or set KGS_ALLOW_NO_AUTH=1 to serve without keys on purpose")

// IsLoopback reports whether a listen address (host:port) accepts connections from
// this machine only: a host in 127.0.0.0/8, ::1 or "localhost". An empty host, an
// unspecified address (0.0.0.0, ::), any other IP and any other name are not
// loopback: the service would be reachable from the network.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	return ip.Unmap().IsLoopback()
}

// CheckExposure is the one start-up rule every service applies: a service listening
// on a non-loopback address needs API keys unless the operator opted out explicitly
// (allowNoAuth, KGS_ALLOW_NO_AUTH). It returns an error naming KGS_API_KEYS.
func CheckExposure(addr string, keys []string, allowNoAuth bool) error {
	if len(keys) > 0 || allowNoAuth || IsLoopback(addr) {
		return nil
	}
	return fmt.Errorf("%w (listen address %q)", ErrNoAPIKeys, addr)
}

// MinAPIKeyLen is the shortest API key a service accepts.
const MinAPIKeyLen = 16

// CheckVars checks the settings of the server that every service reads the same
// way, naming the environment variable at fault: the listen address (addrVar, the
// service's own, e.g. SEARCH_ADDR) is host:port with a port in 0..65535, every key
// of KGS_API_KEYS is at least MinAPIKeyLen characters, and CheckExposure holds. It
// returns one error a problem; each service's config.Validate reports them with
// its own.
func (c Config) CheckVars(addrVar string) []error {
	var errs []error
	if err := checkAddr(c.Addr); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", addrVar, err))
	}
	for i, k := range c.APIKeys {
		if len(k) < MinAPIKeyLen {
			errs = append(errs, fmt.Errorf("KGS_API_KEYS: key %d is shorter than %d characters", i+1, MinAPIKeyLen))
		}
	}
	if err := CheckExposure(c.Addr, c.APIKeys, c.AllowNoAuth); err != nil {
		errs = append(errs, fmt.Errorf("KGS_API_KEYS: %w; %s=%q", err, addrVar, c.Addr))
	}
	return errs
}

// checkAddr reports why addr is not host:port with a port in 0..65535.
func checkAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not host:port", addr)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return fmt.Errorf("port %q is not a number in 0..65535", port)
	}
	return nil
}
