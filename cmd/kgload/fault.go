package main

import (
	"fmt"
	"slices"
	"time"
)

// Window marks the kg outage on the level's clock.
type Window struct {
	StopBegin  time.Duration // the stop command was issued
	StopDone   time.Duration // the stop command returned: kg is down
	StartBegin time.Duration // the start command was issued
	StartDone  time.Duration // the start command returned: kg answers /readyz
	Grace      time.Duration // allowed after StartDone for search to notice
	// Tolerance is the fraction of answers after recovery that may still be
	// degraded (retriever timeouts under saturation look the same as an outage);
	// 0 demands none. The pre-outage rate is reported next to it for comparison.
	Tolerance float64
}

// FaultReport is the outcome of the degradation contract.
type FaultReport struct {
	Window            map[string]float64 `json:"window_s"`
	Before            int                `json:"before_outage"`
	BeforeDegraded    int                `json:"before_outage_degraded_graph"`
	Answered          int                `json:"answered"`
	Unanswered        int                `json:"unanswered"`
	Status5xx         int                `json:"status_5xx"`
	OutageWithEntity  int                `json:"outage_with_entities"`
	OutageDegraded    int                `json:"outage_degraded_graph"`
	OutageNoEntity    int                `json:"outage_without_entities"`
	Recovered         int                `json:"after_recovery"`
	RecoveredDegraded int                `json:"after_recovery_degraded_graph"`
	Violations        []string           `json:"violations"`
}

// OK reports whether the contract held.
func (f *FaultReport) OK() bool { return len(f.Violations) == 0 }

func graphDegraded(r Result) bool {
	return slices.Contains(r.Degraded, "graph") || slices.Contains(r.Degraded, "expansion")
}

// checkFault applies the degradation contract to the results of one level:
// every request answered and no 5xx; every answer that started after kg was
// stopped and finished before it was started again, for a query with entities
// (queries without entities never call kg), lists graph or expansion in
// degraded; answers that started Grace after kg was ready again do not; and
// both windows saw at least one such request, so the check was exercised.
func checkFault(rs []Result, w Window) *FaultReport {
	f := &FaultReport{Window: map[string]float64{
		"stop_begin": w.StopBegin.Seconds(), "stop_done": w.StopDone.Seconds(), "start_begin": w.StartBegin.Seconds(),
		"start_done": w.StartDone.Seconds(), "grace": w.Grace.Seconds()}}
	for _, r := range rs {
		if r.Status == 0 {
			f.Unanswered++
			continue
		}
		f.Answered++
		if r.Status >= 500 {
			f.Status5xx++
		}
		if r.Status < 200 || r.Status >= 300 {
			continue
		}
		switch {
		case r.Start >= w.StopDone && r.Start+r.Latency <= w.StartBegin:
			if r.Entities == 0 {
				f.OutageNoEntity++
				continue
			}
			f.OutageWithEntity++
			if graphDegraded(r) {
				f.OutageDegraded++
			}
		case r.Start+r.Latency <= w.StopBegin:
			// Finished before kg was touched: the baseline degraded rate.
			f.Before++
			if graphDegraded(r) {
				f.BeforeDegraded++
			}
		case r.Start >= w.StartDone+w.Grace:
			f.Recovered++
			if graphDegraded(r) {
				f.RecoveredDegraded++
			}
		}
	}
	if f.Unanswered > 0 {
		f.Violations = append(f.Violations, fmt.Sprintf("%d requests got no HTTP answer, want 0", f.Unanswered))
	}
	if f.Status5xx > 0 {
		f.Violations = append(f.Violations, fmt.Sprintf("%d answers were 5xx, want 0", f.Status5xx))
	}
	if f.OutageWithEntity == 0 {
		f.Violations = append(f.Violations, "no answer for a query with entities fell inside the outage; the check was not exercised")
	} else if f.OutageDegraded != f.OutageWithEntity {
		f.Violations = append(f.Violations, fmt.Sprintf("%d of %d outage answers for queries with entities lack degraded graph/expansion",
			f.OutageWithEntity-f.OutageDegraded, f.OutageWithEntity))
	}
	if f.Recovered == 0 {
		f.Violations = append(f.Violations, "no request started after kg was back plus grace; run longer")
	} else if float64(f.RecoveredDegraded) > w.Tolerance*float64(f.Recovered) {
		f.Violations = append(f.Violations, fmt.Sprintf("%d of %d answers after recovery still degraded graph/expansion, want at most %.1f%% (before the outage: %d of %d)",
			f.RecoveredDegraded, f.Recovered, 100*w.Tolerance, f.BeforeDegraded, f.Before))
	}
	return f
}
