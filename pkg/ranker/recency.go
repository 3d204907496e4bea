package ranker

import "time"

const day = 24 * time.Hour

// recencyTiers are the design's tiers: an age below Limit scores Score.
var recencyTiers = []struct {
	Limit time.Duration
	Score float64
}{
	{7 * day, 1.0},
	{30 * day, 0.8},
	{90 * day, 0.6},
	{180 * day, 0.4},
	{365 * day, 0.3},
}

// olderScore is the recency of anything a year old or older.
const olderScore = 0.2

// RecencyScore returns the recency tier of a page dated t at time now:
// age < 7 d → 1.0, < 30 d → 0.8, < 90 d → 0.6, < 180 d → 0.4, < 365 d → 0.3, older → 0.2.
// A zero t (date unknown) scores UnknownRecency (0.2). A date in the future (clock skew,
// scheduled posts) counts as age 0.
func RecencyScore(t, now time.Time) float64 {
	if t.IsZero() {
		return UnknownRecency
	}
	age := now.Sub(t)
	for _, tier := range recencyTiers {
		if age < tier.Limit {
			return tier.Score
		}
	}
	return olderScore
}
