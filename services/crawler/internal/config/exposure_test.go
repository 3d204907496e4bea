package config

import (
	"strings"
	"testing"
)

// The crawler configured on 0.0.0.0 without keys refuses to start, naming
// KGS_API_KEYS; keys or the explicit opt-out let it start. Nothing binds.
func TestRefusesNonLoopbackWithoutKeys(t *testing.T) {
	env := base()
	env["CRAWLER_ADDR"] = "0.0.0.0:8081"
	_, err := load(t, env)
	if err == nil || !strings.Contains(err.Error(), "KGS_API_KEYS: refusing to start") || !strings.Contains(err.Error(), "CRAWLER_ADDR") {
		t.Fatalf("0.0.0.0 without keys: got %v, want the refusal naming KGS_API_KEYS", err)
	}
	env["KGS_API_KEYS"] = "0123456789abcdef0123"
	if _, err := load(t, env); err != nil {
		t.Errorf("0.0.0.0 with a key: %v", err)
	}
	delete(env, "KGS_API_KEYS")
	env["KGS_ALLOW_NO_AUTH"] = "true"
	if _, err := load(t, env); err != nil {
		t.Errorf("0.0.0.0 with KGS_ALLOW_NO_AUTH: %v", err)
	}
}

func TestRateEnv(t *testing.T) {
	c, err := load(t, base())
	if err != nil {
		t.Fatal(err)
	}
	l := c.HTTP().Limits
	if len(l) != 1 || l[0].PerAddr != DefaultRatePerAddr || l[0].PerKey != DefaultRatePerKey || !strings.Contains(strings.Join(l[0].Routes, " "), "POST /api/v1/crawls") {
		t.Errorf("default limits: %+v", l)
	}
	env := base()
	env["CRAWLER_RATE_PER_ADDR"] = "0"
	env["CRAWLER_RATE_PER_KEY"] = "2/s burst 4"
	if c, err = load(t, env); err != nil || c.RatePerAddr.Enabled() || c.RatePerKey.Burst != 4 {
		t.Errorf("overrides: %+v, %v", c.RatePerKey, err)
	}
	env["CRAWLER_RATE_PER_KEY"] = "2 per second"
	if _, err := load(t, env); err == nil || !strings.Contains(err.Error(), "CRAWLER_RATE_PER_KEY") {
		t.Errorf("malformed rate: got %v", err)
	}
}
