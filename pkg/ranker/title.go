package ranker

// titleQuery holds the query in the normalised forms the title signal compares, and a
// per-call cache of title and heading scores: chunks of one document share their
// title and most of their heading path (match depends on the string only).
type titleQuery struct {
	terms    []string     // Terms(query): stopwords removed, stemmed, unique
	content  []string     // stems of the query's content words, in order
	entities [][]string   // stems of each query entity's words (stopwords kept), unique
	filter   prefixFilter // first bytes of every stem in terms, content and entities
	buf      []token
	cache    map[string]float64
}

func newTitleQuery(q Query, candidates int) *titleQuery {
	tq := &titleQuery{terms: Terms(q.Text), cache: make(map[string]float64, candidates/2)}
	for _, t := range appendTokens(nil, q.Text, nil) {
		if !t.stop {
			tq.content = append(tq.content, t.stem)
		}
	}
	seen := map[string]struct{}{}
	for _, e := range q.Entities {
		toks := appendTokens(nil, e, nil)
		if len(toks) == 0 {
			continue
		}
		seq := make([]string, len(toks))
		key := ""
		for i, t := range toks {
			seq[i] = t.stem
			key += " " + t.stem
		}
		if _, dup := seen[key]; dup {
			continue
		}
		seen[key] = struct{}{}
		tq.entities = append(tq.entities, seq)
	}
	all := append(append([]string{}, tq.terms...), tq.content...)
	for _, e := range tq.entities {
		all = append(all, e...)
	}
	tq.filter = newPrefixFilter(all)
	return tq
}

// score is the title signal of a chunk: the match of its title, or HeadingFactor times
// the best match of one of its headings, whichever is larger.
func (tq *titleQuery) score(title string, headings []string) float64 {
	if len(tq.terms) == 0 && len(tq.entities) == 0 {
		return 0
	}
	best := tq.cachedMatch(title)
	for _, h := range headings {
		if best >= HeadingFactor {
			break // a heading can add at most HeadingFactor
		}
		best = max(best, HeadingFactor*tq.cachedMatch(h))
	}
	return best
}

func (tq *titleQuery) cachedMatch(title string) float64 {
	if v, ok := tq.cache[title]; ok {
		return v
	}
	v := tq.match(title)
	tq.cache[title] = v
	return v
}

// match scores one title in [0,1]:
//
//	1                       when the query's content words appear in the title as a phrase
//	0.5·entity + 0.5·terms  when the query has entities
//	terms                   otherwise
//
// where entity is the fraction of query entities whose words appear as a phrase in the
// title and terms the fraction of query terms among the title's words (both after the
// light stemming of Terms; the phrase test skips stopwords on both sides).
func (tq *titleQuery) match(title string) float64 {
	if title == "" {
		return 0
	}
	toks := appendTokens(tq.buf[:0], title, tq.filter)
	tq.buf = toks
	if len(tq.content) > 0 && containsSeq(toks, tq.content, true) {
		return 1
	}
	var termOv float64
	if len(tq.terms) > 0 {
		hit := 0
		for _, q := range tq.terms {
			for _, t := range toks {
				if t.stem == q {
					hit++
					break
				}
			}
		}
		termOv = float64(hit) / float64(len(tq.terms))
	}
	if len(tq.entities) == 0 {
		return termOv
	}
	hit := 0
	for _, e := range tq.entities {
		if containsSeq(toks, e, false) {
			hit++
		}
	}
	entOv := float64(hit) / float64(len(tq.entities))
	if len(tq.terms) == 0 {
		return entOv
	}
	return 0.5*entOv + 0.5*termOv
}

// containsSeq reports whether needle occurs as a contiguous run of stems in hay,
// ignoring stopword tokens of hay when skipStop is set.
func containsSeq(hay []token, needle []string, skipStop bool) bool {
	for i := range hay {
		j, k := i, 0
		for j < len(hay) && k < len(needle) {
			if skipStop && hay[j].stop {
				if k == 0 {
					break
				}
				j++
				continue
			}
			if hay[j].stem != needle[k] {
				break
			}
			j++
			k++
		}
		if k == len(needle) {
			return true
		}
	}
	return false
}
