package app

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/kgsearch/kgsearch/pkg/kgapi"
	"github.com/kgsearch/kgsearch/pkg/kgapi/kgapitest"
	"github.com/kgsearch/kgsearch/services/crawler/internal/canon"
	"github.com/kgsearch/kgsearch/services/crawler/internal/testsite"
)

// TestServiceEndToEnd starts the whole service from its environment, crawls
// the test site through the HTTP API and checks that kg received every stored
// document through the outbox.
func TestServiceEndToEnd(t *testing.T) {
	site := testsite.New(testsite.Options{})
	t.Cleanup(site.Close)
	kg := kgapitest.New(t)
	base := runService(t, map[string]string{
		"KGS_MARIADB_DSN": freshDatabase(t), "KGS_KG_URL": kg.URL, "CRAWLER_ALLOW_HOSTS": site.Addr(),
	})

	id := startCrawl(t, base, fmt.Sprintf(`{"url":%q,"max_depth":1,"use_sitemap":false}`, site.SeedURL()))
	var status struct {
		Status   string `json:"status"`
		Counters struct {
			Stored int `json:"stored"`
		} `json:"counters"`
		FinishedAt *time.Time `json:"finished_at"`
	}
	waitFor(t, 60*time.Second, func() bool {
		resp, err := http.Get(base + "/api/v1/crawls/" + id)
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
