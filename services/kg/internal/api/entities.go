package api

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/kgsearch/kgsearch/pkg/graph"
	"github.com/kgsearch/kgsearch/pkg/httpserver"
	"github.com/kgsearch/kgsearch/pkg/kgapi"
)

func (s *Service) listEntities(c *gin.Context) error {
	prefix := c.Query("prefix")
	typ := strings.TrimSpace(c.Query("type"))
	if len(prefix) > maxNameBytes || !utf8.ValidString(prefix) {
		return httpserver.BadRequest("prefix", fmt.Sprintf("prefix must be UTF-8 text of at most %d bytes", maxNameBytes))
	}
	if typ != "" && !s.x.HasType(typ) {
		return httpserver.BadRequest("type", fmt.Sprintf("type %q is not an entity type of the taxonomy (for example database, programming_language, framework)", clip(typ, 64)))
	}
	limit := 0
	if v := c.Query("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return httpserver.BadRequest("limit", fmt.Sprintf("limit %q is not an integer", clip(v, 32)))
		}
		limit = n
	}
	limit, err := limitParam(limit, defaultLimit, maxListLimit)
	if err != nil {
		return err
	}
	if err := s.needGraph(); err != nil {
		return err
	}
	ctx, cancel := s.graphCtx(c)
	defer cancel()
	list, err := s.g.EntitiesByPrefix(ctx, prefix, typ, limit)
	if err != nil {
		return graphError(err)
	}
	out := kgapi.EntityList{Entities: make([]kgapi.Entity, len(list))}
	for i, e := range list {
		out.Entities[i] = kgapi.Entity{
			EntityRef: kgapi.EntityRef{ID: e.ID, Name: e.Name, Type: e.Type},
			Mentions:  int(e.MentionCount), Documents: int(e.DocFreq),
		}
	}
	return reply(c, http.StatusOK, out)
}

func (s *Service) entity(c *gin.Context) error {
	id := strings.TrimSpace(c.Param("id"))
	if err := checkID("id", id); err != nil {
		return err
	}
	if err := s.needGraph(); err != nil {
		return err
	}
	ctx, cancel := s.graphCtx(c)
	defer cancel()
	d, err := s.g.Entity(ctx, id)
	if errors.Is(err, graph.ErrNotFound) {
		// A name or alias instead of an id: resolve it as a query would.
		if rid := s.x.Resolve(id); rid != "" && rid != id {
			d, err = s.g.Entity(ctx, rid)
		}
	}
	if errors.Is(err, graph.ErrNotFound) {
		return httpserver.NotFound(fmt.Sprintf("no entity with id %q; GET /api/v1/entities?prefix= lists entities", clip(id, 128)))
	}
	if err != nil {
		return graphError(err)
	}
	out := kgapi.Entity{
		EntityRef: kgapi.EntityRef{ID: d.ID, Name: d.Name, Type: d.Type},
		Aliases:   d.Aliases, Mentions: int(d.MentionCount), Documents: int(d.DocFreq),
	}
	for _, r := range d.Relations {
		dir := "out"
		if r.From != d.ID {
			dir = "in"
		}
		out.Relations = append(out.Relations, kgapi.Relation{
			Type: r.Type, Direction: dir, Other: kgapi.EntityRef{ID: r.Other.ID, Name: r.Other.Name, Type: r.Other.Type},
			Weight: r.Weight, Confidence: r.Confidence,
		})
	}
	return reply(c, http.StatusOK, out)
}

func (s *Service) stats(c *gin.Context) error {
	if err := s.needGraph(); err != nil {
		return err
	}
	ctx, cancel := s.graphCtx(c)
	defer cancel()
	st, err := s.g.Stats(ctx)
	if err != nil {
		return graphError(err)
	}
	out := kgapi.Stats{
		Documents: st.Documents, Chunks: st.Chunks, Entities: st.Entities, Relations: st.Relations,
		Mentions: st.Mentions, EntityTypes: st.EntitiesByType, RelationTypes: st.RelationsByType,
		Placeholders: st.Placeholders, Links: st.Links,
	}
	if s.learner != nil {
		out.LearnedTerms = len(s.learner.Promoted())
		out.LearnerDocuments = s.learner.Documents()
	}
	return reply(c, http.StatusOK, out)
}

func (s *Service) deleteDocument(c *gin.Context) error {
	id := strings.TrimSpace(c.Param("id"))
	if err := checkID("id", id); err != nil {
		return err
	}
	if err := s.needGraph(); err != nil {
		return err
	}
	ctx, cancel := s.graphCtx(c)
	defer cancel()
	err := s.g.DeleteDocument(ctx, id)
	if errors.Is(err, graph.ErrNotFound) {
		if s.learner != nil {
			s.learner.Forget(id)
		}
		return httpserver.NotFound(fmt.Sprintf("no document with id %q", clip(id, 128)))
	}
	if err != nil {
		return graphError(err)
	}
	if s.learner != nil {
		s.learner.Forget(id)
	}
	s.changes.Add(1)
	c.Status(http.StatusNoContent)
	return nil
}
