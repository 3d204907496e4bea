package app

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/google/go-cmp/cmp"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/kgsearch/kgsearch/internal/testenv"
	"github.com/kgsearch/kgsearch/pkg/kgapi"
	"github.com/kgsearch/kgsearch/services/crawler/internal/canon"
	"github.com/kgsearch/kgsearch/services/crawler/internal/testsite"
)

// TestOutages crawls the test site once cleanly and then once per fault:
// MariaDB, Neo4j and kg each become unreachable for a few seconds in the
// middle of the crawl. Every component is real (the crawler service, the kg
// service built from this tree, MariaDB, Neo4j) except the embedding server.
// The fault is injected by a loopback TCP proxy between the crawler and
// MariaDB, between kg and Neo4j, and between the crawler and kg: the proxy
// stops listening and cuts its open connections, which is what a client sees
// when the server dies, without stopping the shared servers. Each faulty
// crawl must end done with the clean crawl's counters and documents, one
// insert per document, no orphan chunks, and kg's graph equal to MariaDB.
func TestOutages(t *testing.T) {
	if testing.Short() {
		t.Skip("outage tests crawl four times")
	}
	h := newOutageHarness(t)
	var clean crawlResult
	t.Run("clean", func(t *testing.T) {
		clean = h.crawl(t, "")
		want := clean.site.CanonicalPages(testsite.Crawl{MaxDepth: outageDepth, RespectRobots: true, UseSitemap: true, Canon: canon.DefaultOptions()})
		if clean.Status != "done" || clean.Counters.Stored != int64(len(want)) {
			t.Fatalf("clean crawl: got %s with %d stored, want done with %d", clean.Status, clean.Counters.Stored, len(want))
		}
		clean.check(t)
	})
	if clean.site == nil || t.Failed() {
		t.Fatal("the clean crawl failed; the faulty crawls have nothing to compare with")
	}
	for _, fault := range []string{"mariadb", "neo4j", "kg"} {
		t.Run(fault, func(t *testing.T) {
			got := h.crawl(t, fault)
			if got.Status != "done" {
				t.Fatalf("status: got %s, want done (errors %v)", got.Status, got.LastErrors)
			}
			if diff := cmp.Diff(clean.Counters, got.Counters); diff != "" {
				t.Errorf("counters differ from the clean crawl (-clean +%s):\n%s", fault, diff)
			}
			if diff := cmp.Diff(clean.Documents, got.Documents); diff != "" {
				t.Errorf("documents (path → chunks) differ from the clean crawl (-clean +%s):\n%s", fault, diff)
			}
			got.check(t)
			t.Logf("%s outage of %s: %d connections cut, %v stalls, %v outbox failures, events %v, counters %+v",
				fault, outageFor, got.cut, got.Stalls, got.OutboxFailures, got.Events, got.Counters)
			switch fault {
			case "mariadb":
				if got.Stalls == 0 || !got.Events["stalled"] {
					t.Errorf("MariaDB outage: got %v stalls and events %v; want the job to report it stalled", got.Stalls, got.Events)
				}
			default:
				if got.OutboxFailures == 0 {
					t.Errorf("%s outage: no outbox delivery failed; the fault did not hit the crawl", fault)
				}
			}
		})
	}
}

const (
	outageDepth    = 3
	outageArticles = 60
	outageFor      = 4 * time.Second
)

// outageHarness holds what the crawls share: the kg service (built from this
// tree) behind a proxy, reaching Neo4j through another proxy.
type outageHarness struct {
	neoProxy, kgProxy *testenv.FaultProxy
	kg                *kgapi.Client // direct, for clean-up
	neo               neo4j.DriverWithContext
	mariadb           string // host:port of the shared MariaDB
}

func newOutageHarness(t *testing.T) *outageHarness {
	dsn := testenv.MariaDBDSN(t)
	uri, user, password := testenv.Neo4j(t)
	mc, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	nu, err := url.Parse(uri)
	if err != nil {
		t.Fatal(err)
	}
	h := &outageHarness{mariadb: mc.Addr}
	h.neo, err = neo4j.NewDriverWithContext(uri, neo4j.BasicAuth(user, password, ""))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.neo.Close(context.Background()) })

	dir := t.TempDir()
	bin := filepath.Join(dir, "kg")
	build := exec.Command("go", "build", "-o", bin, "github.com/kgsearch/kgsearch/services/kg")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build kg: %v\n%s", err, out)
	}
	h.neoProxy = testenv.NewFaultProxy(t, nu.Host)
	kgAddr := freePort(t)
	var logs bytes.Buffer
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(),
		"KG_ADDR="+kgAddr, "KGS_STATE="+dir, "KG_LEARNER_FILE="+filepath.Join(dir, "learner.json"),
		"KGS_NEO4J_URI=bolt://"+h.neoProxy.Addr(), "KGS_NEO4J_USER="+user, "KGS_NEO4J_PASSWORD="+password,
		"KG_NEO4J_RETRY=1s", "KGS_LOG_LEVEL=warn", "KGS_API_KEYS=")
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("kg log:\n%s", tail(logs.String(), 4000))
		}
	})
	h.kg = kgapi.NewClient("http://"+kgAddr, nil, "")
	waitFor(t, 60*time.Second, func() bool { return h.kg.Ready(context.Background()) == nil })
	h.kgProxy = testenv.NewFaultProxy(t, kgAddr)
	return h
}

// crawlResult is what one crawl left behind.
type crawlResult struct {
	site           *testsite.Site
	Status         string
	Counters       outageCounters
	LastErrors     []string
	Documents      map[string]int // path → chunk count in MariaDB
	docIDs         map[string]int // document id → chunk count in MariaDB
	inserts        map[string]map[string]int
	chunks         int
	orphans        int
	graph          map[string]int // document id → chunks in Neo4j
	Stalls         float64
	OutboxFailures float64
	Events         map[string]bool
	cut            int // connections the fault cut
}

// outageCounters are the job counters a fault must not change.
type outageCounters struct {
	Discovered int64            `json:"discovered"`
	Fetched    int64            `json:"fetched"`
	Stored     int64            `json:"stored"`
	Unchanged  int64            `json:"unchanged"`
	Deleted    int64            `json:"deleted"`
	Empty      int64            `json:"empty"`
	Failed     int64            `json:"failed"`
	FailedBy   map[string]int64 `json:"failed_by_reason"`
	Skipped    map[string]int64 `json:"skipped"`
}

// check asserts what holds for any crawl: one insert per document and no
// other change, no orphan chunk, and the graph holds every document with its
// chunks.
func (r crawlResult) check(t *testing.T) {
	t.Helper()
	for id, ops := range r.inserts {
		if diff := cmp.Diff(map[string]int{"insert": 1}, ops); diff != "" {
			t.Errorf("changes of document %s (-want +got):\n%s", id, diff)
		}
	}
	if len(r.inserts) != len(r.docIDs) {
		t.Errorf("change feed names %d documents, MariaDB holds %d", len(r.inserts), len(r.docIDs))
	}
	if r.orphans != 0 {
		t.Errorf("orphan chunks: got %d, want 0", r.orphans)
	}
	sum := 0
	for _, n := range r.docIDs {
		sum += n
	}
	if sum != r.chunks {
		t.Errorf("chunks: documents say %d, the chunks table holds %d", sum, r.chunks)
	}
	if diff := cmp.Diff(r.docIDs, r.graph); diff != "" {
		t.Errorf("kg graph differs from MariaDB (document id → chunks; -mariadb +neo4j):\n%s", diff)
	}
}

// crawl runs the crawler service on a fresh database, crawls a fresh test
// site, takes the fault's server away for a while mid-crawl, and collects
// the result once the job ended and the outbox is empty.
func (h *outageHarness) crawl(t *testing.T, fault string) (res crawlResult) {
	site := testsite.New(testsite.Options{Articles: outageArticles})
	t.Cleanup(site.Close)
	direct := freshDatabase(t)
	dbProxy := testenv.NewFaultProxy(t, h.mariadb)
	mc, _ := mysql.ParseDSN(direct)
	mc.Addr = dbProxy.Addr()
	db, err := sql.Open("mysql", direct)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })

	base := runService(t, map[string]string{
		"KGS_MARIADB_DSN": mc.FormatDSN(), "KGS_KG_URL": "http://" + h.kgProxy.Addr(), "CRAWLER_ALLOW_HOSTS": site.Addr(),
	})
	id := startCrawl(t, base, fmt.Sprintf(`{"url":%q,"max_depth":%d,"max_pages":1000}`, site.SeedURL(), outageDepth))
	events := watchEvents(t, base+"/api/v1/crawls/"+id+"/events")

	if fault != "" {
		p := map[string]*testenv.FaultProxy{"mariadb": dbProxy, "neo4j": h.neoProxy, "kg": h.kgProxy}[fault]
		// Mid-crawl: some pages stored (and some on their way to kg), most not yet.
		waitFor(t, 60*time.Second, func() bool { return count(t, db, "SELECT COUNT(*) FROM documents") >= 12 })
		before := p.Cut()
		p.Down()
		time.Sleep(outageFor)
		if fault != "mariadb" {
			// A fault behind kg only shows when a delivery meets it: keep the server
			// away (at most 30 s more) until one delivery has failed, so that the
			// test never passes without the fault having hit the crawl.
			failures := func() bool {
				return scrape(t, base+"/metrics")[`kgsearch_crawler_outbox_failures_total{kind="upsert"}`] > 0
			}
			for end := time.Now().Add(30 * time.Second); !failures() && time.Now().Before(end); {
				time.Sleep(200 * time.Millisecond)
			}
		}
		p.Up(t)
		defer func(n int) { res.cut = n }(p.Cut() - before)
	}

	res.site = site
	var last json.RawMessage
	for deadline := time.Now().Add(180 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var st struct {
			Status     string         `json:"status"`
			Counters   outageCounters `json:"counters"`
			LastErrors []string       `json:"last_errors"`
			FinishedAt *time.Time     `json:"finished_at"`
		}
		if getJSON(base+"/api/v1/crawls/"+id, &last) && json.Unmarshal(last, &st) == nil && st.FinishedAt != nil {
			res.Status, res.Counters, res.LastErrors = st.Status, st.Counters, st.LastErrors
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s not finished after 3m; last status: %s", id, last)
		}
	}
	// kg catches up through the outbox (its backoff after a failure is 2s, 4s, 8s …).
	waitFor(t, 180*time.Second, func() bool { return count(t, db, "SELECT COUNT(*) FROM outbox") == 0 })

	res.Documents, res.docIDs = map[string]int{}, map[string]int{}
	rows, err := db.Query("SELECT id, url, chunk_count FROM documents")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, u string
		var n int
		if err := rows.Scan(&id, &u, &n); err != nil {
			t.Fatal(err)
		}
		res.Documents[strings.TrimPrefix(u, site.URL())] = n
		res.docIDs[id] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for id := range res.docIDs {
			if err := h.kg.DeleteDocument(context.Background(), id); err != nil {
				t.Logf("clean up kg document %s: %v", id, err)
			}
		}
	})
	res.inserts = changeOps(t, db)
	res.chunks = count(t, db, "SELECT COUNT(*) FROM chunks")
	res.orphans = count(t, db, "SELECT COUNT(*) FROM chunks c LEFT JOIN documents d ON d.id = c.document_id WHERE d.id IS NULL")
	res.graph = h.graphChunks(t, res.docIDs)
	metrics := scrape(t, base+"/metrics")
	res.Stalls = metrics["kgsearch_crawler_job_stalls_total"]
	res.OutboxFailures = metrics[`kgsearch_crawler_outbox_failures_total{kind="upsert"}`]
	res.Events = events()
	return res
}

// graphChunks counts, straight from Neo4j, the chunks of each document of ids
// that kg holds (placeholders, the targets of links, are not documents).
func (h *outageHarness) graphChunks(t *testing.T, ids map[string]int) map[string]int {
	t.Helper()
	list := make([]string, 0, len(ids))
	for id := range ids {
		list = append(list, id)
	}
	res, err := neo4j.ExecuteQuery(context.Background(), h.neo, `
		MATCH (d:Document) WHERE d.id IN $ids AND NOT d:Placeholder
		OPTIONAL MATCH (d)-[:HAS_CHUNK]->(c:Chunk)
		RETURN d.id AS id, count(c) AS chunks`, map[string]any{"ids": list}, neo4j.EagerResultTransformer)
	if err != nil {
		t.Fatalf("read the graph: %v", err)
	}
	out := map[string]int{}
	for _, r := range res.Records {
		id, _ := r.Get("id")
		n, _ := r.Get("chunks")
		out[id.(string)] = int(n.(int64))
	}
	return out
}

func changeOps(t *testing.T, db *sql.DB) map[string]map[string]int {
	t.Helper()
	rows, err := db.Query("SELECT document_id, op, COUNT(*) FROM changes GROUP BY document_id, op")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]map[string]int{}
	for rows.Next() {
		var id, op string
		var n int
		if err := rows.Scan(&id, &op, &n); err != nil {
			t.Fatal(err)
		}
		if out[id] == nil {
			out[id] = map[string]int{}
		}
		out[id][op] = n
	}
	return out
}

func count(t *testing.T, db *sql.DB, query string) int {
	t.Helper()
	var n int
	if err := db.QueryRow(query).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

func getJSON(u string, dst any) bool {
	resp, err := http.Get(u)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	return resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(dst) == nil
}

// scrape reads the Prometheus text format into series → value.
func scrape(t *testing.T, u string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			out[line[:i]] = v
		}
	}
	return out
}

// watchEvents reads the job's event stream in the background; the returned
// function gives the event types seen so far.
func watchEvents(t *testing.T, u string) func() map[string]bool {
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	seen := map[string]bool{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return
		}
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if typ, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				mu.Lock()
				seen[typ] = true
				mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return func() map[string]bool {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(seen)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
