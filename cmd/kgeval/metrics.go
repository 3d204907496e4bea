package main

import (
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
)

// Judgments maps a page (its path relative to the site root, see PageKey) to its
// grade: 2 answers the query, 1 is useful, absent or 0 is not relevant.
type Judgments map[string]int

// relevantCount is the number of pages graded at least 1.
func (j Judgments) relevantCount() int {
	n := 0
	for _, g := range j {
		if g >= 1 {
			n++
		}
	}
	return n
}

// gains returns the grade of each ranked page, in rank order. A page that appears
// again further down the list (two results that normalise to one page) gains
// nothing the second time: the user has already seen it.
func (j Judgments) gains(ranked []string) []int {
	seen := make(map[string]bool, len(ranked))
	out := make([]int, len(ranked))
	for i, p := range ranked {
		if seen[p] {
			continue
		}
		seen[p] = true
		out[i] = max(j[p], 0)
	}
	return out
}

// NDCG is the normalised discounted cumulative gain of the first k ranked pages:
// DCG = sum over ranks i=1..k of grade_i / log2(i+1) (linear gain, the trec_eval
// convention), divided by the DCG of the ideal ranking, which puts every judged
// page in grade order. It is 0 when nothing is judged relevant.
func NDCG(ranked []string, j Judgments, k int) float64 {
	ideal := make([]int, 0, len(j))
	for _, g := range j {
		if g > 0 {
			ideal = append(ideal, g)
		}
	}
	slices.Sort(ideal)
	slices.Reverse(ideal)
	idcg := dcg(ideal, k)
	if idcg == 0 {
		return 0
	}
	return dcg(j.gains(ranked), k) / idcg
}

func dcg(gains []int, k int) float64 {
	s := 0.0
	for i, g := range gains {
		if i >= k {
			break
		}
		s += float64(g) / math.Log2(float64(i+2))
	}
	return s
}

// MRR is the reciprocal rank of the first page graded at least 1 within the first
// k, or 0 when there is none (the per-query term of the mean reciprocal rank).
func MRR(ranked []string, j Judgments, k int) float64 {
	for i, g := range j.gains(ranked) {
		if i >= k {
			break
		}
		if g >= 1 {
			return 1 / float64(i+1)
		}
	}
	return 0
}

// Recall is the fraction of the pages graded at least 1 that appear within the
// first k ranked pages, or 0 when nothing is judged relevant.
func Recall(ranked []string, j Judgments, k int) float64 {
	total := j.relevantCount()
	if total == 0 {
		return 0
	}
	found := 0
	for i, g := range j.gains(ranked) {
		if i >= k {
			break
		}
		if g >= 1 {
			found++
		}
	}
	return float64(found) / float64(total)
}

// PageKey turns a result URL into the page key the judgments use: the path
// relative to the site root, without query or fragment, with a directory
// ("tutorial/") meaning its index.html. URLs outside the site (another host,
// or a path outside the root's path) keep their full form, so they never match
// a judgment.
func PageKey(raw string, root *url.URL) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", fmt.Errorf("parse result url %q: %w", raw, err)
	}
	u.Fragment, u.RawFragment, u.RawQuery, u.ForceQuery = "", "", "", false
	if root != nil && u.IsAbs() && !strings.EqualFold(u.Host, root.Host) {
		return u.String(), nil
	}
	p := u.Path
	if root != nil {
		prefix := root.Path
		if !strings.HasSuffix(prefix, "/") {
			prefix += "/"
		}
		if !strings.HasPrefix(p, prefix) && p+"/" != prefix {
			return u.String(), nil
		}
		p = strings.TrimPrefix(p, prefix)
		if p+"/" == prefix {
			p = ""
		}
	}
	p = strings.TrimPrefix(p, "/")
	if p == "" || strings.HasSuffix(p, "/") {
		p += "index.html"
	}
	return p, nil
}
