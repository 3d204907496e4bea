package main

import (
	"math"
	"sort"
	"time"
)

// percentile returns the nearest-rank p-th percentile (0 < p <= 100) of sorted:
// the smallest value with at least p% of the values at or below it. It returns 0
// for an empty slice. sorted must be in ascending order.
func percentile(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	if p <= 0 {
		return sorted[0]
	}
	rank := int(math.Ceil(p / 100 * float64(n)))
	if rank < 1 {
		rank = 1
	}
	if rank > n {
		rank = n
	}
	return sorted[rank-1]
}

// Dist summarises a sample of millisecond values.
type Dist struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// summarise sorts a copy of vals and returns its distribution.
func summarise(vals []float64) Dist {
	s := append([]float64(nil), vals...)
	sort.Float64s(s)
	d := Dist{N: len(s), P50: percentile(s, 50), P90: percentile(s, 90), P99: percentile(s, 99)}
	if len(s) > 0 {
		d.Max = s[len(s)-1]
	}
	return d
}

// Result is one request as the client saw it.
type Result struct {
	Start    time.Duration // since the level started
	Latency  time.Duration
	Status   int  // 0 when the request got no HTTP answer
	Shed     bool // 503 with Retry-After: refused by admission control, not failed
	Err      string
	Degraded []string
	Entities int // query.entities in the answer
	TotalMS  float64
	Phases   map[string]float64
}

// Summary is one concurrency level.
type Summary struct {
	Clients     int                `json:"clients"`
	Requests    int                `json:"requests"`
	Elapsed     float64            `json:"elapsed_s"`
	QPS         float64            `json:"qps"`    // 2xx answers per second
	Status      map[string]int     `json:"status"` // 2xx, shed, 3xx, 4xx, 5xx, transport
	Shed        int                `json:"shed_503"`
	Errors      int                `json:"errors"` // every request neither 2xx nor shed
	Degraded    map[string]int     `json:"degraded"`
	Latency     Dist               `json:"latency_ms"`
	ServerTotal Dist               `json:"server_total_ms"`
	PhaseP50    map[string]float64 `json:"phase_p50_ms"`
	RSS         *Memory            `json:"rss,omitempty"`
	LoadAvg     string             `json:"loadavg,omitempty"`
	Fault       *FaultReport       `json:"fault,omitempty"`
	CPU         *CPU               `json:"cpu,omitempty"`
}

// statusClass names the class of an HTTP status; 0 means no answer.
func statusClass(code int) string {
	switch {
	case code == 0:
		return "transport"
	case code < 300:
		return "2xx"
	case code < 400:
		return "3xx"
	case code < 500:
		return "4xx"
	default:
		return "5xx"
	}
}

// summariseLevel folds the results of one level. QPS and the server-side numbers
// come from 2xx answers only; latency counts every request that got an HTTP answer
// except the ones admission control shed (a 503 with Retry-After, counted apart:
// a refusal at once is neither an answer nor a failure of a dependency).
func summariseLevel(clients int, elapsed time.Duration, rs []Result) Summary {
	s := Summary{Clients: clients, Requests: len(rs), Elapsed: elapsed.Seconds(),
		Status: map[string]int{}, Degraded: map[string]int{}, PhaseP50: map[string]float64{}}
	var lat, total []float64
	phases := map[string][]float64{}
	for _, r := range rs {
		if r.Shed {
			s.Status["shed"]++
			s.Shed++
			continue
		}
		s.Status[statusClass(r.Status)]++
		if r.Status != 0 {
			lat = append(lat, ms(r.Latency))
		}
		if r.Status < 200 || r.Status >= 300 {
			s.Errors++
			continue
		}
		for _, d := range r.Degraded {
			s.Degraded[d]++
		}
		total = append(total, r.TotalMS)
		for k, v := range r.Phases {
			phases[k] = append(phases[k], v)
		}
	}
	if elapsed > 0 {
		s.QPS = float64(s.Status["2xx"]) / elapsed.Seconds()
	}
	s.Latency, s.ServerTotal = summarise(lat), summarise(total)
	for k, v := range phases {
		s.PhaseP50[k] = summarise(v).P50
	}
	return s
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
