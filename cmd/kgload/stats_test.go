package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestPercentile(t *testing.T) {
	ten := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	tests := []struct {
		name   string
		sorted []float64
		p      float64
		want   float64
	}{
		{"empty", nil, 50, 0},
		{"single p50", []float64{7}, 50, 7},
		{"single p99", []float64{7}, 99, 7},
		// ceil(0.5*10)=5 → 5th value
		{"ten p50", ten, 50, 5},
		// ceil(0.9*10)=9 → 9th value
		{"ten p90", ten, 90, 9},
		// ceil(0.99*10)=10 → 10th value
		{"ten p99", ten, 99, 10},
		{"ten p100", ten, 100, 10},
		// ceil(0.01*10)=1 → 1st value
		{"ten p1", ten, 1, 1},
		{"p0 is min", ten, 0, 1},
		// four values: ceil(0.5*4)=2 → 20, ceil(0.99*4)=4 → 40
		{"four p50", []float64{10, 20, 30, 40}, 50, 20},
		{"four p75", []float64{10, 20, 30, 40}, 75, 30},
		{"four p76", []float64{10, 20, 30, 40}, 76, 40},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := percentile(tc.sorted, tc.p); got != tc.want {
				t.Errorf("percentile(%v, %v): got %v, want %v", tc.sorted, tc.p, got, tc.want)
			}
		})
	}
}

func TestPercentileOf200(t *testing.T) {
	// 1..200: p50 = 100th value, p90 = 180th, p99 = ceil(198) = 198th.
	vals := make([]float64, 200)
	for i := range vals {
		vals[len(vals)-1-i] = float64(i + 1) // descending: summarise must sort
	}
	got := summarise(vals)
	want := Dist{N: 200, P50: 100, P90: 180, P99: 198, Max: 200}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("summarise(200 values) mismatch (-want +got):\n%s", diff)
	}
	if vals[0] != 200 {
		t.Errorf("summarise sorted its input: vals[0] got %v, want 200", vals[0])
	}
}

func TestSummariseLevel(t *testing.T) {
	msd := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	rs := []Result{
		{Latency: msd(10), Status: 200, TotalMS: 8, Phases: map[string]float64{"parse": 1, "retrieve": 5}},
		{Latency: msd(20), Status: 200, TotalMS: 18, Phases: map[string]float64{"parse": 2, "retrieve": 15}, Degraded: []string{"graph"}},
		{Latency: msd(40), Status: 200, TotalMS: 30, Phases: map[string]float64{"parse": 3, "retrieve": 25}, Degraded: []string{"graph", "bm25"}},
		{Latency: msd(30), Status: 400},
		{Latency: msd(5), Status: 503},
		{Latency: msd(1000), Status: 0, Err: "connection refused"},
		{Latency: msd(1), Status: 503, Shed: true},
		{Latency: msd(2), Status: 503, Shed: true},
	}
	got := summariseLevel(8, 2*time.Second, rs)
	want := Summary{
		// QPS counts the 2xx answers; the two shed requests are neither answers
		// (their latency is left out) nor errors.
		Clients: 8, Requests: 8, Elapsed: 2, QPS: 1.5, Shed: 2, Errors: 3,
		Status:   map[string]int{"2xx": 3, "4xx": 1, "5xx": 1, "transport": 1, "shed": 2},
		Degraded: map[string]int{"graph": 2, "bm25": 1},
		// answered latencies sorted: 5 10 20 30 40 → p50 = 3rd, p90 = p99 = 5th
		Latency: Dist{N: 5, P50: 20, P90: 40, P99: 40, Max: 40},
		// server totals of the 2xx answers only: 8 18 30
		ServerTotal: Dist{N: 3, P50: 18, P90: 30, P99: 30, Max: 30},
		PhaseP50:    map[string]float64{"parse": 2, "retrieve": 15},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("summariseLevel mismatch (-want +got):\n%s", diff)
	}
}

func TestStatusClass(t *testing.T) {
	for code, want := range map[int]string{0: "transport", 200: "2xx", 204: "2xx", 302: "3xx", 400: "4xx", 429: "4xx", 500: "5xx", 503: "5xx"} {
		if got := statusClass(code); got != want {
			t.Errorf("statusClass(%d): got %q, want %q", code, got, want)
		}
	}
}

func TestParseStatus(t *testing.T) {
	in := "Name:\tsearch\nVmPeak:\t 2000000 kB\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\nThreads:\t9\n"
	rss, hwm, err := parseStatus(in)
	if err != nil {
		t.Fatalf("parseStatus: %v", err)
	}
	if rss != 100 || hwm != 200 {
		t.Errorf("parseStatus: got rss %v hwm %v MiB, want 100 and 200", rss, hwm)
	}
	if _, _, err := parseStatus("Name:\tx\n"); err == nil {
		t.Error("parseStatus without VmRSS: got nil error, want one")
	}
	if _, _, err := parseStatus("VmRSS:\t12 MB\n"); err == nil {
		t.Error("parseStatus with a unit other than kB: got nil error, want one")
	}
}

func TestCheckFault(t *testing.T) {
	sec := func(v float64) time.Duration { return time.Duration(v * float64(time.Second)) }
	w := Window{StopBegin: sec(9), StopDone: sec(10), StartBegin: sec(20), StartDone: sec(25), Grace: sec(2)}
	ok := []Result{
		{Start: sec(1), Latency: sec(0.02), Status: 200, Entities: 2},                               // before
		{Start: sec(11), Latency: sec(0.02), Status: 200, Entities: 2, Degraded: []string{"graph"}}, // outage
		{Start: sec(12), Latency: sec(0.02), Status: 200, Entities: 1, Degraded: []string{"expansion"}},
		{Start: sec(13), Latency: sec(0.02), Status: 200, Entities: 0},                              // no kg call needed
		{Start: sec(19.99), Latency: sec(0.05), Status: 200, Entities: 1},                           // straddles the restart: not judged
		{Start: sec(26), Latency: sec(0.02), Status: 200, Entities: 1, Degraded: []string{"graph"}}, // inside grace: not judged
		{Start: sec(28), Latency: sec(0.02), Status: 200, Entities: 3},                              // recovered
	}
	tests := []struct {
		name       string
		rs         []Result
		tolerance  float64
		wantOK     bool
		wantCounts [7]int // before, answered, 5xx, outageWithEntity, outageDegraded, recovered, recoveredDegraded
	}{
		{"held", ok, 0, true, [7]int{1, 7, 0, 2, 2, 1, 0}},
		{"outage answer not degraded", append(clone(ok), Result{Start: sec(15), Latency: sec(0.01), Status: 200, Entities: 1}),
			0, false, [7]int{1, 8, 0, 3, 2, 1, 0}},
		{"5xx during outage", append(clone(ok), Result{Start: sec(15), Latency: sec(0.01), Status: 503}),
			0, false, [7]int{1, 8, 1, 2, 2, 1, 0}},
		{"unanswered", append(clone(ok), Result{Start: sec(15), Latency: sec(10), Status: 0, Err: "timeout"}),
			0, false, [7]int{1, 7, 0, 2, 2, 1, 0}},
		{"still degraded after recovery", append(clone(ok), Result{Start: sec(29), Latency: sec(0.01), Status: 200, Entities: 1, Degraded: []string{"graph"}}),
			0, false, [7]int{1, 8, 0, 2, 2, 2, 1}},
		{"nothing after recovery", ok[:5], 0, false, [7]int{1, 5, 0, 2, 2, 0, 0}},
		{"no outage answers with entities", []Result{ok[0], ok[3], ok[6]}, 0, false, [7]int{1, 3, 0, 0, 0, 1, 0}},
		{"within tolerance", append(clone(ok), Result{Start: sec(29), Latency: sec(0.01), Status: 200, Entities: 1, Degraded: []string{"graph"}}),
			0.5, true, [7]int{1, 8, 0, 2, 2, 2, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := w
			w.Tolerance = tc.tolerance
			f := checkFault(tc.rs, w)
			got := [7]int{f.Before, f.Answered, f.Status5xx, f.OutageWithEntity, f.OutageDegraded, f.Recovered, f.RecoveredDegraded}
			if got != tc.wantCounts {
				t.Errorf("counts: got %v, want %v", got, tc.wantCounts)
			}
			if f.OK() != tc.wantOK {
				t.Errorf("OK: got %v, want %v (violations %q)", f.OK(), tc.wantOK, f.Violations)
			}
		})
	}
}

func clone(rs []Result) []Result { return append([]Result(nil), rs...) }

func TestParseFlagsRejects(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"bad level", []string{"-clients", "1,x"}},
		{"zero level", []string{"-clients", "0"}},
		{"unbounded", []string{"-duration", "0", "-requests", "0"}},
		{"fault without duration", []string{"-duration", "0", "-requests", "10", "-fault"}},
		{"relative url", []string{"-search", "localhost"}},
		{"k out of range", []string{"-k", "0"}},
		{"missing queries", []string{"-queries", t.TempDir() + "/none.json"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := parseFlags(tc.args); err == nil {
				t.Errorf("parseFlags(%q): got nil error, want one", tc.args)
			}
		})
	}
}

func TestLoadQueries(t *testing.T) {
	dir := t.TempDir()
	js := dir + "/q.json"
	txt := dir + "/q.txt"
	if err := os.WriteFile(js, []byte(`{"queries":[{"id":"a","query":" one "},{"id":"b","query":"two"},{"id":"c","query":""}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(txt, []byte("one\n\n two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{js, txt} {
		got, err := loadQueries(p)
		if err != nil {
			t.Fatalf("loadQueries(%s): %v", p, err)
		}
		if diff := cmp.Diff([]string{"one", "two"}, got); diff != "" {
			t.Errorf("loadQueries(%s) mismatch (-want +got):\n%s", p, diff)
		}
	}
	if err := os.WriteFile(js, []byte(`{"queries":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := loadQueries(js); err == nil {
		t.Error("loadQueries with no queries: got nil error, want one")
	}
}

// TestDoSearchShed: a 503 with Retry-After (admission control) is shed, a 503
// without it is an error, and neither is an answer.
func TestDoSearchShed(t *testing.T) {
	for _, tc := range []struct {
		name       string
		retryAfter string
		wantShed   bool
	}{{"admission control", "1", true}, {"other 503", "", false}} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				if tc.retryAfter != "" {
					w.Header().Set("Retry-After", tc.retryAfter)
				}
				w.Header().Set("Content-Type", "application/problem+json")
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = w.Write([]byte(`{"title":"overloaded"}`))
			}))
			defer srv.Close()
			r := doSearch(srv.Client(), config{search: srv.URL, k: 10}, "q", time.Now())
			if r.Status != http.StatusServiceUnavailable || r.Shed != tc.wantShed {
				t.Errorf("got status %d shed %v, want 503 shed %v", r.Status, r.Shed, tc.wantShed)
			}
			s := summariseLevel(1, time.Second, []Result{r})
			if s.Shed+s.Errors != 1 || (s.Shed == 1) != tc.wantShed || s.QPS != 0 {
				t.Errorf("summary: shed %d errors %d QPS %v", s.Shed, s.Errors, s.QPS)
			}
		})
	}
}
