package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/kgsearch/kgsearch/pkg/graph"
	"github.com/kgsearch/kgsearch/pkg/httpserver"
	"github.com/kgsearch/kgsearch/pkg/kgapi"
	"github.com/kgsearch/kgsearch/pkg/toon"
	"github.com/kgsearch/kgsearch/services/kg/internal/entitygraph"
)

// Ingester writes documents into the graph.
type Ingester interface {
	Ingest(ctx context.Context, doc kgapi.Document) (kgapi.IngestResponse, error)
	DeleteDocument(ctx context.Context, id string) error
}

// Querier answers search's questions: chunks for entities, related entities and
// the entities of a query text.
type Querier interface {
	Match(ctx context.Context, req kgapi.MatchRequest) (kgapi.MatchResponse, error)
	Expand(ctx context.Context, req kgapi.ExpandRequest) (kgapi.ExpandResponse, error)
	Retrieve(ctx context.Context, req kgapi.RetrieveRequest) (kgapi.RetrieveResponse, error)
	Parse(text string) (kgapi.ParseResponse, error)
	Feedback(ctx context.Context, req kgapi.FeedbackRequest) (kgapi.FeedbackResponse, error)
}

// Browser answers the browsing reads.
type Browser interface {
	Entities(ctx context.Context, prefix, typ string, limit int) (kgapi.EntityList, error)
	Entity(ctx context.Context, id string) (kgapi.Entity, error)
	Stats(ctx context.Context) (kgapi.Stats, error)
}

// Deps are the API's collaborators (all *entitygraph.Service in the service).
type Deps struct {
	Ingest Ingester
	Query  Querier
	Browse Browser
}

// API serves the kg endpoints.
type API struct {
	srv *httpserver.Server
	d   Deps
}

// New returns the API on srv; Register mounts it.
func New(srv *httpserver.Server, d Deps) *API { return &API{srv: srv, d: d} }

// Register mounts the routes under /api/v1.
func (a *API) Register() {
	// Match routes on the escaped path so an id holding "/" (sent as %2F, as the
	// kgapi client does) is one path parameter; parameters are unescaped.
	a.srv.Engine().UseRawPath = true
	a.srv.Engine().UnescapePathValues = true
	v1 := a.srv.API("/api/v1")
	h := a.srv.Handle
	v1.POST("/ingest", h(a.ingest))
	v1.POST("/entities/match", h(a.match))
	v1.POST("/expand/entities", h(a.expand))
	v1.POST("/retrieve", h(a.retrieve))
	v1.GET("/entities", h(a.listEntities))
	v1.GET("/entities/:id", h(a.entity))
	v1.GET("/stats", h(a.stats))
	v1.DELETE("/documents/:id", h(a.deleteDocument))
	v1.POST("/parse", h(a.parse))
	v1.POST("/feedback", h(a.feedback))
}

func (a *API) ingest(c *gin.Context) error {
	if _, err := params(c, formatOnly); err != nil {
		return err
	}
	var req kgapi.IngestRequest
	if err := httpserver.DecodeJSON(c.Request.Body, &req); err != nil {
		return err
	}
	out, err := a.d.Ingest.Ingest(c.Request.Context(), req.Document)
	if err != nil {
		return graphError(err)
	}
	return reply(c, http.StatusOK, out)
}

func (a *API) match(c *gin.Context) error {
	if _, err := params(c, formatOnly); err != nil {
		return err
	}
	var req kgapi.MatchRequest
	if err := httpserver.DecodeJSON(c.Request.Body, &req); err != nil {
		return err
	}
	out, err := a.d.Query.Match(c.Request.Context(), req)
	if err != nil {
		return graphError(err)
	}
	return reply(c, http.StatusOK, out)
}

func (a *API) expand(c *gin.Context) error {
	if _, err := params(c, formatOnly); err != nil {
		return err
	}
	var req kgapi.ExpandRequest
	if err := httpserver.DecodeJSON(c.Request.Body, &req); err != nil {
		return err
	}
	out, err := a.d.Query.Expand(c.Request.Context(), req)
	if err != nil {
		return graphError(err)
	}
	return reply(c, http.StatusOK, out)
}

func (a *API) feedback(c *gin.Context) error {
	if _, err := params(c, formatOnly); err != nil {
		return err
	}
	var req kgapi.FeedbackRequest
	if err := httpserver.DecodeJSON(c.Request.Body, &req); err != nil {
		return err
	}
	out, err := a.d.Query.Feedback(c.Request.Context(), req)
	if err != nil {
		return graphError(err)
	}
	return reply(c, http.StatusOK, out)
}

func (a *API) retrieve(c *gin.Context) error {
	if _, err := params(c, formatOnly); err != nil {
		return err
	}
	var req kgapi.RetrieveRequest
	if err := httpserver.DecodeJSON(c.Request.Body, &req); err != nil {
		return err
	}
	out, err := a.d.Query.Retrieve(c.Request.Context(), req)
	if err != nil {
		return graphError(err)
	}
	return reply(c, http.StatusOK, out)
}

func (a *API) parse(c *gin.Context) error {
	if _, err := params(c, formatOnly); err != nil {
		return err
	}
	var req kgapi.ParseRequest
	if err := httpserver.DecodeJSON(c.Request.Body, &req); err != nil {
		return err
	}
	out, err := a.d.Query.Parse(req.Text)
	if err != nil {
		return err
	}
	return reply(c, http.StatusOK, out)
}

func (a *API) listEntities(c *gin.Context) error {
	q, err := params(c, entityListParams)
	if err != nil {
		return err
	}
	limit := 0
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return httpserver.BadRequest("limit", fmt.Sprintf("limit %q is not an integer", entitygraph.Clip(v, 32)))
		}
		limit = n
	}
	out, err := a.d.Browse.Entities(c.Request.Context(), q.Get("prefix"), q.Get("type"), limit)
	if err != nil {
		return graphError(err)
	}
	return reply(c, http.StatusOK, out)
}

func (a *API) entity(c *gin.Context) error {
	if _, err := params(c, formatOnly); err != nil {
		return err
	}
	id := c.Param("id")
	out, err := a.d.Browse.Entity(c.Request.Context(), id)
	if errors.Is(err, graph.ErrNotFound) {
		return httpserver.NotFound(fmt.Sprintf("no entity with id %q; GET /api/v1/entities?prefix= lists entities", entitygraph.Clip(strings.TrimSpace(id), 128)))
	}
	if err != nil {
		return graphError(err)
	}
	return reply(c, http.StatusOK, out)
}

func (a *API) stats(c *gin.Context) error {
	if _, err := params(c, formatOnly); err != nil {
		return err
	}
	out, err := a.d.Browse.Stats(c.Request.Context())
	if err != nil {
		return graphError(err)
	}
	return reply(c, http.StatusOK, out)
}

func (a *API) deleteDocument(c *gin.Context) error {
	if _, err := httpserver.StrictQuery(c.Request, httpserver.QuerySpec{}); err != nil {
		return err // 204 has no body: no format, no Accept to check
	}
	id := c.Param("id")
	err := a.d.Ingest.DeleteDocument(c.Request.Context(), id)
	if errors.Is(err, graph.ErrNotFound) {
		return httpserver.NotFound(fmt.Sprintf("no document with id %q", entitygraph.Clip(strings.TrimSpace(id), 128)))
	}
	if err != nil {
		return graphError(err)
	}
	c.Status(http.StatusNoContent)
	return nil
}

// graphError maps the logic's errors to what the client is told. Field errors
// (*fielderr.Error) and anything unknown go on to pkg/httpserver's mapper.
func graphError(err error) error {
	switch {
	case errors.Is(err, entitygraph.ErrStarting):
		return httpserver.Unavailable("the kg service is starting: the graph database (Neo4j) is not reachable or its schema is not initialised yet; retry later", err)
	case errors.Is(err, graph.ErrUnavailable), errors.Is(err, graph.ErrNoSchema):
		return httpserver.Unavailable("the graph database (Neo4j) is unavailable; retry later", err)
	case errors.Is(err, context.DeadlineExceeded):
		return httpserver.Timeout("the graph database (Neo4j) did not answer in time; retry later", err)
	case errors.Is(err, graph.ErrNotFound):
		return &httpserver.Error{Status: http.StatusNotFound, Title: "not found", Detail: "not found", Err: err}
	case errors.Is(err, graph.ErrInvalid):
		msg := err.Error()
		if i := strings.Index(msg, graph.ErrInvalid.Error()+": "); i >= 0 {
			msg = msg[i+len(graph.ErrInvalid.Error())+2:]
		}
		e := httpserver.BadRequest("", "the graph store refused the request: "+msg)
		e.Err = err
		return e
	}
	return err
}

// The URL parameters the routes take (httpserver.StrictQuery): the answer's format
// everywhere, and the list's filters on GET /api/v1/entities.
var (
	formatOnly       = httpserver.QuerySpec{Names: []string{"format"}}
	entityListParams = httpserver.QuerySpec{Names: []string{"prefix", "type", "limit", "format"},
		Instead: map[string]string{"q": "prefix", "name": "prefix", "k": "limit", "size": "limit", "n": "limit"}}
)

// params reads the request's URL query strictly (an unknown or repeated parameter
// is a 400 naming it), refuses a format other than json or toon, and an Accept
// header naming neither (406): the answer would otherwise be JSON regardless.
func params(c *gin.Context, spec httpserver.QuerySpec) (url.Values, error) {
	q, err := httpserver.StrictQuery(c.Request, spec)
	if err != nil {
		return nil, err
	}
	if f := q.Get("format"); f != "" {
		if _, ok := toon.ParseFormat(f); !ok {
			return nil, httpserver.BadRequest("format", fmt.Sprintf("must be json or toon, got %q", entitygraph.Clip(f, 32)))
		}
		return q, nil
	}
	if err := httpserver.Acceptable(c.Request, "application/json", "text/toon", "application/toon"); err != nil {
		return nil, err
	}
	return q, nil
}

// reply writes v as JSON, or TOON when the client asks for it (Accept: text/toon
// or ?format=toon).
func reply(c *gin.Context, status int, v any) error {
	if err := toon.WriteHTTP(c.Writer, c.Request, status, v, toon.FormatJSON); err != nil {
		return fmt.Errorf("encode response: %w", err)
	}
	return nil
}
