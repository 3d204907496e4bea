package entitygraph

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/kgsearch/kgsearch/pkg/fielderr"
	"github.com/kgsearch/kgsearch/pkg/graph"
	"github.com/kgsearch/kgsearch/pkg/kgapi"
)

// Entities lists the entities whose names start with prefix, of type typ when it
// is not empty, most mentioned first. limit 0 means DefaultLimit.
func (s *Service) Entities(ctx context.Context, prefix, typ string, limit int) (kgapi.EntityList, error) {
	typ = strings.TrimSpace(typ)
	if len(prefix) > maxNameBytes || !utf8.ValidString(prefix) {
		return kgapi.EntityList{}, fielderr.Newf("prefix", "prefix must be UTF-8 text of at most %d bytes", maxNameBytes)
	}
	if typ != "" && !s.d.Extractor.HasType(typ) {
		return kgapi.EntityList{}, fielderr.Newf("type", "type %q is not an entity type of the taxonomy (for example database, programming_language, framework)", Clip(typ, 64))
	}
	limit, err := limitParam(limit, DefaultLimit, maxListLimit)
	if err != nil {
		return kgapi.EntityList{}, err
	}
	ctx, cancel, err := s.graphCtx(ctx)
	if err != nil {
		return kgapi.EntityList{}, err
	}
	defer cancel()
	list, err := s.d.Lookup.EntitiesByPrefix(ctx, prefix, typ, limit)
	if err != nil {
		return kgapi.EntityList{}, err
	}
	out := kgapi.EntityList{Entities: make([]kgapi.Entity, len(list))}
	for i, e := range list {
		out.Entities[i] = kgapi.Entity{EntityRef: ref(e.EntityRef), Mentions: int(e.MentionCount), Documents: int(e.DocFreq)}
	}
	return out, nil
}

// Entity returns one entity with its aliases, counters and strongest relations.
// id may also be a name or alias, resolved as a query would be. An entity the
// graph does not hold is an error wrapping graph.ErrNotFound.
func (s *Service) Entity(ctx context.Context, id string) (kgapi.Entity, error) {
	id = strings.TrimSpace(id)
	if err := checkID("id", id); err != nil {
		return kgapi.Entity{}, err
	}
	ctx, cancel, err := s.graphCtx(ctx)
	if err != nil {
		return kgapi.Entity{}, err
	}
	defer cancel()
	d, err := s.d.Lookup.Entity(ctx, id)
	if errors.Is(err, graph.ErrNotFound) {
		if rid := s.d.Extractor.Resolve(id); rid != "" && rid != id {
			d, err = s.d.Lookup.Entity(ctx, rid)
		}
	}
	if err != nil {
		return kgapi.Entity{}, err
	}
	out := kgapi.Entity{EntityRef: ref(d.EntityRef), Aliases: d.Aliases, Mentions: int(d.MentionCount), Documents: int(d.DocFreq)}
	for _, r := range d.Relations {
		dir := "out"
		if r.From != d.ID {
			dir = "in"
		}
		out.Relations = append(out.Relations, kgapi.Relation{
			Type: r.Type, Direction: dir, Other: ref(r.Other), Weight: r.Weight, Confidence: r.Confidence,
		})
	}
	return out, nil
}

// Stats reports what the graph holds and what the learner has learned.
func (s *Service) Stats(ctx context.Context) (kgapi.Stats, error) {
	ctx, cancel, err := s.graphCtx(ctx)
	if err != nil {
		return kgapi.Stats{}, err
	}
	defer cancel()
	st, err := s.d.Lookup.Stats(ctx)
	if err != nil {
		return kgapi.Stats{}, err
	}
	out := kgapi.Stats{
		Documents: st.Documents, Chunks: st.Chunks, Entities: st.Entities, Relations: st.Relations,
		Mentions: st.Mentions, EntityTypes: st.EntitiesByType, RelationTypes: st.RelationsByType,
		Placeholders: st.Placeholders, Links: st.Links,
	}
	if s.d.Learner != nil {
		out.LearnedTerms = len(s.d.Learner.Promoted())
		out.LearnerDocuments = s.d.Learner.Documents()
	}
	return out, nil
}

// DeleteDocument removes a document and what only it supported from the graph,
// and its contribution from the learner. A document the graph does not hold is an
// error wrapping graph.ErrNotFound (the learner forgets it all the same).
func (s *Service) DeleteDocument(ctx context.Context, id string) error {
	id = strings.TrimSpace(id)
	if err := checkID("id", id); err != nil {
		return err
	}
	ctx, cancel, err := s.graphCtx(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	err = s.d.Writer.DeleteDocument(ctx, id)
	if err != nil && !errors.Is(err, graph.ErrNotFound) {
		return err
	}
	if s.d.Learner != nil {
		s.d.Learner.Forget(id)
	}
	if err != nil {
		return err
	}
	s.profileChanged(ctx, id, true)
	s.changes.Add(1)
	return nil
}
