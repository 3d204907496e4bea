package config

import (
	"strings"
	"testing"

	"github.com/kgsearch/kgsearch/pkg/httpserver"
)

// The search service configured on 0.0.0.0 without keys refuses to start, naming
// KGS_API_KEYS; keys or the explicit opt-out let it start. Nothing binds.
func TestRefusesNonLoopbackWithoutKeys(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:8080", ":8080", "[::]:8080", "192.0.2.10:8080"} {
		c, err := fromEnv(t, map[string]string{"SEARCH_ADDR": addr})
		if err != nil {
			t.Fatal(err)
		}
		err = c.Validate()
		if err == nil || !strings.Contains(err.Error(), "KGS_API_KEYS: refusing to start") || !strings.Contains(err.Error(), "SEARCH_ADDR") {
			t.Errorf("%s without keys: got %v, want the refusal naming KGS_API_KEYS", addr, err)
		}
	}
	for _, env := range []map[string]string{
		{"SEARCH_ADDR": "0.0.0.0:8080", "KGS_API_KEYS": "0123456789abcdef0123"},
		{"SEARCH_ADDR": "0.0.0.0:8080", "KGS_ALLOW_NO_AUTH": "1"},
		{"SEARCH_ADDR": "localhost:8080"},
	} {
		c, err := fromEnv(t, env)
		if err == nil {
			err = c.Validate()
		}
		if err != nil {
			t.Errorf("%v: %v", env, err)
		}
	}
}

func TestSecurityEnv(t *testing.T) {
	c, err := fromEnv(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := c.HTTP()
	if h.PublicReads || h.AllowNoAuth || len(h.TrustedProxies) != 0 {
		t.Errorf("defaults: public %v, no-auth %v, proxies %v; want all off", h.PublicReads, h.AllowNoAuth, h.TrustedProxies)
	}
	if c.RatePerAddr != DefaultRatePerAddr || c.RatePerKey != DefaultRatePerKey || !c.RatePerAddr.Enabled() ||
		!c.LoginRatePerAddr.Enabled() || !c.SuggestRatePerAddr.Enabled() {
		t.Errorf("default rates: %v %v", c.RatePerAddr, c.RatePerKey)
	}
	c, err = fromEnv(t, map[string]string{"KGS_PUBLIC_SEARCH": "1", "KGS_TRUSTED_PROXIES": "10.0.0.0/8",
		"SEARCH_RATE_PER_ADDR": "0", "SEARCH_RATE_PER_KEY": "100/m burst 5", "SEARCH_CRAWL_RATE_PER_ADDR": "off",
		"SEARCH_LOGIN_RATE_PER_ADDR": "3/h", "SEARCH_SUGGEST_RATE_PER_ADDR": "0"})
	if err != nil {
		t.Fatal(err)
	}
	h = c.HTTP()
	if !h.PublicReads || len(h.TrustedProxies) != 1 || c.RatePerAddr.Enabled() || c.CrawlRatePerAddr.Enabled() ||
		c.RatePerKey != (httpserver.Rate{PerSecond: 100.0 / 60, Burst: 5}) || c.SuggestRatePerAddr.Enabled() ||
		c.LoginRatePerAddr != (httpserver.Rate{PerSecond: 3.0 / 3600, Burst: 3}) {
		t.Errorf("overrides: %+v", c)
	}
	_, err = fromEnv(t, map[string]string{"SEARCH_RATE_PER_ADDR": "fast", "KGS_TRUSTED_PROXIES": "proxy"})
	for _, want := range []string{"SEARCH_RATE_PER_ADDR", "KGS_TRUSTED_PROXIES"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("malformed: got %v, want it to name %s", err, want)
		}
	}
}
