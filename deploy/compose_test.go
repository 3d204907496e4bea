// Package deploy_test validates docker-compose.yml with the Compose specification's
// own Go loader: no Docker engine runs on the development machines, so this is how
// the file is kept loadable and complete.
package deploy_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
)

func loadCompose(t *testing.T) *types.Project {
	t.Helper()
	path, err := filepath.Abs("../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	content, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read compose file: %v", err)
	}
	details := types.ConfigDetails{
		WorkingDir:  filepath.Dir(path),
		ConfigFiles: []types.ConfigFile{{Filename: path, Content: content}},
		Environment: types.Mapping{},
	}
	p, err := loader.LoadWithContext(context.Background(), details, func(o *loader.Options) {
		o.SetProjectName("kgsearch", true)
	})
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
		port    uint32
	}{
		{service: "mariadb", image: "mariadb:11.8"},
		{service: "neo4j", image: "neo4j:5.26-community"},
		{service: "kg", target: "kg", port: 8088},
		{service: "crawler", target: "crawler", port: 8081},
		{service: "search", target: "search", port: 8080},
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
				found := false
				for _, pc := range s.Ports {
					if pc.Target == tt.port {
						found = true
					}
				}
				if !found {
					t.Errorf("ports: %d is not published", tt.port)
				}
				for _, key := range []string{"KGS_MARIADB_DSN", "KGS_NEO4J_URI", "KGS_KG_URL"} {
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
