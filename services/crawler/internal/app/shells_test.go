package app

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kgsearch/kgsearch/internal/kgscli"
	"github.com/kgsearch/kgsearch/services/crawler/internal/testsite"
)

// TestCLIWarnsOfScriptRenderedSite crawls a site whose pages JavaScript
// renders in the browser with `kgs crawl --wait` on the real crawler: the
// crawl ends done, and its end says how many pages were empty shells and
// what to crawl instead.
func TestCLIWarnsOfScriptRenderedSite(t *testing.T) {
	site := testsite.NewShellSite()
	t.Cleanup(site.Close)
	kg := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"document_id":"x"}`))
	}))
	t.Cleanup(kg.Close)
	base := runService(t, map[string]string{
		"KGS_MARIADB_DSN": freshDatabase(t), "KGS_KG_URL": kg.URL, "CRAWLER_ALLOW_HOSTS": site.Addr(),
		"KGS_API_KEYS": agentKey,
	})

	code, out, errs := kgs(t, base, agentKey, "crawl", site.SeedURL(), "--depth", "1", "--no-sitemap", "--wait", "--progress", "none")
	if code != kgscli.ExitOK {
		t.Fatalf("kgs crawl: exit %d: %s", code, errs)
	}
	t.Logf("kgs crawl --wait:\n%s", out)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("output: got %d lines, want the summary and one warning:\n%s", len(lines), out)
	}
	if !strings.Contains(lines[0], " done in ") || !strings.Contains(lines[0], "1 stored") || !strings.Contains(lines[0], "4 empty (4 rendered by JavaScript)") {
		t.Errorf("summary: %q", lines[0])
	}
	if !strings.HasPrefix(lines[1], "warning: 4 of 5 pages are rendered by JavaScript in the browser (") || !strings.Contains(lines[1], "static export") {
		t.Errorf("warning: %q", lines[1])
	}
}
