package deploy_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/types"
)

// Without each secret, loading fails with a message naming the variable and
// pointing at .env.example: no service starts on a default password or key.
func TestComposeRefusesMissingSecrets(t *testing.T) {
	if _, err := load(types.Mapping{}); err == nil {
		t.Fatal("docker-compose.yml loaded without any secret")
	}
	for name := range secrets {
		for _, value := range []string{"", "absent"} {
			env := types.Mapping{}
			for k, v := range secrets {
				env[k] = v
			}
			if value == "absent" {
				delete(env, name)
			} else {
				env[name] = value
			}
			_, err := load(env)
			if err == nil {
				t.Errorf("loaded with %s %s", name, map[string]string{"": "empty", "absent": "unset"}[value])
				continue
			}
			if !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), ".env.example") {
				t.Errorf("without %s: error %q does not name the variable and .env.example", name, err)
			}
		}
	}
}

// No placeholder secrets anywhere: not in the compose file, not in .env.example.
func TestComposeNoPlaceholderSecrets(t *testing.T) {
	for _, f := range []string{"../docker-compose.yml", "../.env.example", "compose.crawler-api.yml"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		low := strings.ToLower(string(b))
		for _, bad := range []string{"change-me", "changeme", "password123", ":-secret", "kgsearch:kgsearch@"} {
			if strings.Contains(low, bad) {
				t.Errorf("%s contains the placeholder %q", f, bad)
			}
		}
	}
	// .env.example names every required secret, with an empty value: copying it
	// unchanged must not start the stack.
	b, err := os.ReadFile("../.env.example")
	if err != nil {
		t.Fatal(err)
	}
	example := types.Mapping{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			example[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	for name := range secrets {
		v, ok := example[name]
		if !ok || v != "" {
			t.Errorf(".env.example: %s missing or not empty (%q)", name, v)
		}
	}
	if _, err := load(example); err == nil {
		t.Error("docker-compose.yml loaded with .env.example copied unchanged")
	}
}

func published(p *types.Project) map[string][]uint32 {
	out := map[string][]uint32{}
	for name, s := range p.Services {
		for _, pc := range s.Ports {
			if pc.Published != "" {
				out[name] = append(out[name], pc.Target)
			}
		}
	}
	return out
}

// Only search is published by default; the crawler only with the override file;
// kg and the databases never, and they sit on an internal network only.
func TestComposePublishedPorts(t *testing.T) {
	got := published(loadCompose(t))
	if len(got) != 1 || !slices.Equal(got["search"], []uint32{8080}) {
		t.Errorf("published ports: got %v, want only search:8080", got)
	}
	got = published(loadCompose(t, "deploy/compose.crawler-api.yml"))
	if len(got) != 2 || !slices.Equal(got["search"], []uint32{8080}) || !slices.Equal(got["crawler"], []uint32{8081}) {
		t.Errorf("with the crawler-api override: got %v, want search:8080 and crawler:8081", got)
	}
	p := loadCompose(t)
	if n, ok := p.Networks["backend"]; !ok || !n.Internal {
		t.Fatalf("network backend: missing or not internal (%+v)", n)
	}
	for _, name := range []string{"mariadb", "neo4j", "kg"} {
		nets := p.Services[name].Networks
		if _, ok := nets["backend"]; !ok || len(nets) != 1 {
			t.Errorf("%s: networks %v, want only the internal backend", name, nets)
		}
	}
}

// Every service has API keys, listens on all interfaces (so the keys are what
// protects it), and the keys each caller sends are keys its callee accepts.
func TestComposeAPIKeysWired(t *testing.T) {
	p := loadCompose(t)
	env := func(svc, key string) string {
		v := p.Services[svc].Environment[key]
		if v == nil {
			return ""
		}
		return *v
	}
	accepts := func(svc, key string) bool {
		return key != "" && slices.Contains(strings.Split(env(svc, "KGS_API_KEYS"), ","), key)
	}
	internal := secrets["KGS_INTERNAL_API_KEY"]
	for _, svc := range []string{"kg", "crawler", "search"} {
		if env(svc, "KGS_API_KEYS") == "" {
			t.Errorf("%s: KGS_API_KEYS not set", svc)
		}
		if env(svc, "KGS_ALLOW_NO_AUTH") != "" {
			t.Errorf("%s: KGS_ALLOW_NO_AUTH set", svc)
		}
	}
	for _, caller := range []string{"crawler", "search"} {
		if k := env(caller, "KGS_KG_API_KEY"); !accepts("kg", k) {
			t.Errorf("%s sends KGS_KG_API_KEY %q, which kg does not accept", caller, k)
		}
	}
	if k := env("search", "KGS_CRAWLER_API_KEY"); !accepts("crawler", k) || env("search", "KGS_CRAWLER_URL") != "http://crawler:8081" {
		t.Errorf("search -> crawler: key %q url %q not wired", k, env("search", "KGS_CRAWLER_URL"))
	}
	// The internal key is for the services only: search does not accept it, kg
	// accepts nothing else, and users' keys work on search and the crawler.
	if accepts("search", internal) || env("kg", "KGS_API_KEYS") != internal {
		t.Errorf("internal key: search accepts it %v, kg keys %q", accepts("search", internal), env("kg", "KGS_API_KEYS"))
	}
	for _, user := range strings.Split(secrets["KGS_API_KEYS"], ",") {
		if !accepts("search", user) || !accepts("crawler", user) || accepts("kg", user) {
			t.Errorf("user key %q: search %v crawler %v kg %v; want search and crawler only", user,
				accepts("search", user), accepts("crawler", user), accepts("kg", user))
		}
	}
	if v := env("search", "KGS_PUBLIC_SEARCH"); v != "0" {
		t.Errorf("KGS_PUBLIC_SEARCH default: %q, want 0", v)
	}
}
