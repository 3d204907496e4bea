// Package kgapitest is the one in-memory stand-in for the kg service's HTTP API
// (the contract of pkg/kgapi), for the tests of the services that call it: ingest
// and delete (the crawler's outbox and regraph), entity match, expansion, entity
// listing and readiness (search). It is a fake of a seam we own, not of a database.
// Documents ingested or added with AddDocument go through pkg/extract, the
// extractor the real kg service uses, so the entities and relations are realistic;
// Ingested and Deleted report what clients sent; SetDown makes every endpoint
// answer 503, as a kg service that lost its database would, and FailIngest refuses
// the ingests of one URL.
package kgapitest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kgsearch/kgsearch/pkg/extract"
	"github.com/kgsearch/kgsearch/pkg/graph"
	"github.com/kgsearch/kgsearch/pkg/graph/profile"
	"github.com/kgsearch/kgsearch/pkg/kgapi"
)

type mention struct {
	chunk, doc string
	score      float64
}

type relation struct {
	from, to, typ, doc string
	conf               float64
}

// Server is a fake kg service on an httptest server.
type Server struct {
	*httptest.Server
	x *extract.Extractor

	mu       sync.Mutex
	entities map[string]kgapi.EntityRef
	mentions map[string][]mention // entity id → chunks
	// profiles are the documents' entity profiles for feedback, built from
	// mentions on first use and dropped whenever mentions change (as kg keeps
	// them in its projection instead of rebuilding them per call).
	profiles  *profile.Store
	relations []relation
	docs      map[string]int      // entity id → documents
	docEnts   map[string][]string // document id → the entity ids it counted in docs
	ingested  []kgapi.Document
	deleted   []string
	failURL   string

	down     atomic.Bool
	requests atomic.Int64
}

// New starts a fake kg service; it is closed when the test ends.
func New(t interface{ Cleanup(func()) }) *Server {
	x, err := extract.New()
	if err != nil {
		panic(err) // the embedded taxonomy is part of the binary
	}
	s := &Server{x: x, entities: map[string]kgapi.EntityRef{}, mentions: map[string][]mention{}, docs: map[string]int{},
		docEnts: map[string][]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/v1/ingest", s.ingest)
	mux.HandleFunc("DELETE /api/v1/documents/{id}", s.delete)
	mux.HandleFunc("POST /api/v1/entities/match", s.match)
	mux.HandleFunc("POST /api/v1/expand/entities", s.expand)
	mux.HandleFunc("POST /api/v1/retrieve", s.retrieve)
	mux.HandleFunc("GET /api/v1/entities", s.list)
	mux.HandleFunc("POST /api/v1/feedback", s.feedback)
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		if s.down.Load() {
			problem(w, http.StatusServiceUnavailable, "the graph database (Neo4j) is down")
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// SetDown makes every endpoint answer 503 (true) or work again (false).
func (s *Server) SetDown(v bool) { s.down.Store(v) }

// Requests returns the number of requests served.
func (s *Server) Requests() int64 { return s.requests.Load() }

// Chunk is a chunk given to AddDocument.
type Chunk struct {
	ID   string
	Text string
}

// AddDocument extracts entities, mentions and relations from a document's chunks.
func (s *Server) AddDocument(docID, title string, chunks []Chunk) {
	doc := extract.Document{ID: docID, Title: title}
	for _, c := range chunks {
		doc.Chunks = append(doc.Chunks, extract.Chunk{ID: c.ID, Text: c.Text})
	}
	res := s.x.Document(doc)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.index(docID, res)
}

// index adds an extraction result; s.mu is held.
func (s *Server) index(docID string, res extract.Result) {
	for _, e := range res.Entities {
		s.entities[e.ID] = kgapi.EntityRef{ID: e.ID, Name: e.Name, Type: e.Type}
		s.docs[e.ID]++
		s.docEnts[docID] = append(s.docEnts[docID], e.ID)
	}
	for _, m := range res.Mentions {
		s.mentions[m.EntityID] = append(s.mentions[m.EntityID], mention{chunk: m.ChunkID, doc: docID, score: float64(m.Count) * m.Confidence})
		s.profiles = nil
	}
	for _, r := range res.Relations {
		s.relations = append(s.relations, relation{from: r.From, to: r.To, typ: r.Type, doc: docID, conf: r.Confidence})
	}
}

// forget removes what a document contributed, reporting whether there was
// anything; s.mu is held. Entities stay (as placeholders do in the real graph).
func (s *Server) forget(docID string) bool {
	found := len(s.docEnts[docID]) > 0
	for _, id := range s.docEnts[docID] {
		s.docs[id]--
	}
	delete(s.docEnts, docID)
	for id, ms := range s.mentions {
		kept := ms[:0]
		for _, m := range ms {
			if m.doc != docID {
				kept = append(kept, m)
			} else {
				found = true
			}
		}
		s.mentions[id] = kept
		s.profiles = nil
	}
	kept := s.relations[:0]
	for _, r := range s.relations {
		if r.doc != docID {
			kept = append(kept, r)
		}
	}
	s.relations = kept
	return found
}

// Ingested returns the documents received by POST /api/v1/ingest, in order.
func (s *Server) Ingested() []kgapi.Document {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.ingested)
}

// Deleted returns the ids received by DELETE /api/v1/documents/{id}, in order,
// whether or not the fake knew them.
func (s *Server) Deleted() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.deleted)
}

// FailIngest makes ingests of the document with this URL answer 503 ("" for none).
func (s *Server) FailIngest(url string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failURL = url
}

func (s *Server) ingest(w http.ResponseWriter, r *http.Request) {
	var req kgapi.IngestRequest
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || req.Document.ID == "" || len(req.Document.Chunks) == 0 {
		problem(w, http.StatusBadRequest, "document: send an id and at least one chunk")
		return
	}
	d := req.Document
	s.mu.Lock()
	fail := d.URL != "" && d.URL == s.failURL
	s.mu.Unlock()
	if fail {
		problem(w, http.StatusServiceUnavailable, "the graph database (Neo4j) is unavailable; retry later")
		return
	}
	doc := extract.Document{ID: d.ID, URL: d.URL, Title: d.Title, Headings: d.Headings}
	for _, c := range d.Chunks {
		doc.Chunks = append(doc.Chunks, extract.Chunk{ID: c.ID, Text: c.Text, HeadingPath: c.HeadingPath, CodeSpans: c.CodeSpans})
	}
	res := s.x.Document(doc)
	s.mu.Lock()
	s.ingested = append(s.ingested, d)
	s.forget(d.ID) // a re-ingest replaces the document's part
	s.index(d.ID, res)
	s.mu.Unlock()
	writeJSON(w, kgapi.IngestResponse{DocumentID: d.ID, Chunks: len(d.Chunks), Entities: len(res.Entities),
		Mentions: len(res.Mentions), Relations: len(res.Relations), Links: len(res.Links)})
}

func (s *Server) delete(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	s.mu.Lock()
	s.deleted = append(s.deleted, id)
	found := s.forget(id)
	s.mu.Unlock()
	if !found {
		problem(w, http.StatusNotFound, "no document with this id")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// AddEntity adds an entity mentioned by the given chunks with a score each.
func (s *Server) AddEntity(id, name, typ string, chunks map[string]float64, docID func(chunk string) string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.entities[id] = kgapi.EntityRef{ID: id, Name: name, Type: typ}
	ids := make([]string, 0, len(chunks))
	for c := range chunks {
		ids = append(ids, c)
	}
	sort.Strings(ids)
	docs := map[string]bool{}
	for _, c := range ids {
		d := docID(c)
		docs[d] = true
		s.mentions[id] = append(s.mentions[id], mention{chunk: c, doc: d, score: chunks[c]})
		s.profiles = nil
	}
	s.docs[id] += len(docs)
}

// AddRelation adds a directed relation with a confidence.
func (s *Server) AddRelation(from, typ, to string, conf float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.relations = append(s.relations, relation{from: from, to: to, typ: typ, conf: conf})
}

func (s *Server) resolve(name string) (kgapi.EntityRef, bool) {
	if e, ok := s.entities[name]; ok {
		return e, true
	}
	if e, ok := s.entities[s.x.Resolve(name)]; ok {
		return e, true
	}
	return kgapi.EntityRef{}, false
}

func (s *Server) match(w http.ResponseWriter, r *http.Request) {
	var req kgapi.MatchRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Entities) == 0 {
		problem(w, http.StatusBadRequest, "entities: give at least one")
		return
	}
	// Sum the mention scores per chunk over the resolved entities, then return the
	// best (score desc, chunk id asc). Small structs and one sort keep the fake cheap
	// with tens of thousands of mentions (the benchmarks run it in-process).
	type acc struct {
		chunk, doc string
		score      float64
		matched    uint64 // bit i: resolved entity i
	}
	s.mu.Lock()
	resp := kgapi.MatchResponse{Chunks: []kgapi.ChunkMatch{}, Resolved: []kgapi.EntityRef{}}
	idx := map[string]int{}
	var all []acc
	for _, name := range req.Entities {
		e, ok := s.resolve(name)
		if !ok {
			resp.Unknown = append(resp.Unknown, name)
			continue
		}
		if len(resp.Resolved) == 64 {
			break
		}
		bit := uint64(1) << len(resp.Resolved)
		resp.Resolved = append(resp.Resolved, e)
		for _, m := range s.mentions[e.ID] {
			i, ok := idx[m.chunk]
			if !ok {
				i = len(all)
				idx[m.chunk] = i
				all = append(all, acc{chunk: m.chunk, doc: m.doc})
			}
			all[i].score += m.score
			all[i].matched |= bit
		}
	}
	s.mu.Unlock()
	better := func(a, b acc) int { // < 0 when a ranks before b
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return strings.Compare(a.chunk, b.chunk)
	}
	if req.Limit > 0 && len(all) > req.Limit {
		// Keep the best Limit in a bounded max-heap of the worst kept (root).
		h := all[:req.Limit:req.Limit]
		h = slices.Clone(h)
		down := func(i int) {
			for {
				l, worst := 2*i+1, i
				if l < len(h) && better(h[worst], h[l]) < 0 {
					worst = l
				}
				if r := l + 1; r < len(h) && better(h[worst], h[r]) < 0 {
					worst = r
				}
				if worst == i {
					return
				}
				h[i], h[worst] = h[worst], h[i]
				i = worst
			}
		}
		for i := len(h)/2 - 1; i >= 0; i-- {
			down(i)
		}
		for _, a := range all[req.Limit:] {
			if better(a, h[0]) < 0 {
				h[0] = a
				down(0)
			}
		}
		all = h
	}
	slices.SortFunc(all, better)
	for _, a := range all {
		m := kgapi.ChunkMatch{ChunkID: a.chunk, DocumentID: a.doc, Score: a.score}
		for i, e := range resp.Resolved {
			if a.matched&(1<<i) != 0 {
				m.Matched = append(m.Matched, e.Name)
			}
		}
		resp.Chunks = append(resp.Chunks, m)
	}
	writeJSON(w, resp)
}

func (s *Server) expand(w http.ResponseWriter, r *http.Request) {
	var req kgapi.ExpandRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Entities) == 0 {
		problem(w, http.StatusBadRequest, "entities: give at least one")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	resp := kgapi.ExpandResponse{Resolved: []kgapi.EntityRef{}, Related: []kgapi.RelatedEntity{}}
	start := map[string]bool{}
	for _, name := range req.Entities {
		if e, ok := s.resolve(name); ok {
			resp.Resolved = append(resp.Resolved, e)
			start[e.ID] = true
		} else {
			resp.Unknown = append(resp.Unknown, name)
		}
	}
	best := map[string]kgapi.RelatedEntity{}
	for _, rel := range s.relations { // one hop, both directions
		var from, to string
		switch {
		case start[rel.from] && !start[rel.to]:
			from, to = rel.from, rel.to
		case start[rel.to] && !start[rel.from]:
			from, to = rel.to, rel.from
		default:
			continue
		}
		if rel.conf < req.MinConfidence {
			continue
		}
		e, ok := s.entities[to]
		if !ok {
			continue
		}
		if old, ok := best[to]; ok && old.Confidence >= rel.conf {
			continue
		}
		best[to] = kgapi.RelatedEntity{EntityRef: e, Confidence: rel.conf, Hops: 1,
			Path: []kgapi.PathStep{{From: s.entities[from].Name, Relation: rel.typ, To: e.Name}}}
	}
	for _, re := range best {
		resp.Related = append(resp.Related, re)
	}
	sort.Slice(resp.Related, func(i, j int) bool {
		if resp.Related[i].Confidence != resp.Related[j].Confidence {
			return resp.Related[i].Confidence > resp.Related[j].Confidence
		}
		return resp.Related[i].ID < resp.Related[j].ID
	})
	if req.Limit > 0 && len(resp.Related) > req.Limit {
		resp.Related = resp.Related[:req.Limit]
	}
	writeJSON(w, resp)
}

func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	prefix := strings.ToLower(r.URL.Query().Get("prefix"))
	limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
	s.mu.Lock()
	out := kgapi.EntityList{Entities: []kgapi.Entity{}}
	for id, e := range s.entities {
		if strings.HasPrefix(strings.ToLower(e.Name), prefix) {
			out.Entities = append(out.Entities, kgapi.Entity{EntityRef: e, Documents: s.docs[id], Mentions: len(s.mentions[id])})
		}
	}
	s.mu.Unlock()
	sort.Slice(out.Entities, func(i, j int) bool {
		if out.Entities[i].Documents != out.Entities[j].Documents {
			return out.Entities[i].Documents > out.Entities[j].Documents
		}
		return out.Entities[i].Name < out.Entities[j].Name
	})
	if limit > 0 && len(out.Entities) > limit {
		out.Entities = out.Entities[:limit]
	}
	writeJSON(w, out)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func problem(w http.ResponseWriter, status int, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"title": http.StatusText(status), "status": status, "detail": detail})
}

// profiles reads the fake's mentions as document entity profiles (the number of a
// document's chunks mentioning each entity), the shape kg's profiles load from Neo4j.
type profiles map[string][]graph.EntityCount

func (p profiles) DocumentProfiles(_ context.Context, _ []string) (map[string][]graph.EntityCount, error) {
	return p, nil
}

// feedback answers graph feedback with kg's own algorithm (pkg/graph/profile) over the
// fake's mentions.
func (s *Server) feedback(w http.ResponseWriter, r *http.Request) {
	var req kgapi.FeedbackRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Seeds) == 0 {
		http.Error(w, `{"title":"bad request","detail":"seeds is empty"}`, http.StatusBadRequest)
		return
	}
	st := s.feedbackProfiles(r.Context())
	seeds := make([]profile.Seed, 0, len(req.Seeds))
	for _, sd := range req.Seeds {
		seeds = append(seeds, profile.Seed{DocumentID: sd.DocumentID, Weight: sd.Weight})
	}
	res := st.Feedback(seeds, req.Candidates, req.Entities)
	out := kgapi.FeedbackResponse{Scores: []kgapi.DocumentScore{}, Entities: []kgapi.WeightedEntity{}}
	for id, v := range res.Scores {
		out.Scores = append(out.Scores, kgapi.DocumentScore{DocumentID: id, Score: v})
	}
	slices.SortFunc(out.Scores, func(a, b kgapi.DocumentScore) int { return cmp.Compare(b.Score, a.Score) })
	for _, e := range res.Entities {
		out.Entities = append(out.Entities, kgapi.WeightedEntity{EntityRef: kgapi.EntityRef{ID: e.ID, Name: e.Name, Type: e.Type}, Weight: e.Weight})
	}
	writeJSON(w, out)
}

// feedbackProfiles returns the documents' entity profiles, built from the
// mentions on the first call after they changed.
func (s *Server) feedbackProfiles(ctx context.Context) *profile.Store {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.profiles != nil {
		return s.profiles
	}
	counts := map[string]map[string]int64{}
	for id, ms := range s.mentions {
		for _, m := range ms {
			if counts[m.doc] == nil {
				counts[m.doc] = map[string]int64{}
			}
			counts[m.doc][id]++
		}
	}
	src := profiles{}
	for doc, es := range counts {
		for id, n := range es {
			e := s.entities[id]
			src[doc] = append(src[doc], graph.EntityCount{Entity: graph.EntityRef{ID: id, Name: e.Name, Type: e.Type}, Count: n})
		}
	}
	st := profile.New()
	_ = st.Load(ctx, src) // profiles never fails
	s.profiles = st
	return st
}

// retrieve answers the one-round-trip call as the kg service does: the match,
// and with expand the expansion, the first use related entities of confidence at
// least min_confidence and their match, each from this fake's own handlers.
func (s *Server) retrieve(w http.ResponseWriter, r *http.Request) {
	var req kgapi.RetrieveRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Entities) == 0 {
		problem(w, http.StatusBadRequest, "entities: give at least one")
		return
	}
	var out kgapi.RetrieveResponse
	if !s.inner(w, s.match, kgapi.MatchRequest{Entities: req.Entities, Limit: req.Limit}, &out.Match) {
		return
	}
	if x := req.Expand; x != nil {
		out.Expand = &kgapi.ExpandResponse{}
		ereq := kgapi.ExpandRequest{Entities: req.Entities, MaxHops: x.MaxHops, Limit: x.Limit,
			MinConfidence: x.MinConfidence, RelationTypes: x.RelationTypes}
		if !s.inner(w, s.expand, ereq, out.Expand) {
			return
		}
		for _, rel := range out.Expand.Related {
			if len(out.Used) == x.Use {
				break
			}
			if rel.Confidence >= x.MinConfidence {
				out.Used = append(out.Used, cmp.Or(rel.ID, rel.Name))
			}
		}
		if len(out.Used) > 0 {
			out.ExpandMatch = &kgapi.MatchResponse{}
			if !s.inner(w, s.match, kgapi.MatchRequest{Entities: out.Used, Limit: req.Limit}, out.ExpandMatch) {
				return
			}
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// inner runs handler h on in and decodes its answer into out; a non-200 answer
// is copied to w and false returned.
func (s *Server) inner(w http.ResponseWriter, h http.HandlerFunc, in, out any) bool {
	body, _ := json.Marshal(in)
	rec := httptest.NewRecorder()
	h(rec, httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body)))
	if rec.Code != http.StatusOK {
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
		return false
	}
	return json.Unmarshal(rec.Body.Bytes(), out) == nil
}
