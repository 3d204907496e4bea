// Package api is the search service's HTTP API: search (GET and POST), suggest,
// status and the admin reindex, answering in TOON by default and JSON on request.
package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/kgsearch/kgsearch/pkg/httpserver"
	"github.com/kgsearch/kgsearch/pkg/kgapi"
	"github.com/kgsearch/kgsearch/pkg/toon"
	"github.com/kgsearch/kgsearch/services/search/internal/admission"
	"github.com/kgsearch/kgsearch/services/search/internal/indexer"
	"github.com/kgsearch/kgsearch/services/search/internal/pipeline"
)

// Searcher runs a search.
type Searcher interface {
	Search(ctx context.Context, req pipeline.Request) (*pipeline.Response, error)
}

// Index is what the API needs of the indexer.
type Index interface {
	Status() indexer.Status
	Titles(prefix string, limit int) []indexer.TitleCompletion
}

// EntityLister completes entity names (the kg service).
type EntityLister interface {
	Entities(ctx context.Context, prefix, typ string, limit int) (*kgapi.EntityList, error)
}

// Reindexer rebuilds the BM25 index from the store.
type Reindexer interface {
	Reindex(ctx context.Context) error
}

// ReindexFunc is a function as a Reindexer.
type ReindexFunc func(ctx context.Context) error

// Reindex calls f.
func (f ReindexFunc) Reindex(ctx context.Context) error { return f(ctx) }

// Deps are the API's collaborators, each an interface of what the API uses. KG and
// Reindex may be nil.
type Deps struct {
	Search  Searcher
	Index   Index
	KG      EntityLister
	Reindex Reindexer
	// Info is added to the status answer (model, version, ...).
	Info map[string]any
	// SuggestTimeout bounds the kg call of suggest; default 300ms.
	SuggestTimeout time.Duration
}

// API registers the routes on a server.
type API struct {
	srv        *httpserver.Server
	d          Deps
	reindexing atomic.Bool
	lastRe     atomic.Pointer[reindexState]
}

type reindexState struct {
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished,omitzero"`
	Error    string    `json:"error,omitempty"`
}

// New returns the API.
func New(srv *httpserver.Server, d Deps) *API {
	if d.SuggestTimeout <= 0 {
		d.SuggestTimeout = 300 * time.Millisecond
	}
	return &API{srv: srv, d: d}
}

// Register adds the routes, all on the API group: when KGS_API_KEYS is set every
// request needs a key, except GET searches, suggestions and status when the operator
// made searches public (KGS_PUBLIC_SEARCH). A POST search and the reindex always do.
func (a *API) Register() {
	g := a.srv.API("/api/v1")
	g.GET("/search", a.srv.Handle(a.searchGET))
	g.POST("/search", a.srv.Handle(a.searchPOST))
	g.GET("/suggest", a.srv.Handle(a.suggest))
	g.GET("/status", a.srv.Handle(a.status))
	g.POST("/admin/reindex", a.srv.Handle(a.reindex))
}

// searchQuery reads a search request's URL query strictly with spec and
// checks its format and the client's Accept header, for both search routes.
func searchQuery(c *gin.Context, spec httpserver.QuerySpec) (url.Values, error) {
	v, err := httpserver.StrictQuery(c.Request, spec)
	if err != nil {
		return nil, err
	}
	if err := checkFormat(v.Get("format")); err != nil {
		return nil, err
	}
	if err := acceptable(c.Request); err != nil {
		return nil, err
	}
	return v, nil
}

func (a *API) searchGET(c *gin.Context) error {
	v, err := searchQuery(c, searchParams)
	if err != nil {
		return err
	}
	return a.search(c, fromQuery(v))
}

func (a *API) searchPOST(c *gin.Context) error {
	if _, err := searchQuery(c, postSearchParams); err != nil {
		return err
	}
	if err := httpserver.JSONContentType(c.Request); err != nil {
		return err
	}
	f, err := fromBody(c.Request.Body)
	if err != nil {
		return err
	}
	return a.search(c, f)
}

func checkFormat(f string) error {
	if f == "" {
		return nil
	}
	if _, ok := toon.ParseFormat(f); !ok {
		return httpserver.BadRequest("format", fmt.Sprintf("must be toon or json, got %q", clip(f)))
	}
	return nil
}

func (a *API) search(c *gin.Context, f fields) error {
	req, err := f.request()
	if err != nil {
		return err
	}
	resp, err := a.d.Search.Search(c.Request.Context(), req)
	var se *admission.SaturatedError
	if errors.As(err, &se) {
		// Shed load without the error log a 5xx gets: under overload that log would
		// cost the CPU the refusal saves. The metric counts refusals.
		e := overloaded(se)
		c.Header("Retry-After", strconv.Itoa(e.Retry))
		body, _ := json.Marshal(httpserver.Problem{Type: "about:blank", Title: e.Title, Status: e.Status,
			Detail: e.Detail, Instance: c.Request.URL.Path, RequestID: httpserver.RequestID(c)})
		c.Data(e.Status, "application/problem+json", body)
		return nil
	}
	if err != nil {
		return searchError(err)
	}
	if f.format != "" && c.Query("format") == "" {
		// A POST body's format, unless the URL names one: the URL is the more
		// specific of the two for a client that sets both.
		ff, _ := toon.ParseFormat(f.format)
		return writeAs(c, ff, resp, resp.ToTOON())
	}
	return write(c, resp, resp.ToTOON())
}

// overloaded is the 503 of a search refused by admission control: refusing, with
// Retry-After, beats answering late or with signals missing.
func overloaded(se *admission.SaturatedError) *httpserver.Error {
	return &httpserver.Error{Status: http.StatusServiceUnavailable, Title: "overloaded",
		Detail: "the search service is at capacity; retry after the Retry-After delay", Retry: se.RetryAfterSeconds(), Err: se}
}

// searchError maps pipeline errors to HTTP errors.
func searchError(err error) error {
	var fe *pipeline.FieldError
	var ue *pipeline.UnavailableError
	var se *admission.SaturatedError
	switch {
	case errors.As(err, &fe):
		return httpserver.BadRequest(fe.Field, fe.Reason)
	case errors.As(err, &se):
		return overloaded(se)
	case errors.As(err, &ue):
		return httpserver.Unavailable(ue.Error(), err)
	case errors.Is(err, context.DeadlineExceeded):
		return httpserver.Timeout("the search ran out of time; retry later", err)
	case errors.Is(err, context.Canceled):
		return httpserver.Unavailable("the search was cancelled", err)
	}
	return httpserver.Internal(err)
}

// write answers in the negotiated format: TOON by default (with the TOON shape),
// JSON with Accept: application/json or ?format=json.
func write(c *gin.Context, jsonShape, toonShape any) error {
	return writeAs(c, toon.Negotiate(c.Request, toon.FormatTOON), jsonShape, toonShape)
}

// writeAs answers in format f.
func writeAs(c *gin.Context, f toon.Format, jsonShape, toonShape any) error {
	var b []byte
	var err error
	if f == toon.FormatTOON {
		b, err = toon.Marshal(toonShape)
	} else {
		b, err = json.Marshal(jsonShape)
	}
	if err != nil {
		return httpserver.Internal(fmt.Errorf("encode %s response: %w", f, err))
	}
	c.Header("Vary", "Accept")
	c.Data(http.StatusOK, f.ContentType(), b)
	return nil
}

// Suggestion is the answer of GET /api/v1/suggest.
type Suggestion struct {
	Prefix   string                    `json:"prefix"`
	Entities []SuggestedEntity         `json:"entities"`
	Titles   []indexer.TitleCompletion `json:"titles"`
	Degraded []string                  `json:"degraded"`
}

// SuggestedEntity is an entity completion.
type SuggestedEntity struct {
	Name      string `json:"name"`
	Type      string `json:"type"`
	Documents int    `json:"documents"`
}

func (a *API) suggest(c *gin.Context) error {
	v, err := httpserver.StrictQuery(c.Request, suggestParams)
	if err != nil {
		return err
	}
	if err := checkFormat(v.Get("format")); err != nil {
		return err
	}
	if err := acceptable(c.Request); err != nil {
		return err
	}
	prefix := strings.TrimSpace(v.Get("prefix"))
	if prefix == "" || len(prefix) > 100 {
		return httpserver.BadRequest("prefix", "give 1..100 bytes of the text to complete, e.g. ?prefix=postg")
	}
	if !utf8.ValidString(prefix) {
		return httpserver.BadRequest("prefix", "is not valid UTF-8: send the text as UTF-8, percent-encoded")
	}
	limit := 10
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 50 {
			return httpserver.BadRequest("limit", fmt.Sprintf("must be an integer in 1..50, got %q", clip(s)))
		}
		limit = n
	}
	out := Suggestion{Prefix: prefix, Entities: []SuggestedEntity{}, Degraded: []string{}}
	if a.d.KG != nil {
		ctx, cancel := context.WithTimeout(c.Request.Context(), a.d.SuggestTimeout)
		list, err := a.d.KG.Entities(ctx, prefix, "", limit)
		cancel()
		if err != nil {
			out.Degraded = append(out.Degraded, "entities")
			a.srv.Logger().Warn("suggest: kg entities failed", "err", err)
		} else {
			for _, e := range list.Entities {
				if len(out.Entities) == limit {
					break
				}
				out.Entities = append(out.Entities, SuggestedEntity{Name: e.Name, Type: e.Type, Documents: e.Documents})
			}
		}
	} else {
		out.Degraded = append(out.Degraded, "entities")
	}
	out.Titles = a.d.Index.Titles(prefix, limit)
	return write(c, out, out)
}

func (a *API) status(c *gin.Context) error {
	st := a.d.Index.Status()
	out := map[string]any{
		"index_watermark": st.IndexWatermark,
		"store_seq":       st.StoreSeq,
		"index_lag":       st.IndexLag,
		"indexed_chunks":  st.IndexedChunks,
		"documents":       st.Documents,
		"caught_up":       st.CaughtUp,
		"reindexing":      a.reindexing.Load(),
	}
	if !st.LastSync.IsZero() {
		out["last_sync"] = st.LastSync
	}
	if st.LastError != "" {
		out["last_error"] = st.LastError
	}
	if r := a.lastRe.Load(); r != nil {
		out["last_reindex"] = r
	}
	for k, v := range a.d.Info {
		out[k] = v
	}
	c.JSON(http.StatusOK, out)
	return nil
}

// reindex starts a rebuild of the BM25 index from the store in the background.
func (a *API) reindex(c *gin.Context) error {
	if a.d.Reindex == nil {
		return &httpserver.Error{Status: http.StatusNotImplemented, Title: "not implemented", Detail: "this server cannot rebuild its index"}
	}
	if !a.reindexing.CompareAndSwap(false, true) {
		return httpserver.Conflict("a reindex is already running; see GET /api/v1/status")
	}
	st := &reindexState{Started: time.Now().UTC()}
	a.lastRe.Store(st)
	go func() {
		defer a.reindexing.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), 6*time.Hour)
		defer cancel()
		err := a.d.Reindex.Reindex(ctx)
		done := &reindexState{Started: st.Started, Finished: time.Now().UTC()}
		if err != nil {
			done.Error = err.Error()
			a.srv.Logger().Error("reindex failed", "err", err)
		}
		a.lastRe.Store(done)
	}()
	c.JSON(http.StatusAccepted, gin.H{"status": "reindexing", "started": st.Started})
	return nil
}
