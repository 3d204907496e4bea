// Package deploy_test validates docker-compose.yml with the Compose specification's
// own Go loader: no Docker engine runs on the development machines, so this is how
// the file is kept loadable and complete.
package deploy_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
)

// secrets is a complete operator environment, as a filled-in .env would give.
var secrets = types.Mapping{
	"KGS_MARIADB_PASSWORD": "mariadb-secret-for-the-test",
	"KGS_NEO4J_PASSWORD":   "neo4j-secret-for-the-test",
	"KGS_INTERNAL_API_KEY": "internal-key-0123456789abcdef",
	"KGS_API_KEYS":         "user-key-one-0123456789,user-key-two-0123456789",
}

// load reads docker-compose.yml (and override files, relative to the repository)
// with the given environment, as `docker compose` would.
func load(env types.Mapping, files ...string) (*types.Project, error) {
	var cfgs []types.ConfigFile
	for _, f := range append([]string{"docker-compose.yml"}, files...) {
		path, err := filepath.Abs(filepath.Join("..", f))
		if err != nil {
			return nil, err
		}
		content, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("read compose file: %w", err)
		}
		cfgs = append(cfgs, types.ConfigFile{Filename: path, Content: content})
	}
	wd, _ := filepath.Abs("..")
	details := types.ConfigDetails{WorkingDir: wd, ConfigFiles: cfgs, Environment: env}
	return loader.LoadWithContext(context.Background(), details, func(o *loader.Options) {
		o.SetProjectName("kgsearch", true)
	})
}

func loadCompose(t *testing.T, files ...string) *types.Project {
	t.Helper()
	p, err := load(secrets, files...)
	if err != nil {
		t.Fatalf("compose loader rejected docker-compose.yml: %v", err)
	}
	return p
}

func TestComposeFile(t *testing.T) {
	p := loadCompose(t)
	tests := []struct {
		service string
		image   string // exact image for third-party servers
		target  string // Dockerfile target for our services
	}{
		{service: "mariadb", image: "mariadb:11.8"},
		{service: "neo4j", image: "neo4j:5.26-community"},
		{service: "kg", target: "kg"},
		{service: "crawler", target: "crawler"},
		{service: "search", target: "search"},
	}
	if got, want := len(p.Services), len(tests); got != want {
		t.Errorf("services: got %d, want %d", got, want)
	}
	for _, tt := range tests {
		t.Run(tt.service, func(t *testing.T) {
			s, ok := p.Services[tt.service]
			if !ok {
				t.Fatalf("service %s missing", tt.service)
			}
			if tt.image != "" && s.Image != tt.image {
				t.Errorf("image: got %q, want %q", s.Image, tt.image)
			}
			if tt.target != "" {
				if s.Build == nil {
					t.Fatalf("build: got none, want Dockerfile target %q", tt.target)
				}
				if s.Build.Dockerfile != "Dockerfile" || s.Build.Target != tt.target {
					t.Errorf("build: got %s target %q, want Dockerfile target %q", s.Build.Dockerfile, s.Build.Target, tt.target)
				}
				for _, key := range []string{"KGS_MARIADB_DSN", "KGS_NEO4J_URI", "KGS_KG_URL", "KGS_API_KEYS"} {
					if v := s.Environment[key]; v == nil || *v == "" {
						t.Errorf("environment: %s not set", key)
					}
				}
			}
			hc := s.HealthCheck
			if hc == nil || len(hc.Test) == 0 || hc.Disable {
				t.Fatalf("healthcheck: got none, want one")
			}
			if tt.target != "" && !strings.Contains(strings.Join(hc.Test, " "), "/readyz") {
				t.Errorf("healthcheck %v does not probe /readyz", hc.Test)
			}
		})
	}
	for _, name := range []string{"mariadb", "neo4j"} {
		if len(p.Services[name].Volumes) == 0 {
			t.Errorf("%s has no data volume", name)
		}
	}
	// Every service that depends on a database waits for it to be healthy.
	for _, name := range []string{"crawler", "search"} {
		if d, ok := p.Services[name].DependsOn["mariadb"]; !ok || d.Condition != types.ServiceConditionHealthy {
			t.Errorf("%s: depends_on mariadb with condition service_healthy missing", name)
		}
	}
}

func TestDockerfileTargets(t *testing.T) {
	b, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatalf("read Dockerfile: %v", err)
	}
	for _, target := range []string{"kg", "crawler", "search"} {
		if !strings.Contains(string(b), " AS "+target+"\n") {
			t.Errorf("Dockerfile has no stage named %q", target)
		}
	}
}
