package embed

import (
	"cmp"
	"slices"
)

// planBatches groups item indices into batches of at most maxRows items whose
// cost stays within maxTokens. With padded set (a model call pads every row to the
// longest), items are sorted by length so similar lengths share a batch and the
// cost is rows x longest; otherwise input order is kept and the cost is the sum of
// lengths. An item longer than maxTokens gets a batch of its own.
func planBatches(lengths []int, maxRows, maxTokens int, padded bool) [][]int {
	order := make([]int, len(lengths))
	for i := range order {
		order[i] = i
	}
	if padded {
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(lengths[b], lengths[a]) })
	}
	var out [][]int
	var cur []int
	longest, sum := 0, 0
	for _, i := range order {
		n := lengths[i]
		cost := sum + n
		if padded {
			cost = (len(cur) + 1) * max(longest, n)
		}
		if len(cur) > 0 && (len(cur) >= maxRows || cost > maxTokens) {
			out = append(out, cur)
			cur, longest, sum = nil, 0, 0
		}
		cur = append(cur, i)
		longest = max(longest, n)
		sum += n
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}
