package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

type config struct {
	search    string
	apiKey    string // sent as Authorization: Bearer; never printed
	clients   []int
	duration  time.Duration
	requests  int
	queries   []string
	pidFile   string
	jsonOut   string
	k         int
	timeout   time.Duration
	fault     bool
	stopCmd   string
	startCmd  string
	grace     time.Duration
	workdir   string
	tolerance float64
	procs     []Proc // processes whose CPU is measured
}

func main() {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "kgload:", err)
		os.Exit(2)
	}
	ok, err := run(context.Background(), log, cfg, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kgload:", err)
		os.Exit(2)
	}
	if !ok {
		os.Exit(1)
	}
}

func parseFlags(args []string) (config, error) {
	fs := flag.NewFlagSet("kgload", flag.ContinueOnError)
	var c config
	var clients, queries, cpu string
	fs.StringVar(&c.search, "search", "http://127.0.0.1:8080", "search service base URL")
	// The key's default is read after parsing, so that -help never prints it.
	fs.StringVar(&c.apiKey, "api-key", "", "API `key` sent as a bearer token, for a stack with KGS_API_KEYS (default: $KGS_API_KEY)")
	fs.StringVar(&clients, "clients", "1,8", "comma-separated concurrency levels")
	fs.DurationVar(&c.duration, "duration", 30*time.Second, "time limit per level (0: none, then -requests is required)")
	fs.IntVar(&c.requests, "requests", 0, "request limit per level (0: none)")
	fs.StringVar(&queries, "queries", "eval/pydocs/queries.json", "queries: a JSON file with queries[].query, or one query per line")
	fs.StringVar(&c.pidFile, "pid-file", ".state/run/search.pid", "search process pid file for RSS sampling (empty: skip)")
	fs.StringVar(&c.jsonOut, "json", "", "write the summaries as JSON to this file")
	fs.IntVar(&c.k, "k", 10, "results per query")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Second, "per-request client timeout")
	fs.BoolVar(&c.fault, "fault", false, "stop kg after 1/3 of each level, start it after 2/3, and check the degradation contract")
	fs.StringVar(&c.stopCmd, "fault-stop", "scripts/services.sh stop kg", "shell command that stops kg (-fault)")
	fs.StringVar(&c.startCmd, "fault-start", "scripts/services.sh start kg", "shell command that starts kg and returns once it is ready (-fault)")
	fs.DurationVar(&c.grace, "recover-grace", 3*time.Second, "time after kg is back before answers must be undegraded (-fault)")
	fs.Float64Var(&c.tolerance, "recover-tolerance", 0, "fraction of answers after recovery allowed to stay degraded graph/expansion (-fault)")
	fs.StringVar(&c.workdir, "dir", ".", "working directory for the fault commands")
	state := os.Getenv("KGS_STATE")
	if state == "" {
		state = ".state"
	}
	fs.StringVar(&cpu, "cpu", defaultCPUProcs(state), "processes whose CPU per query is measured: name=pid or name=pidfile, comma-separated (a missing pid file is skipped; the client itself is added as kgload)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if c.apiKey == "" {
		c.apiKey = os.Getenv("KGS_API_KEY")
	}
	c.apiKey = strings.TrimSpace(c.apiKey)
	for _, f := range strings.Split(clients, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 1024 {
			return c, fmt.Errorf("-clients: %q is not a concurrency level in 1..1024", f)
		}
		c.clients = append(c.clients, n)
	}
	if c.duration <= 0 && c.requests <= 0 {
		return c, errors.New("-duration and -requests are both unlimited; set at least one so the run ends")
	}
	if c.requests < 0 {
		return c, fmt.Errorf("-requests: got %d, want >= 0", c.requests)
	}
	if c.fault && c.duration <= 0 {
		return c, errors.New("-fault needs -duration: the outage is placed at 1/3 and 2/3 of it")
	}
	if c.tolerance < 0 || c.tolerance > 1 {
		return c, fmt.Errorf("-recover-tolerance: got %v, want 0..1", c.tolerance)
	}
	if c.k < 1 || c.k > 100 {
		return c, fmt.Errorf("-k: got %d, want 1..100", c.k)
	}
	u, err := url.Parse(c.search)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return c, fmt.Errorf("-search: %q is not an absolute URL", c.search)
	}
	c.search = strings.TrimRight(c.search, "/")
	qs, err := loadQueries(queries)
	if err != nil {
		return c, err
	}
	c.queries = qs
	procs, skipped, err := parseProcs(cpu)
	if err != nil {
		return c, err
	}
	for _, sk := range skipped {
		fmt.Fprintf(os.Stderr, "kgload: CPU of %s not measured\n", sk)
	}
	c.procs = append(procs, Proc{Name: "kgload", PID: os.Getpid(), From: "self"})
	return c, nil
}

// loadQueries reads queries[].query from a JSON file, or non-empty lines otherwise.
func loadQueries(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read queries: %w", err)
	}
	var out []string
	if strings.HasSuffix(path, ".json") {
		var doc struct {
			Queries []struct {
				Query string `json:"query"`
			} `json:"queries"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			return nil, fmt.Errorf("parse queries %s: %w", path, err)
		}
		for _, q := range doc.Queries {
			if s := strings.TrimSpace(q.Query); s != "" {
				out = append(out, s)
			}
		}
	} else {
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		for sc.Scan() {
			if s := strings.TrimSpace(sc.Text()); s != "" {
				out = append(out, s)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("queries %s: no queries found (want queries[].query in JSON or one per line)", path)
	}
	return out, nil
}

func run(ctx context.Context, log *slog.Logger, cfg config, w io.Writer) (bool, error) {
	client := &http.Client{Timeout: cfg.timeout, Transport: &http.Transport{
		MaxIdleConns: 1100, MaxIdleConnsPerHost: 1100, IdleConnTimeout: 30 * time.Second}}
	if err := probe(ctx, client, cfg); err != nil {
		return false, err
	}
	ok := true
	var sums []Summary
	for _, n := range cfg.clients {
		s, err := runLevel(ctx, log, cfg, client, n)
		if err != nil {
			return false, err
		}
		printLevel(w, s)
		if s.Fault != nil && !s.Fault.OK() {
			ok = false
		}
		sums = append(sums, s)
	}
	printTable(w, sums)
	printCPUTable(w, sums)
	if cfg.jsonOut != "" {
		b, err := json.MarshalIndent(sums, "", "  ")
		if err != nil {
			return false, fmt.Errorf("encode summaries: %w", err)
		}
		if err := os.WriteFile(cfg.jsonOut, append(b, '\n'), 0o644); err != nil {
			return false, fmt.Errorf("write %s: %w", cfg.jsonOut, err)
		}
	}
	return ok, nil
}

func runLevel(ctx context.Context, log *slog.Logger, cfg config, client *http.Client, clients int) (Summary, error) {
	var cancel context.CancelFunc
	if cfg.duration > 0 {
		ctx, cancel = context.WithTimeout(ctx, cfg.duration)
	} else {
		ctx, cancel = context.WithCancel(ctx)
	}
	defer cancel()

	var mem *memSampler
	if cfg.pidFile != "" {
		m, err := startMemSampler(cfg.pidFile, 200*time.Millisecond)
		if err != nil {
			return Summary{}, err
		}
		mem = m
	}
	load := loadAvg()
	cpu0 := sampleCPU(cfg.procs)
	start := time.Now()

	var win Window
	faultDone := make(chan error, 1)
	if cfg.fault {
		go func() { faultDone <- runFault(ctx, log, cfg, start, &win) }()
	} else {
		faultDone <- nil
	}

	var (
		next    atomic.Int64
		mu      sync.Mutex
		results []Result
		wg      sync.WaitGroup
	)
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var local []Result
			for ctx.Err() == nil {
				i := next.Add(1)
				if cfg.requests > 0 && i > int64(cfg.requests) {
					break
				}
				q := cfg.queries[(int(i)-1)%len(cfg.queries)]
				local = append(local, doSearch(client, cfg, q, start))
			}
			mu.Lock()
			results = append(results, local...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu1 := sampleCPU(cfg.procs)
	cancel()
	faultErr := <-faultDone

	s := summariseLevel(clients, elapsed, results)
	s.CPU = cpuCost(cfg.procs, cpu0, cpu1, s.Status["2xx"], elapsed.Seconds())
	s.LoadAvg = load
	if mem != nil {
		s.RSS = mem.stop()
	}
	if cfg.fault {
		if faultErr != nil {
			return s, faultErr
		}
		s.Fault = checkFault(results, win)
	}
	return s, nil
}

// searchRequest is the GET of one query, with the API key when there is one.
func searchRequest(ctx context.Context, cfg config, q string) (*http.Request, error) {
	u := cfg.search + "/api/v1/search?format=json&k=" + strconv.Itoa(cfg.k) + "&q=" + url.QueryEscape(q)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("search request: %w", err)
	}
	if cfg.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+cfg.apiKey)
	}
	return req, nil
}

// probe asks one query before the run, so that a refused key (or none, on a
// stack with KGS_API_KEYS) ends the run at once with what to do instead of
// a run of 401s. Other answers are left to the run to count.
func probe(ctx context.Context, client *http.Client, cfg config) error {
	req, err := searchRequest(ctx, cfg, cfg.queries[0])
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil //nolint:nilerr // the run counts failed requests itself
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
		return nil
	}
	if cfg.apiKey == "" {
		return fmt.Errorf("%s answered %d: the stack wants an API key; give it in KGS_API_KEY or -api-key", cfg.search, resp.StatusCode)
	}
	return fmt.Errorf("%s answered %d: the API key from KGS_API_KEY or -api-key was refused", cfg.search, resp.StatusCode)
}

// doSearch runs one query; a request cut by the level's end still counts as
// answered when the server answered it (the client timeout is separate).
func doSearch(client *http.Client, cfg config, q string, levelStart time.Time) Result {
	t0 := time.Now()
	r := Result{Start: t0.Sub(levelStart)}
	req, err := searchRequest(context.Background(), cfg, q)
	if err != nil {
		r.Err = err.Error()
		return r
	}
	resp, err := client.Do(req)
	if err != nil {
		r.Latency, r.Err = time.Since(t0), err.Error()
		return r
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	r.Latency, r.Status = time.Since(t0), resp.StatusCode
	r.Shed = resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != ""
	if err != nil {
		r.Status, r.Err = 0, fmt.Sprintf("read body: %v", err)
		return r
	}
	if resp.StatusCode/100 != 2 {
		r.Err = strings.TrimSpace(string(body[:min(len(body), 200)]))
		return r
	}
	var doc struct {
		Query struct {
			Entities []json.RawMessage `json:"entities"`
		} `json:"query"`
		TotalMS  float64            `json:"total_time_ms"`
		PhaseMS  map[string]float64 `json:"phase_ms"`
		Degraded []string           `json:"degraded"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		r.Err = fmt.Sprintf("decode answer: %v", err)
		return r
	}
	r.Degraded, r.Entities, r.TotalMS, r.Phases = doc.Degraded, len(doc.Query.Entities), doc.TotalMS, doc.PhaseMS
	return r
}

// runFault stops kg at 1/3 of the level and starts it at 2/3, recording when.
func runFault(ctx context.Context, log *slog.Logger, cfg config, start time.Time, win *Window) error {
	win.Grace, win.Tolerance = cfg.grace, cfg.tolerance
	sleepUntil(ctx, start.Add(cfg.duration/3))
	win.StopBegin = time.Since(start)
	log.Info("fault: stopping kg", "cmd", cfg.stopCmd)
	if err := shell(cfg.workdir, cfg.stopCmd); err != nil {
		return fmt.Errorf("fault stop %q: %w", cfg.stopCmd, err)
	}
	win.StopDone = time.Since(start)
	sleepUntil(ctx, start.Add(2*cfg.duration/3))
	win.StartBegin = time.Since(start)
	log.Info("fault: starting kg", "cmd", cfg.startCmd)
	// Start even when the level is over: kg must be left running.
	if err := shell(cfg.workdir, cfg.startCmd); err != nil {
		return fmt.Errorf("fault start %q: %w", cfg.startCmd, err)
	}
	win.StartDone = time.Since(start)
	log.Info("fault: kg back", "after_s", win.StartDone.Seconds())
	return nil
}

func sleepUntil(ctx context.Context, t time.Time) {
	d := time.Until(t)
	if d <= 0 {
		return
	}
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

func shell(dir, cmd string) error {
	c := exec.Command("bash", "-c", cmd)
	c.Dir, c.Stdout, c.Stderr = dir, os.Stderr, os.Stderr
	return c.Run()
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// Memory is the search process's resident set during a level, in MiB.
type Memory struct {
	PID      int     `json:"pid"`
	StartMiB float64 `json:"start_mib"`
	PeakMiB  float64 `json:"peak_sampled_mib"`
	EndMiB   float64 `json:"end_mib"`
	HWMMiB   float64 `json:"vmhwm_mib"` // the kernel's lifetime peak
	Samples  int     `json:"samples"`
}

type memSampler struct {
	m    Memory
	done chan struct{}
	wg   sync.WaitGroup
}

func startMemSampler(pidFile string, every time.Duration) (*memSampler, error) {
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return nil, fmt.Errorf("read pid file: %w (pass -pid-file '' to skip memory)", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return nil, fmt.Errorf("pid file %s: %q is not a pid", pidFile, strings.TrimSpace(string(b)))
	}
	rss, _, err := readMem(pid)
	if err != nil {
		return nil, fmt.Errorf("search process %d from %s: %w", pid, pidFile, err)
	}
	s := &memSampler{m: Memory{PID: pid, StartMiB: rss, PeakMiB: rss, Samples: 1}, done: make(chan struct{})}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-s.done:
				return
			case <-t.C:
				if rss, _, err := readMem(pid); err == nil {
					s.m.Samples++
					s.m.PeakMiB = max(s.m.PeakMiB, rss)
				}
			}
		}
	}()
	return s, nil
}

func (s *memSampler) stop() *Memory {
	close(s.done)
	s.wg.Wait()
	if rss, hwm, err := readMem(s.m.PID); err == nil {
		s.m.EndMiB, s.m.HWMMiB = rss, hwm
		s.m.PeakMiB = max(s.m.PeakMiB, rss)
	}
	return &s.m
}

// readMem returns VmRSS and VmHWM of pid in MiB.
func readMem(pid int) (rss, hwm float64, err error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, 0, err
	}
	return parseStatus(string(b))
}

func parseStatus(s string) (rss, hwm float64, err error) {
	var haveRSS bool
	for _, line := range strings.Split(s, "\n") {
		name, rest, ok := strings.Cut(line, ":")
		if !ok || (name != "VmRSS" && name != "VmHWM") {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, 0, fmt.Errorf("parse %s line %q: want \"<n> kB\"", name, line)
		}
		kb, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			return 0, 0, fmt.Errorf("parse %s line %q: %w", name, line, err)
		}
		if name == "VmRSS" {
			rss, haveRSS = kb/1024, true
		} else {
			hwm = kb / 1024
		}
	}
	if !haveRSS {
		return 0, 0, errors.New("no VmRSS line in /proc status")
	}
	return rss, hwm, nil
}

func printLevel(w io.Writer, s Summary) {
	fmt.Fprintf(w, "\n## %d client(s): %d requests in %.1fs, %.1f QPS answered (load avg at start %s)\n",
		s.Clients, s.Requests, s.Elapsed, s.QPS, s.LoadAvg)
	fmt.Fprintf(w, "status: %s\n", kv(s.Status))
	fmt.Fprintf(w, "shed by admission control (503 with Retry-After): %d; errors (other non-2xx, no answer): %d\n", s.Shed, s.Errors)
	fmt.Fprintf(w, "degraded answers: %s\n", kv(s.Degraded))
	fmt.Fprintf(w, "client latency ms: p50 %.1f  p90 %.1f  p99 %.1f  max %.1f\n", s.Latency.P50, s.Latency.P90, s.Latency.P99, s.Latency.Max)
	fmt.Fprintf(w, "server total_time_ms: p50 %.1f  p99 %.1f\n", s.ServerTotal.P50, s.ServerTotal.P99)
	var ph []string
	for _, k := range []string{"parse", "retrieve", "expand", "rank", "format"} {
		if v, ok := s.PhaseP50[k]; ok {
			ph = append(ph, fmt.Sprintf("%s %.2f", k, v))
		}
	}
	fmt.Fprintf(w, "phase medians ms: %s\n", strings.Join(ph, "  "))
	if c := s.CPU; c != nil {
		var ms, cores []string
		for _, k := range cpuKeys(c) {
			ms = append(ms, fmt.Sprintf("%s %.2f", k, c.MSPerQuery[k]))
			cores = append(cores, fmt.Sprintf("%s %.2f", k, c.Cores[k]))
		}
		fmt.Fprintf(w, "CPU ms per answered query: %s\n", strings.Join(ms, "  "))
		fmt.Fprintf(w, "cores busy (average): %s\n", strings.Join(cores, "  "))
	}
	if s.RSS != nil {
		fmt.Fprintf(w, "search RSS MiB (pid %d): start %.0f  peak sampled %.0f  end %.0f  VmHWM %.0f (%d samples)\n",
			s.RSS.PID, s.RSS.StartMiB, s.RSS.PeakMiB, s.RSS.EndMiB, s.RSS.HWMMiB, s.RSS.Samples)
	}
	if f := s.Fault; f != nil {
		fmt.Fprintf(w, "fault window s: kg down at %.1f, restart issued %.1f, ready %.1f, grace %.0f\n",
			f.Window["stop_done"], f.Window["start_begin"], f.Window["start_done"], f.Window["grace"])
		fmt.Fprintf(w, "fault: before the outage %d/%d answers degraded graph/expansion\n", f.BeforeDegraded, f.Before)
		fmt.Fprintf(w, "fault: answered %d, unanswered %d, 5xx %d; outage: %d/%d entity queries degraded graph/expansion, %d without entities; after recovery: %d answers, %d degraded\n",
			f.Answered, f.Unanswered, f.Status5xx, f.OutageDegraded, f.OutageWithEntity, f.OutageNoEntity, f.Recovered, f.RecoveredDegraded)
		if f.OK() {
			fmt.Fprintln(w, "fault contract: HELD")
		} else {
			fmt.Fprintf(w, "fault contract: BROKEN: %s\n", strings.Join(f.Violations, "; "))
		}
	}
}

func printTable(w io.Writer, sums []Summary) {
	fmt.Fprintln(w, "\n| clients | requests | QPS | p50 ms | p90 ms | p99 ms | max ms | server p50 | server p99 | degraded answers | shed (503) | errors | search RSS peak MiB | load avg |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---|---:|---|")
	for _, s := range sums {
		errs := map[string]int{}
		for k, v := range s.Status {
			if k != "2xx" && k != "shed" {
				errs[k] = v
			}
		}
		rss := "-"
		if s.RSS != nil {
			rss = fmt.Sprintf("%.0f", s.RSS.PeakMiB)
		}
		fmt.Fprintf(w, "| %d | %d | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %s | %d | %s | %s | %s |\n",
			s.Clients, s.Requests, s.QPS, s.Latency.P50, s.Latency.P90, s.Latency.P99, s.Latency.Max,
			s.ServerTotal.P50, s.ServerTotal.P99, orNone(kv(s.Degraded)), s.Shed, orNone(kv(errs)), rss, s.LoadAvg)
	}
}

// cpuKeys orders a CPU report's keys: processes by name, then other and machine.
func cpuKeys(c *CPU) []string {
	var keys []string
	for k := range c.MSPerQuery {
		if k != "other" && k != "machine" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range []string{"other", "machine"} {
		if _, ok := c.MSPerQuery[k]; ok {
			keys = append(keys, k)
		}
	}
	return keys
}

// printCPUTable prints CPU ms per answered query by process and level.
func printCPUTable(w io.Writer, sums []Summary) {
	if len(sums) == 0 || sums[0].CPU == nil {
		return
	}
	keys := cpuKeys(sums[0].CPU)
	fmt.Fprintf(w, "\nCPU ms per answered query (cores busy in parentheses):\n\n| clients | QPS | %s |\n|---:|---:|%s\n",
		strings.Join(keys, " | "), strings.Repeat("---:|", len(keys)))
	for _, s := range sums {
		cells := make([]string, len(keys))
		for i, k := range keys {
			cells[i] = fmt.Sprintf("%.2f (%.2f)", s.CPU.MSPerQuery[k], s.CPU.Cores[k])
		}
		fmt.Fprintf(w, "| %d | %.1f | %s |\n", s.Clients, s.QPS, strings.Join(cells, " | "))
	}
}

func kv(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	return strings.Join(parts, " ")
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
