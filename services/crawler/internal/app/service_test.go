package app

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kgsearch/kgsearch/internal/testenv"
	"github.com/kgsearch/kgsearch/pkg/envconf"
	"github.com/kgsearch/kgsearch/services/crawler/internal/config"
)

// This file is the one setup of the tests that run the whole crawler service.

// runService starts the whole crawler service (Run, as main does) from env on top
// of the tests' defaults — a free port, the embeddings API faked, fast retries
// and outbox polls — stops it when the test ends (Run must return nil), and
// returns its base URL once /readyz answers 200. env names at least
// KGS_MARIADB_DSN, KGS_KG_URL and CRAWLER_ALLOW_HOSTS.
func runService(t *testing.T, env map[string]string) string {
	t.Helper()
	addr := freePort(t)
	all := map[string]string{
		"CRAWLER_ADDR": addr, "CRAWLER_OUTBOX_POLL": "50ms", "CRAWLER_RETRY_BACKOFF": "20ms",
		"KGS_EMBED_PROVIDER": "openai", "KGS_EMBED_MODEL": "fake-8d", "KGS_EMBED_URL": fakeEmbeddings(t).URL,
	}
	maps.Copy(all, env)
	cfg, err := config.FromEnv(envconf.FromMap(all))
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg, slog.New(slog.DiscardHandler)) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	base := "http://" + addr
	waitFor(t, 30*time.Second, func() bool { return httpOK(base + "/readyz") })
	return base
}

// startCrawl posts a crawl (body is the JSON request) and returns the job's id;
// anything but a 202 with an id fails the test.
func startCrawl(t *testing.T, base, body string) string {
	t.Helper()
	resp, err := http.Post(base+"/api/v1/crawls", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var job struct {
		ID string `json:"id"`
	}
	derr := json.NewDecoder(resp.Body).Decode(&job)
	resp.Body.Close()
	if derr != nil {
		t.Fatalf("POST /crawls: decode the answer: %v", derr)
	}
	if resp.StatusCode != http.StatusAccepted || job.ID == "" {
		t.Fatalf("POST /crawls: got %d, want 202 with an id", resp.StatusCode)
	}
	return job.ID
}

func freshDatabase(t *testing.T) string {
	t.Helper()
	return testenv.FreshMariaDB(t)
}

// fakeEmbeddings speaks the OpenAI embeddings API with 8-d vectors derived
// from the text (the embedding provider is configured like a real server).
func fakeEmbeddings(t *testing.T) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Input []string `json:"input"`
		}
		if r.URL.Path != "/v1/embeddings" || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var out struct {
			Data []item `json:"data"`
		}
		for i, text := range req.Input {
			v := make([]float32, 8)
			for j := range v {
				h := fnv.New32a()
				fmt.Fprintf(h, "%d:%s", j, text)
				v[j] = float32(h.Sum32()%1000) / 1000
			}
			out.Data = append(out.Data, item{Index: i, Embedding: v})
		}
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(s.Close)
	return s
}

func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func waitFor(t *testing.T, timeout time.Duration, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s", timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func httpOK(u string) bool {
	resp, err := http.Get(u)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
