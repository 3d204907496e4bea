package config

import (
	"strings"
	"testing"

	"github.com/kgsearch/kgsearch/pkg/envconf"
)

// kg configured on 0.0.0.0 without keys refuses to start, naming KGS_API_KEYS; keys
// or the explicit opt-out let it start. Nothing binds.
func TestRefusesNonLoopbackWithoutKeys(t *testing.T) {
	env := map[string]string{"KGS_NEO4J_PASSWORD": "p", "KG_ADDR": "0.0.0.0:8088"}
	c, err := FromEnv(envconf.FromMap(env))
	if err != nil {
		t.Fatal(err)
	}
	err = c.Validate()
	if err == nil || !strings.Contains(err.Error(), "KGS_API_KEYS: refusing to start") || !strings.Contains(err.Error(), "KG_ADDR") {
		t.Fatalf("0.0.0.0 without keys: got %v, want the refusal naming KGS_API_KEYS", err)
	}
	for _, extra := range []map[string]string{{"KGS_API_KEYS": "0123456789abcdef"}, {"KGS_ALLOW_NO_AUTH": "yes"}} {
		for k, v := range extra {
			env[k] = v
		}
		c, err := FromEnv(envconf.FromMap(env))
		if err == nil {
			err = c.Validate()
		}
		if err != nil {
			t.Errorf("%v: %v", extra, err)
		}
		if h := c.HTTP(); h.PublicReads {
			t.Errorf("kg reads must need a key when keys are set")
		}
	}
}
