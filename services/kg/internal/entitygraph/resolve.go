package entitygraph

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/kgsearch/kgsearch/pkg/extract"
	"github.com/kgsearch/kgsearch/pkg/fielderr"
)

// resolved is the outcome of resolving the names of a match or expand request.
type resolved struct {
	ids   []string   // distinct candidate entity ids, in request order
	names []string   // the request names, trimmed
	cands [][]string // per name, its candidate ids (none: no usable key)
}

// resolveNames validates the entities field and maps each name to candidate
// entity ids: the id the extractor resolves it to ("Postgres" → postgresql) and,
// when the name itself looks like an id (no upper case, no spaces) and differs,
// the name as given, so ids the extractor would not produce still match.
func (s *Service) resolveNames(names []string) (resolved, error) {
	if len(names) == 0 {
		return resolved{}, fielderr.New("entities", "entities is empty; send at least one entity name or id")
	}
	if len(names) > maxQueryNames {
		return resolved{}, fielderr.Newf("entities", "entities has %d entries, the maximum is %d", len(names), maxQueryNames)
	}
	r := resolved{names: make([]string, len(names)), cands: make([][]string, len(names))}
	seen := map[string]bool{}
	add := func(i int, id string) {
		r.cands[i] = append(r.cands[i], id)
		if !seen[id] {
			seen[id] = true
			r.ids = append(r.ids, id)
		}
	}
	for i, n := range names {
		n = strings.TrimSpace(n)
		if err := checkName(i, n); err != nil {
			return resolved{}, err
		}
		r.names[i] = n
		if extract.Key(n) == "" {
			continue
		}
		id := s.d.Extractor.Resolve(n)
		add(i, id)
		if n != id && n == strings.ToLower(n) && !strings.ContainsAny(n, " \t") {
			add(i, n)
		}
	}
	if len(r.ids) > maxQueryNames {
		return resolved{}, fielderr.Newf("entities", "entities resolve to %d candidate ids, the maximum is %d; send fewer names", len(r.ids), maxQueryNames)
	}
	return r, nil
}

func checkName(i int, n string) error {
	f := fmt.Sprintf("entities[%d]", i)
	if n == "" {
		return fielderr.New(f, f+" is empty")
	}
	if len(n) > maxNameBytes || !utf8.ValidString(n) {
		return fielderr.Newf(f, "%s must be UTF-8 text of at most %d bytes", f, maxNameBytes)
	}
	return nil
}

// unknown lists the request names none of whose candidate ids the graph holds.
func (r resolved) unknown(missing []string) []string {
	var out []string
	for i, n := range r.names {
		found := false
		for _, id := range r.cands[i] {
			if !slices.Contains(missing, id) {
				found = true
				break
			}
		}
		if !found {
			out = append(out, n)
		}
	}
	return out
}

// limitParam checks a limit: 0 means def, negative or above maxN is refused.
func limitParam(v, def, maxN int) (int, error) {
	if v == 0 {
		return def, nil
	}
	if v < 0 || v > maxN {
		return 0, fielderr.Newf("limit", "limit is %d, want 1..%d (0 or absent means %d)", v, maxN, def)
	}
	return v, nil
}

// checkID validates an id field (document, chunk or entity id).
func checkID(field, id string) error {
	if id == "" {
		return fielderr.New(field, field+" is empty")
	}
	if len(id) > maxIDBytes {
		return fielderr.Newf(field, "%s is %d bytes long, the maximum is %d", field, len(id), maxIDBytes)
	}
	if !utf8.ValidString(id) || strings.ContainsAny(id, "\x00\r\n") {
		return fielderr.New(field, field+" must be one line of UTF-8 text")
	}
	return nil
}

// Clip shortens s to at most n bytes on a rune boundary, marking the cut with "…";
// for echoing client input in messages.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
