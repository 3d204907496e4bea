package pipeline

import (
	"errors"
	"slices"
	"time"

	"github.com/kgsearch/kgsearch/pkg/queryparse"
)

// parse is phase 1: it validates the request, parses the query and starts the
// request's state.
func (p *Pipeline) parse(req Request) (*search, error) {
	start := time.Now()
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if req.K == 0 {
		req.K = DefaultK
	}
	t := time.Now()
	q, err := p.parser.Parse(req.Query)
	if err != nil {
		return nil, queryError(err, req.Query)
	}
	s := &search{req: req, start: start, q: q, keys: entityKeys(q.Entities), resp: &Response{Query: queryInfo(q)},
		factors: pageFactorsFor(req, q.Normalized)}
	s.took.parse = time.Since(t)
	p.observe("parse", s.took.parse)
	return s, nil
}

// queryError is the field error for a query the parser refused. A query of only
// punctuation, symbols or emoji is not empty to the person who typed it: the
// answer says what is missing.
func queryError(err error, q string) error {
	var tl *queryparse.TooLongError
	switch {
	case errors.Is(err, queryparse.ErrEmpty) && queryparse.Normalize(q) != "":
		return &FieldError{Field: "q", Reason: "the query has no letters or digits to search for (punctuation, symbols and emoji alone are not searched): give at least one word"}
	case errors.Is(err, queryparse.ErrEmpty):
		return &FieldError{Field: "q", Reason: "the query is empty: give at least one word to search for"}
	case errors.As(err, &tl):
		return &FieldError{Field: "q", Reason: tl.Error()}
	}
	return &FieldError{Field: "q", Reason: err.Error()}
}

func queryInfo(q queryparse.Query) QueryInfo {
	qi := QueryInfo{Original: q.Original, Normalized: q.Normalized, Intent: string(q.Intent), Confidence: q.Confidence,
		Variants: Variants{Original: q.Variants.Original, EntityEmphasised: q.Variants.EntityEmphasised, EntityOnly: q.Variants.EntityOnly},
		Entities: make([]QueryEntity, len(q.Entities))}
	for i, e := range q.Entities {
		qi.Entities[i] = QueryEntity{Text: e.Text, Type: e.Type, Confidence: round(e.Confidence, 3)}
	}
	return qi
}

// entityKeys returns the ids the kg service knows the query entities by (their
// normalised keys; the name when a finder gave no id).
func entityKeys(ents []queryparse.Entity) []string {
	out := make([]string, 0, len(ents))
	for _, e := range ents {
		k := e.ID
		if k == "" {
			k = e.Name
		}
		if k == "" {
			k = e.Text
		}
		if k != "" && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}
