package app

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kgsearch/kgsearch/internal/testenv"
	"github.com/kgsearch/kgsearch/pkg/envconf"
	"github.com/kgsearch/kgsearch/pkg/kgapi"
	"github.com/kgsearch/kgsearch/pkg/kgapi/kgapitest"
	"github.com/kgsearch/kgsearch/services/crawler/internal/canon"
	"github.com/kgsearch/kgsearch/services/crawler/internal/config"
	"github.com/kgsearch/kgsearch/services/crawler/internal/testsite"
)

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

// TestServiceEndToEnd starts the whole service from its environment, crawls
// the test site through the HTTP API and checks that kg received every stored
// document through the outbox.
func TestServiceEndToEnd(t *testing.T) {
	site := testsite.New(testsite.Options{})
	t.Cleanup(site.Close)
	kg := kgapitest.New(t)
	emb := fakeEmbeddings(t)
	addr := freePort(t)
	env := map[string]string{
		"CRAWLER_ADDR":          addr,
		"KGS_MARIADB_DSN":       freshDatabase(t),
		"KGS_KG_URL":            kg.URL,
		"CRAWLER_ALLOW_HOSTS":   site.Addr(),
		"CRAWLER_OUTBOX_POLL":   "50ms",
		"CRAWLER_RETRY_BACKOFF": "20ms",
		"KGS_EMBED_PROVIDER":    "openai",
		"KGS_EMBED_MODEL":       "fake-8d",
		"KGS_EMBED_URL":         emb.URL,
	}
	cfg, err := config.FromEnv(envconf.FromMap(env))
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg, slog.New(slog.DiscardHandler)) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	base := "http://" + addr
	waitFor(t, 30*time.Second, func() bool {
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})

	resp, err := http.Post(base+"/api/v1/crawls", "application/json",
		strings.NewReader(fmt.Sprintf(`{"url":%q,"max_depth":1,"use_sitemap":false}`, site.SeedURL())))
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
	var status struct {
		Status   string `json:"status"`
		Counters struct {
			Stored int `json:"stored"`
		} `json:"counters"`
		FinishedAt *time.Time `json:"finished_at"`
	}
	waitFor(t, 60*time.Second, func() bool {
		resp, err := http.Get(base + "/api/v1/crawls/" + job.ID)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return json.Unmarshal(data, &status) == nil && status.FinishedAt != nil
	})
	want := site.CanonicalPages(testsite.Crawl{MaxDepth: 1, RespectRobots: true, Canon: canon.DefaultOptions()})
	if status.Status != "done" || status.Counters.Stored != len(want) {
		t.Fatalf("job: got %s with %d stored, want done with %d", status.Status, status.Counters.Stored, len(want))
	}
	// Every stored page reaches kg through the outbox, with its chunks.
	byURL := func() map[string]kgapi.Document {
		docs := map[string]kgapi.Document{}
		for _, d := range kg.Ingested() {
			docs[d.URL] = d
		}
		return docs
	}
	waitFor(t, 30*time.Second, func() bool { return len(byURL()) == len(want) })
	docs := byURL()
	for _, u := range want {
		d, ok := docs[u]
		if !ok || len(d.Chunks) == 0 || d.ID == "" {
			t.Errorf("kg document %s: got %+v, want it with chunks", u, ok)
		}
	}
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
