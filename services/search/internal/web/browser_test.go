package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kgsearch/kgsearch/internal/testenv"
	"github.com/kgsearch/kgsearch/pkg/embed"
	"github.com/kgsearch/kgsearch/pkg/kgapi"
	"github.com/kgsearch/kgsearch/services/search/internal/app"
	"github.com/kgsearch/kgsearch/services/search/internal/config"
)

// stack is the real system for the browser tests: kg and the crawler built from
// this tree and run as processes (their packages are internal to their services),
// the search service in this process, a small website, and Chromium.
type stack struct {
	t                         *testing.T
	search, crawler, kg, site string
	kgClient                  *kgapi.Client
	browser                   context.Context
	shots                     string
}

// repoRoot is the module root, from this file's path.
func repoRoot(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "../../../.."))
}

// port returns a free port in 18700–18799 (the range of this package's tests).
func port(t *testing.T) string {
	t.Helper()
	for p := 18700 + os.Getpid()%50; p < 18800; p++ {
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err == nil {
			ln.Close()
			return strconv.Itoa(p)
		}
	}
	t.Fatal("no free port in 18700-18799")
	return ""
}

// chromium finds the browser: KGS_CHROMIUM, or deploy/local/chromium.sh (which
// unpacks Debian's chromium under the state folder when the machine has none).
func chromium(t *testing.T) string {
	if p := os.Getenv("KGS_CHROMIUM"); p != "" {
		return p
	}
	out, err := exec.Command(filepath.Join(repoRoot(t), "deploy/local/chromium.sh"), "path").Output()
	if err != nil || len(strings.TrimSpace(string(out))) == 0 {
		if testenv.Required() {
			t.Fatalf("no chromium (KGS_CHROMIUM unset and deploy/local/chromium.sh path failed: %v)", err)
		}
		t.Skipf("no chromium: set KGS_CHROMIUM or run deploy/local/chromium.sh install")
	}
	return strings.TrimSpace(string(out))
}

// service builds and starts one of the other services, waiting for /readyz.
func service(t *testing.T, name, addr string, env []string) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	build := exec.Command("go", "build", "-o", bin, "./services/"+name)
	build.Dir = repoRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", name, err, out)
	}
	logPath := filepath.Join(t.TempDir(), name+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			if len(b) > 4000 {
				b = b[len(b)-4000:]
			}
			t.Logf("%s log (tail):\n%s", name, b)
		}
	})
	waitReady(t, name, "http://"+addr)
}

func waitReady(t *testing.T, name, base string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready after 3 minutes: %v", name, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func startStack(t *testing.T) *stack {
	dsn := testenv.FreshMariaDB(t)
	uri, user, password := testenv.Neo4j(t)
	exe := chromium(t)
	s := &stack{t: t, site: siteServer(t)}
	siteHost := strings.TrimPrefix(s.site, "http://")

	kgAddr := "127.0.0.1:" + port(t)
	service(t, "kg", kgAddr, []string{"KG_ADDR=" + kgAddr, "KGS_NEO4J_URI=" + uri, "KGS_NEO4J_USER=" + user,
		"KGS_NEO4J_PASSWORD=" + password, "KG_LEARNER_FILE=off", "KG_GAZETTEER_REFRESH=0", "KGS_API_KEYS="})
	s.kg = "http://" + kgAddr
	s.kgClient = kgapi.NewClient(s.kg, nil, "")

	crawlerAddr := "127.0.0.1:" + port(t)
	service(t, "crawler", crawlerAddr, []string{"CRAWLER_ADDR=" + crawlerAddr, "KGS_MARIADB_DSN=" + dsn, "KGS_KG_URL=" + s.kg,
		"CRAWLER_ALLOW_HOSTS=" + siteHost, "CRAWLER_OUTBOX_POLL=200ms", "KGS_API_KEYS="})
	s.crawler = "http://" + crawlerAddr

	cfg := config.Default()
	cfg.Addr = "127.0.0.1:" + port(t)
	cfg.MariaDBDSN, cfg.KGURL, cfg.CrawlerURL = dsn, s.kg, s.crawler
	cfg.IndexDir = filepath.Join(t.TempDir(), "bleve")
	cfg.SyncInterval, cfg.GazetteerRefresh = 200*time.Millisecond, 0
	// Generous timeouts: the page and the API must see the same, complete answer on a busy machine.
	cfg.Deadline, cfg.VectorTimeout, cfg.GraphTimeout, cfg.BM25Timeout, cfg.ExpandTimeout = 20*time.Second, 15*time.Second, 15*time.Second, 15*time.Second, 15*time.Second
	ec, err := embed.ConfigFromEnv(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Embed = ec
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil))) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && ctx.Err() == nil {
			t.Errorf("search service: %v", err)
		}
	})
	s.search = "http://" + cfg.Addr
	waitReady(t, "search", s.search)
	// The status is public with KGS_PUBLIC_SEARCH: no file system path in it.
	status, err := http.Get(s.search + "/api/v1/status")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(status.Body)
	status.Body.Close()
	if strings.Contains(string(body), filepath.Dir(cfg.IndexDir)) {
		t.Errorf("/api/v1/status shows the index directory: %s", body)
	}

	s.shots = filepath.Join(os.Getenv("KGS_STATE"), "screenshots")
	if os.Getenv("KGS_STATE") == "" {
		s.shots = filepath.Join(repoRoot(t), ".state", "screenshots")
	}
	if err := os.MkdirAll(s.shots, 0o755); err != nil {
		t.Fatal(err)
	}
	s.browser = newBrowser(t, exe)
	return s
}

// newBrowser starts headless Chromium for the test, 1280×900.
func newBrowser(t *testing.T, exe string) context.Context {
	actx, acancel := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(exe), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900))
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(func() { bcancel(); acancel() })
	// The first action starts the browser and binds it to bctx itself: derived
	// contexts with timeouts (below) must not own the browser.
	if err := chromedp.Do(bctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium %s: %v", exe, err)
	}
	return bctx
}

// do runs browser steps with a time limit.
func (s *stack) do(steps ...chromedp.Action[chromedp.Void]) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(s.browser, 3*time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		s.t.Fatalf("browser: %v", err)
	}
}

// eval evaluates JavaScript in the page.
func eval[T any](s *stack, js string) T {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(s.browser, time.Minute)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		s.t.Fatalf("evaluate %q: %v", js, err)
	}
	return v
}

// until evaluates a JavaScript predicate until it is true. Evaluations during a
// navigation fail; they are retried like a false answer.
func (s *stack) until(js string, timeout time.Duration) {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(s.browser, 10*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("Boolean("+js+")"))
		cancel()
		if err == nil && ok {
			return
		}
		last = err
		time.Sleep(150 * time.Millisecond)
	}
	s.t.Fatalf("waiting for %s: not true after %s (last error: %v)", js, timeout, last)
}

// screenshot writes the whole page as $KGS_STATE/screenshots/<name>.png.
func (s *stack) screenshot(name string) { s.shot(name, chromedp.FullScreenshot(100)) }

func (s *stack) shot(name string, action chromedp.Action[[]byte]) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(s.browser, time.Minute)
	defer cancel()
	buf, err := chromedp.Run(ctx, action)
	if err != nil {
		s.t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(filepath.Join(s.shots, name+".png"), buf, 0o644); err != nil {
		s.t.Fatal(err)
	}
}

func getJSON(t *testing.T, u string, out any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", u, resp.StatusCode, b)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
}

// jobJSON is the part of the crawler's job status the tests compare.
type jobJSON struct {
	ID       string `json:"id"`
	Status   string `json:"status"`
	Counters struct {
		Discovered, Queued, Fetched, Stored, Unchanged, Empty, Failed, Chunks int64
		InFlight                                                              int64 `json:"in_flight"`
	} `json:"counters"`
}

func TestBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test: not with -short")
	}
	s := startStack(t)
	s.crawlTestSite(t)
	s.waitIndexed(t)
	s.searchPage(t)
	s.weightsChangeOrder(t)
	s.entityView(t)
	s.scriptsDoNotRun(t)
	s.cancelCrawl(t)
	s.refusedCrawl(t)
	s.scriptRenderedCrawl(t)
	s.phoneWidth(t)
	ids := s.deleteSite(t)
	s.cleanup(t, ids)
}

// crawlTestSite starts a crawl from the form and watches the live counters reach
// the job's final numbers.
func (s *stack) crawlTestSite(t *testing.T) string {
	s.do(chromedp.Navigate(s.search+"/crawls"), chromedp.WaitVisible(chromedp.ID("crawl-form")))
	s.screenshot("crawls")
	s.do(chromedp.SetValue(chromedp.ID("url"), s.site+"/"), chromedp.SetValue(chromedp.ID("max_pages"), "20"),
		chromedp.SetValue(chromedp.ID("max_depth"), "2"), chromedp.SetValue(chromedp.ID("tags"), "webtest"),
		chromedp.Click(chromedp.CSS(`#crawl-form button[type=submit]`)))
	s.until(`document.getElementById('job') !== null`, 30*time.Second)
	s.until(`document.getElementById('job').dataset.final === '1'`, 3*time.Minute)
	s.screenshot("crawl")
	id := eval[string](s, `document.getElementById('job').dataset.job`)
	var job jobJSON
	getJSON(t, s.crawler+"/api/v1/crawls/"+id, &job)
	if job.Status != "done" || job.Counters.Stored < 8 {
		t.Fatalf("crawl: %+v", job)
	}
	shown := eval[map[string]string](s, `Object.fromEntries(['status','discovered','queued','in_flight','fetched','stored','unchanged','empty','failed','chunks'].map(k => [k, document.getElementById('c-' + k).textContent]))`)
	want := map[string]string{"status": job.Status, "discovered": fmt.Sprint(job.Counters.Discovered), "queued": fmt.Sprint(job.Counters.Queued),
		"in_flight": fmt.Sprint(job.Counters.InFlight), "fetched": fmt.Sprint(job.Counters.Fetched), "stored": fmt.Sprint(job.Counters.Stored),
		"unchanged": fmt.Sprint(job.Counters.Unchanged), "empty": fmt.Sprint(job.Counters.Empty), "failed": fmt.Sprint(job.Counters.Failed),
		"chunks": fmt.Sprint(job.Counters.Chunks)}
	for k, v := range want {
		if shown[k] != v {
			t.Errorf("live counter %s: page shows %q, the job says %q", k, shown[k], v)
		}
	}
	if n := eval[int](s, `document.querySelectorAll('#c-pages li').length`); n == 0 {
		t.Errorf("no page events were shown")
	}
	return id
}

// waitIndexed waits until the search index holds the crawl and kg has its graph.
func (s *stack) waitIndexed(t *testing.T) {
	deadline := time.Now().Add(3 * time.Minute)
	for {
		var st struct {
			IndexLag  int64 `json:"index_lag"`
			Documents int64 `json:"documents"`
		}
		getJSON(t, s.search+"/api/v1/status", &st)
		var r struct {
			Results []struct{ Source string } `json:"results"`
		}
		getJSON(t, s.search+"/api/v1/search?format=json&q=python+virtual+environments", &r)
		graph := false
		for _, x := range r.Results {
			graph = graph || strings.Contains(x.Source, "graph")
		}
		if st.IndexLag == 0 && st.Documents > 0 && graph {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("index or graph not caught up: %+v, graph hits %v", st, graph)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// apiAnswer is the JSON search answer the bars are checked against.
type apiAnswer struct {
	Results []struct {
		URL            string             `json:"url"`
		ScoreBreakdown map[string]float64 `json:"score_breakdown"`
	} `json:"results"`
	Explain struct {
		Weights string `json:"weights"`
	} `json:"explain"`
}

func (a apiAnswer) urls() []string {
	var out []string
	for _, r := range a.Results {
		out = append(out, r.URL)
	}
	return out
}

func parseWeights(t *testing.T, s string) map[string]float64 {
	out := map[string]float64{}
	for _, p := range strings.Split(s, ",") {
		k, v, _ := strings.Cut(p, ":")
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			t.Fatalf("weights %q: %v", s, err)
		}
		out[k] = x
	}
	return out
}

type barSeg struct {
	URL, Signal string
	Width       float64
}

// pageBars reads every bar segment of the results on the page.
func (s *stack) pageBars() ([]string, []barSeg) {
	urls := eval[[]string](s, `[...document.querySelectorAll('li.result')].map(li => li.dataset.url)`)
	segs := eval[[]barSeg](s, `[...document.querySelectorAll('li.result')].flatMap(li => [...li.querySelectorAll('rect.seg')].map(r => ({URL: li.dataset.url, Signal: r.dataset.signal, Width: parseFloat(r.getAttribute('width'))})))`)
	return urls, segs
}

const query = "python virtual environments"

// searchPage types a query (suggestions appear), submits it and checks every bar
// segment against the JSON answer of the same search.
func (s *stack) searchPage(t *testing.T) {
	s.do(chromedp.Navigate(s.search+"/"), chromedp.WaitVisible(chromedp.ID("q")), chromedp.SendKeys(chromedp.ID("q"), "virt"))
	s.until(`document.querySelectorAll('#q-suggest option').length > 0`, 30*time.Second)
	s.do(chromedp.SetValue(chromedp.ID("q"), query), chromedp.Click(chromedp.CSS(`#search .qrow button`)))
	s.until(`document.querySelectorAll('li.result').length > 0`, time.Minute)
	loc := eval[string](s, `location.search`)
	if !strings.Contains(loc, "q=python+virtual+environments") || !strings.Contains(loc, "w_vector=") {
		t.Errorf("the URL does not carry the form: %s", loc)
	}
	// Under weighted fusion each result's breakdown adds up to its score (to the
	// rounding of the four-digit numbers).
	for _, p := range eval[[][]string](s, `[...document.querySelectorAll('li.result')].map(li => [li.dataset.url, li.querySelector('td.sum').textContent, li.querySelector('.score').textContent])`) {
		sum, _ := strconv.ParseFloat(p[1], 64)
		score, _ := strconv.ParseFloat(p[2], 64)
		if math.Abs(sum-score) > 0.0006 {
			t.Errorf("%s: the breakdown adds up to %s, the score is %s", p[0], p[1], p[2])
		}
	}
	s.screenshot("search")
	s.shot("search-top", chromedp.CaptureScreenshot()) // the first screen, for the README
	href := eval[string](s, `location.href`)
	s.againstAPI(t, func() {
		s.do(chromedp.Navigate(href))
		s.until(`document.querySelectorAll('li.result').length > 0`, time.Minute)
	}, s.search+"/api/v1/search?format=json&explain=true&q="+url.QueryEscape(query))
}

// againstAPI loads a result page and compares its order and every bar segment with
// the JSON answer to the same search. kg may still be taking in the crawl (and
// learning from it), so when the API's answer changed between the calls before and
// after the page, the comparison is repeated; a difference against a stable answer
// fails the test.
func (s *stack) againstAPI(t *testing.T, load func(), apiURL string) []string {
	t.Helper()
	for attempt := 1; ; attempt++ {
		var before, after apiAnswer
		getJSON(t, apiURL, &before)
		load()
		urls, segs := s.pageBars()
		getJSON(t, apiURL, &after)
		diffs := compareBars(t, before, urls, segs)
		if len(diffs) == 0 {
			return urls
		}
		if reflect.DeepEqual(before, after) || attempt == 5 {
			for _, d := range diffs {
				t.Error(d)
			}
			t.FailNow()
		}
		t.Logf("the answer changed during attempt %d (the graph is still taking in the crawl); again", attempt)
		time.Sleep(2 * time.Second)
	}
}

// compareBars lists the differences between the page and the JSON answer.
func compareBars(t *testing.T, a apiAnswer, urls []string, segs []barSeg) []string {
	if strings.Join(urls, " ") != strings.Join(a.urls(), " ") {
		return []string{fmt.Sprintf("page order %v, API order %v", urls, a.urls())}
	}
	w := parseWeights(t, a.Explain.Weights)
	want := map[string]float64{}
	for _, r := range a.Results {
		for sig, v := range r.ScoreBreakdown {
			if x := w[sig] * v * 100; x > 0 {
				want[r.URL+" "+sig] = x
			}
		}
	}
	got := map[string]float64{}
	for _, sg := range segs {
		got[sg.URL+" "+sg.Signal] = sg.Width
	}
	var diffs []string
	if len(got) != len(want) || len(got) == 0 {
		diffs = append(diffs, fmt.Sprintf("page has %d bar segments, the answer %d", len(got), len(want)))
	}
	for k, x := range want {
		if math.Abs(got[k]-x) > 0.01 {
			diffs = append(diffs, fmt.Sprintf("bar %s: width %.4f on the page, %.4f from the answer", k, got[k], x))
		}
	}
	return diffs
}

// weightsChangeOrder moves the sliders to title-only and then vector-only and
// sees the first result change, each order matching the API's.
func (s *stack) weightsChangeOrder(t *testing.T) {
	set := func(weights map[string]string) []string {
		parts := []string{}
		for _, k := range []string{"vector", "graph", "bm25", "recency", "title"} {
			parts = append(parts, k+":"+weights[k])
		}
		return s.againstAPI(t, func() {
			s.do(chromedp.Navigate(s.search+"/?q="+url.QueryEscape(query)), chromedp.WaitVisible(chromedp.ID("q")),
				chromedp.Click(chromedp.CSS(`details.options summary`)), chromedp.WaitVisible(chromedp.ID("w_title")))
			for _, k := range []string{"vector", "graph", "bm25", "recency", "title"} {
				s.do(chromedp.SetValue(chromedp.ID("w_"+k), weights[k]))
			}
			s.do(chromedp.Click(chromedp.CSS(`details.options button[type=submit]`)))
			s.until(`location.search.includes('w_title=`+weights["title"]+`') && document.querySelectorAll('li.result').length > 0`, time.Minute)
		}, s.search+"/api/v1/search?format=json&explain=true&q="+url.QueryEscape(query)+"&weights="+url.QueryEscape(strings.Join(parts, ",")))
	}
	titleOnly := set(map[string]string{"vector": "0", "graph": "0", "bm25": "0", "recency": "0", "title": "1"})
	vectorOnly := set(map[string]string{"vector": "1", "graph": "0", "bm25": "0", "recency": "0", "title": "0"})
	if titleOnly[0] == vectorOnly[0] {
		t.Errorf("the first result did not change with the weights: %s", titleOnly[0])
	}
	t.Logf("first result: title only %s, vector only %s", titleOnly[0], vectorOnly[0])
}

// entityView opens a query entity and moves to a neighbour by clicking it.
func (s *stack) entityView(t *testing.T) {
	s.do(chromedp.Navigate(s.search+"/?q="+url.QueryEscape(query)), chromedp.WaitVisible(chromedp.CSS(`aside a[href^="/entities/"]`)))
	// Every entity link of the result page (query entities, related entities, the
	// entities a result mentions) opens an entity page: none goes nowhere.
	links := eval[[]string](s, `[...new Set([...document.querySelectorAll('a[href^="/entities/"]')].map(a => a.getAttribute('href')))]`)
	t.Logf("%d entity links on the result page", len(links))
	for _, href := range links {
		resp, err := http.Get(s.search + href)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("the result page links to %s, which answers %d", href, resp.StatusCode)
		}
	}
	s.do(chromedp.Click(chromedp.CSS(`aside a[href^="/entities/"]`)))
	s.until(`location.pathname.startsWith('/entities/') && document.getElementById('graph') !== null`, time.Minute)
	n := eval[int](s, `document.querySelectorAll('#graph a.node').length`)
	if n == 0 {
		t.Fatalf("the entity graph has no neighbours")
	}
	s.screenshot("entity")
	from := eval[string](s, `location.pathname`)
	next := eval[string](s, `document.querySelector('#graph a.node').getAttribute('href')`)
	s.do(chromedp.Click(chromedp.CSS(`#graph a.node`)))
	s.until(`location.pathname !== '`+from+`' && document.getElementById('ent-h') !== null`, time.Minute)
	if got := eval[string](s, `location.pathname`); got != next {
		t.Errorf("clicking a neighbour went to %s, want %s", got, next)
	}
}

// scriptsDoNotRun checks that a page whose title and text contain script tags is
// shown as text in results and in the document list, and nothing of it runs.
func (s *stack) scriptsDoNotRun(t *testing.T) {
	check := func(where string) {
		if n := eval[int](s, `document.scripts.length`); n != 1 {
			t.Errorf("%s: %d script elements, want only app.js", where, n)
		}
		if eval[bool](s, `window.__pwned !== undefined`) {
			t.Errorf("%s: the crawled page's script ran", where)
		}
	}
	s.do(chromedp.Navigate(s.search + "/?q=zanzibar+hostile"))
	s.until(`document.querySelectorAll('li.result').length > 0`, time.Minute)
	if !eval[bool](s, `[...document.querySelectorAll('li.result .rtitle')].some(h => h.textContent.includes('<script>'))`) {
		t.Errorf("the hostile title is not shown as text")
	}
	check("search")
	s.do(chromedp.Navigate(s.search+"/documents"), chromedp.WaitVisible(chromedp.CSS(`table.docs`)))
	if !eval[bool](s, `document.querySelector('table.docs').textContent.includes('<script>')`) {
		t.Errorf("the hostile title is not in the document list as text")
	}
	check("documents")
	s.screenshot("documents")
}

// cancelCrawl starts an endless crawl of slow pages and cancels it from its page.
func (s *stack) cancelCrawl(t *testing.T) {
	s.do(chromedp.Navigate(s.search+"/crawls"), chromedp.WaitVisible(chromedp.ID("crawl-form")),
		chromedp.SetValue(chromedp.ID("url"), s.site+"/slow/1"), chromedp.SetValue(chromedp.ID("max_pages"), "500"),
		chromedp.SetValue(chromedp.ID("max_depth"), "15"), chromedp.Click(chromedp.CSS(`#crawl-form button[type=submit]`)))
	s.until(`document.getElementById('job') !== null && Number(document.getElementById('c-fetched').textContent) >= 1`, 2*time.Minute)
	id := eval[string](s, `document.getElementById('job').dataset.job`)
	s.listFollowsRunningCrawl(t, id)
	s.deleteRefused(t, id)
	s.do(chromedp.Navigate(s.search+"/crawls/"+id), chromedp.WaitVisible(chromedp.CSS(`#cancel-form button`)))
	s.do(chromedp.Click(chromedp.CSS(`#cancel-form button`)))
	s.until(`document.getElementById('c-status') !== null && document.getElementById('c-status').textContent === 'cancelled'`, time.Minute)
	var job jobJSON
	getJSON(t, s.crawler+"/api/v1/crawls/"+id, &job)
	if job.Status != "cancelled" || job.Counters.Stored >= 500 {
		t.Errorf("after cancel the crawler says %+v", job)
	}
}

// listFollowsRunningCrawl opens the crawls list while the crawl of slow pages
// runs: the crawl's row counts the pages the crawler stores without the page
// being loaded again.
func (s *stack) listFollowsRunningCrawl(t *testing.T, id string) {
	row := `document.querySelector('tr[data-job="` + id + `"]')`
	s.do(chromedp.Navigate(s.search + "/crawls"))
	s.until(row+` !== null && document.getElementById('jobs').dataset.live === 'on'`, 30*time.Second)
	first := eval[string](s, `window.__loaded = 1; `+row+`.querySelector('[data-k=stored]').textContent`)
	s.until(row+`.querySelector('[data-k=stored]').textContent !== '`+first+`'`, time.Minute)
	got := eval[[]string](s, `[String(window.__loaded), `+row+`.dataset.status, `+row+`.querySelector('[data-k=stored]').textContent]`)
	if got[0] != "1" || got[1] != "running" {
		t.Errorf("the list changed by a reload, or the row says %q", got)
	}
	t.Logf("the running crawl's row went from %s to %s stored pages without a reload", first, got[2])
}

// scriptRenderedCrawl crawls pages that JavaScript renders in the browser: the
// crawl page warns, counts them, and lists each with what gave it away.
func (s *stack) scriptRenderedCrawl(t *testing.T) {
	s.do(chromedp.Navigate(s.search+"/crawls"), chromedp.WaitVisible(chromedp.ID("crawl-form")),
		chromedp.SetValue(chromedp.ID("url"), s.site+"/app/"), chromedp.SetValue(chromedp.ID("max_pages"), "10"),
		chromedp.SetValue(chromedp.ID("max_depth"), "1"), chromedp.Click(chromedp.CSS(`#crawl-form button[type=submit]`)))
	s.until(`document.getElementById('job') !== null`, 30*time.Second)
	s.until(`document.getElementById('job').dataset.final === '1' || document.getElementById('job').dataset.status === 'done'`, 2*time.Minute)
	s.screenshot("crawl-script-rendered")
	id := eval[string](s, `document.getElementById('job').dataset.job`)
	var job struct {
		Status   string   `json:"status"`
		Warnings []string `json:"warnings"`
		Counters struct {
			ScriptRendered int64 `json:"script_rendered"`
		} `json:"counters"`
	}
	getJSON(t, s.crawler+"/api/v1/crawls/"+id, &job)
	if job.Status != "done" || job.Counters.ScriptRendered != 3 || len(job.Warnings) != 1 {
		t.Fatalf("the crawl of the script-rendered pages: %+v", job)
	}
	got := eval[[]string](s, `[document.querySelector('#c-warnings[role=status] .notice') ? document.querySelector('#c-warnings li').textContent : '',
	  document.getElementById('c-script_rendered').textContent]`)
	if got[0] != job.Warnings[0] || got[1] != "3" {
		t.Errorf("the crawl page shows the warning %q and %s pages rendered by JS; the crawler says %q and 3", got[0], got[1], job.Warnings[0])
	}
	// The shells answer slowly, so their pages end while the page follows the crawl.
	pages := eval[[]string](s, `[...document.querySelectorAll('#c-pages li')].map(li => li.textContent)`)
	found := false
	for _, p := range pages {
		found = found || strings.HasPrefix(p, "rendered by JavaScript: needs a browser (") && strings.Contains(p, " · "+s.site+"/app/")
	}
	if !found {
		t.Errorf("no finished page says it is rendered by JavaScript: %q", pages)
	}
}

// refusedCrawl asks the real crawler for an internal address its SSRF guard
// refuses (127.0.0.2 is not in CRAWLER_ALLOW_HOSTS; the guard decides before any
// request): the form comes back as typed with the crawler's reason on the field.
func (s *stack) refusedCrawl(t *testing.T) {
	s.do(chromedp.Navigate(s.search+"/crawls"), chromedp.WaitVisible(chromedp.ID("crawl-form")),
		chromedp.SetValue(chromedp.ID("url"), "http://127.0.0.2:9/private"), chromedp.SetValue(chromedp.ID("tags"), "kept"),
		chromedp.Click(chromedp.CSS(`#crawl-form button[type=submit]`)))
	s.until(`document.getElementById('crawl-error') !== null`, 30*time.Second)
	got := eval[[]string](s, `[document.getElementById('crawl-error').dataset.field, document.getElementById('crawl-error').textContent,
	  document.getElementById('url').value, document.getElementById('tags').value]`)
	if got[0] != "url" || !strings.Contains(got[1], "Please fix Start page:") || !strings.Contains(got[1], "CRAWLER_ALLOW_HOSTS") ||
		got[2] != "http://127.0.0.2:9/private" || got[3] != "kept" {
		t.Errorf("a refused crawl shows %q", got)
	}
	t.Logf("the crawler's refusal as the page shows it: %s", strings.Join(strings.Fields(got[1]), " "))
}

// phoneWidth renders the search page 390 px wide: nothing may overflow sideways.
func (s *stack) phoneWidth(t *testing.T) {
	s.do(chromedp.EmulateViewport(390, 844), chromedp.Navigate(s.search+"/?q="+url.QueryEscape(query)))
	s.until(`document.querySelectorAll('li.result').length > 0`, time.Minute)
	if w := eval[int](s, `document.documentElement.scrollWidth - window.innerWidth`); w > 1 {
		t.Errorf("the search page is %d px wider than a phone screen", w)
	}
	s.screenshot("search-phone")
	s.do(chromedp.EmulateViewport(1280, 900))
}

// siteDocs lists the documents the crawler holds (of one host, or all).
func (s *stack) siteDocs(t *testing.T, domain string) []struct{ ID, Domain string } {
	var page struct {
		Documents []struct{ ID, Domain string } `json:"documents"`
	}
	getJSON(t, s.crawler+"/api/v1/documents?limit=1000&domain="+url.QueryEscape(domain), &page)
	return page.Documents
}

// deleteRefused deletes the test site's documents from the documents page while
// the crawl id covers the site: the crawler refuses (409) and the page says so,
// linking that crawl, and keeps the host in the filter.
func (s *stack) deleteRefused(t *testing.T, id string) {
	docs := s.siteDocs(t, "")
	if len(docs) == 0 {
		t.Fatal("no documents to delete")
	}
	host := docs[0].Domain
	before := len(s.siteDocs(t, host))
	s.do(chromedp.Navigate(s.search + "/documents?domain=" + url.QueryEscape(host)))
	s.until(`document.readyState === 'complete'`, 30*time.Second)
	eval[bool](s, `(window.confirm = () => true, true)`)
	s.do(chromedp.Click(chromedp.CSS(`#delete-domain button`)))
	s.until(`document.getElementById('delete-error') !== null`, 30*time.Second)
	got := eval[[]string](s, `[document.getElementById('delete-error').textContent, String(document.querySelector('#delete-error a') && document.querySelector('#delete-error a').getAttribute('href')), document.getElementById('domain').value]`)
	if !strings.Contains(got[0], "A crawl covers "+host) || got[1] != "/crawls/"+id || got[2] != host {
		t.Errorf("deleting %s while crawl %s covers it: the page shows %q", host, id, got)
	}
	if after := len(s.siteDocs(t, host)); after < before { // the crawl may store more meanwhile
		t.Errorf("the refused delete removed documents: %d before, %d after", before, after)
	}
}

// deleteSite deletes all documents of the test site from the documents page
// through the crawler; the page reports the crawler's count, and the crawler
// holds none of them afterwards. It returns their ids for cleanup.
func (s *stack) deleteSite(t *testing.T) []string {
	docs := s.siteDocs(t, "")
	if len(docs) == 0 {
		t.Fatal("no documents to delete")
	}
	host := docs[0].Domain
	ids := []string{}
	for _, d := range s.siteDocs(t, host) {
		ids = append(ids, d.ID)
	}
	s.do(chromedp.Navigate(s.search + "/documents?domain=" + url.QueryEscape(host)))
	s.until(`document.readyState === 'complete'`, 30*time.Second)
	eval[bool](s, `(window.confirm = () => true, true)`)
	s.do(chromedp.Click(chromedp.CSS(`#delete-domain button`)))
	s.until(`document.getElementById('domain-deleted') !== null`, time.Minute)
	s.screenshot("documents-site-deleted")
	want := fmt.Sprintf("Deleted %d documents of %s, with", len(ids), host)
	if got := eval[string](s, `document.getElementById('domain-deleted').textContent`); !strings.HasPrefix(got, want) {
		t.Errorf("after deleting the site the page says %q, want %q", got, want)
	}
	if left := s.siteDocs(t, host); len(left) != 0 {
		t.Errorf("the crawler still holds %d documents of %s", len(left), host)
	}
	return ids
}

// cleanup removes this test's documents from the shared graph: ids (deleted
// through the crawler, whose deletions kg follows on its own time) and any the
// crawler still holds.
func (s *stack) cleanup(t *testing.T, ids []string) {
	for _, d := range s.siteDocs(t, "") {
		ids = append(ids, d.ID)
	}
	for _, id := range ids {
		var err error
		for range 5 { // kg answers 500 while a concurrent ingest holds the same nodes
			if err = s.kgClient.DeleteDocument(context.Background(), id); err == nil {
				break
			}
			time.Sleep(time.Second)
		}
		if err != nil {
			t.Logf("kg delete %s: %v", id, err)
		}
	}
}

// siteServer serves the small website the tests crawl: articles about Python
// packaging for the searches, one hostile page, and an endless chain of slow
// pages for cancelling.
func siteServer(t *testing.T) string {
	pages := map[string][2]string{
		"/venv": {"Virtual environments", "Python packaging notes. Wheels and source distributions are built by setuptools. " +
			"The build backend writes metadata for each distribution. PyPI hosts the packages that pip installs."},
		"/isolation": {"Notes on isolation", "A Python virtual environment isolates packages. Create a virtual environment with the venv module: " +
			"python -m venv .venv, then activate the virtual environment. Each virtual environment has its own site-packages. " +
			"Virtual environments keep project dependencies apart."},
		"/django": {"Django framework", "Django is a web framework written in Python. Django uses PostgreSQL or SQLite as its database. " +
			"Install Django with pip inside a virtual environment."},
		"/flask": {"Flask microframework", "Flask is a small web framework written in Python. Flask uses Jinja templates and Werkzeug. " +
			"Install Flask with pip inside a virtual environment."},
		"/pip": {"Installing packages with pip", "pip installs Python packages from PyPI. pip is part of Python since 3.4. " +
			"Use pip in a virtual environment to avoid changing the system Python."},
		"/asyncio": {"Asynchronous IO", "asyncio is a Python module for asynchronous programming with an event loop. " +
			"Coroutines are scheduled by the asyncio event loop. Django supports asyncio views."},
		"/postgres": {"PostgreSQL replication", "PostgreSQL streaming replication ships the write-ahead log to standby servers. " +
			"Django uses PostgreSQL through psycopg."},
		"/hostile": {"Zanzibar <script>window.__pwned=1</script> notes", "The zanzibar hostile page mentions <script>window.__pwned=2</script> in its text " +
			"and <img src=x onerror=\"window.__pwned=3\"> as well, about Python."},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if r.URL.Path == "/" {
			fmt.Fprint(w, `<!doctype html><html><head><title>Python notes</title></head><body><main><h1>Python notes</h1><ul>`)
			for p, c := range pages {
				fmt.Fprintf(w, `<li><a href="%s">%s</a></li>`, p, escapeText(c[0]))
			}
			fmt.Fprint(w, `</ul><p>An index of notes about Python packaging, virtual environments and web frameworks.</p></main></body></html>`)
			return
		}
		if shell, ok := appShells[r.URL.Path]; ok {
			time.Sleep(time.Second) // slow enough that the crawl page sees the pages end
			fmt.Fprintf(w, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Widgets app</title></head>
<body><nav><a href="/app/">Home</a> <a href="/app/guide">Guide</a> <a href="/app/api">API</a></nav>
%s</body></html>`, shell)
			return
		}
		if strings.HasPrefix(r.URL.Path, "/slow/") {
			n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/slow/"))
			if err != nil {
				http.NotFound(w, r)
				return
			}
			time.Sleep(400 * time.Millisecond)
			fmt.Fprintf(w, `<!doctype html><html><head><title>Slow page %d</title></head><body><main><h1>Slow page %d</h1>
<p>This page number %d is slow to answer, so that a crawl of it can be cancelled while it runs. It talks about nothing in particular.</p>
<a href="/slow/%d">next</a> <a href="/slow/%d">other</a></main></body></html>`, n, n, n, 2*n, 2*n+1)
			return
		}
		c, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		// The title is RCDATA, so script tags in it stay text; the body's are escaped
		// text too, plus a real script element that extraction drops. The heading is
		// the same everywhere, so the title is only in <title> (the title signal) and
		// the text alone decides the vector signal.
		fmt.Fprintf(w, `<!doctype html><html><head><title>%s</title><script>window.__pwned=4</script></head><body><main><article><h1>Notes</h1><p>%s</p><p>%s</p></article><a href="/">home</a></main></body></html>`,
			strings.ReplaceAll(c[0], "</title>", ""), escapeText(c[1]), escapeText(c[1]))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// appShells are pages that a script renders in the browser: what the server
// sends is an empty mount point, a script and at most a placeholder.
var appShells = map[string]string{
	"/app/":      `<div id="app">Loading ...</div><script>window.widgets = {name: 'Widgets'}</script><script src="/app/bundle.js"></script>`,
	"/app/guide": `<noscript>You need to enable JavaScript to run this app.</noscript><div id="root"></div><script type="module" src="/app/guide.js"></script>`,
	"/app/api":   `<div id="__next"></div><script src="/app/main.js" defer></script>`,
}

func escapeText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}
