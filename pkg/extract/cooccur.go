package extract

import (
	"math"
	"slices"
)

// NPMI is the normalised pointwise mutual information of two events observed
// countA and countB times, together countAB times, in n observations:
//
//	NPMI = log(p(a,b) / (p(a) p(b))) / -log p(a,b)
//
// It is 1 when the events always occur together, 0 when they are independent
// and tends to -1 when they never co-occur (it returns -1 when countAB is 0).
func NPMI(countA, countB, countAB, n int) float64 {
	if n <= 0 || countA <= 0 || countB <= 0 || countAB <= 0 {
		return -1
	}
	pab := float64(countAB) / float64(n)
	pa := float64(countA) / float64(n)
	pb := float64(countB) / float64(n)
	if pab >= 1 {
		return 1
	}
	v := math.Log(pab/(pa*pb)) / -math.Log(pab)
	return max(-1, min(1, v))
}

// Pair is two entities that co-occur, A < B.
type Pair struct {
	A, B  string
	Count int     // chunks holding both
	NPMI  float64 // association over all chunks
}

// Cooccurrence computes, over the entity sets of many chunks (one set per chunk;
// duplicates inside a set are ignored), every pair found together in at least
// minSupport chunks whose NPMI is at least minNPMI, best first.
func Cooccurrence(chunks [][]string, minSupport int, minNPMI float64) []Pair {
	single := make(map[string]int)
	joint := make(map[[2]string]int)
	for _, set := range chunks {
		ids := dedup(set)
		for i, a := range ids {
			single[a]++
			for _, b := range ids[i+1:] {
				joint[[2]string{a, b}]++
			}
		}
	}
	n := len(chunks)
	var out []Pair
	for k, c := range joint {
		if c < minSupport {
			continue
		}
		v := NPMI(single[k[0]], single[k[1]], c, n)
		if v >= minNPMI {
			out = append(out, Pair{A: k[0], B: k[1], Count: c, NPMI: v})
		}
	}
	sortPairs(out)
	return out
}

func sortPairs(ps []Pair) {
	slices.SortFunc(ps, func(x, y Pair) int {
		switch {
		case x.NPMI > y.NPMI:
			return -1
		case x.NPMI < y.NPMI:
			return 1
		case x.Count != y.Count:
			return y.Count - x.Count
		case x.A != y.A:
			if x.A < y.A {
				return -1
			}
			return 1
		case x.B < y.B:
			return -1
		case x.B > y.B:
			return 1
		}
		return 0
	})
}

// dedup returns the distinct ids, sorted.
func dedup(ids []string) []string {
	out := slices.Clone(ids)
	slices.Sort(out)
	return slices.Compact(out)
}

// cooccurConfidence turns an NPMI and a support count into a confidence: the
// association, discounted when it rests on few chunks.
func cooccurConfidence(npmi float64, count int) float64 {
	if npmi <= 0 {
		return 0
	}
	return npmi * float64(count) / float64(count+1)
}
