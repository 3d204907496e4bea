package api

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/kgsearch/kgsearch/pkg/extract"
	"github.com/kgsearch/kgsearch/pkg/graph"
	"github.com/kgsearch/kgsearch/pkg/httpserver"
	"github.com/kgsearch/kgsearch/pkg/kgapi"
)

func (s *Service) ingest(c *gin.Context) error {
	start := time.Now()
	var req kgapi.IngestRequest
	if err := httpserver.DecodeJSON(c.Request.Body, &req); err != nil {
		return err
	}
	if err := s.validateDocument(&req.Document); err != nil {
		s.ingestDocs.WithLabelValues("invalid").Inc()
		return err
	}
	if err := s.needGraph(); err != nil {
		return err
	}
	ctx, cancel := s.graphCtx(c)
	defer cancel()
	doc := req.Document
	res := s.x.Document(toExtract(doc))
	s.changes.Add(1) // the learner has observed the document, whatever the graph says
	extracted := time.Since(start)
	gd := toGraph(doc, res)
	up, err := s.g.UpsertDocument(ctx, gd)
	if err != nil {
		s.ingestDocs.WithLabelValues("failed").Inc()
		return graphError(err)
	}
	s.ingestDocs.WithLabelValues("ok").Inc()
	s.ingestChunks.Add(float64(up.Chunks))
	took := time.Since(start)
	s.log.Debug("document ingested", "document", doc.ID, "chunks", up.Chunks, "entities", up.Entities,
		"mentions", up.Mentions, "relations", up.Relations, "links", up.Links,
		"extract_ms", extracted.Milliseconds(), "took_ms", took.Milliseconds())
	return reply(c, http.StatusOK, kgapi.IngestResponse{
		DocumentID: doc.ID, Chunks: up.Chunks, Entities: up.Entities, Mentions: up.Mentions,
		Relations: up.Relations, Links: up.Links, TookMS: took.Milliseconds(),
	})
}

// validateDocument checks an ingest request, naming the first field at fault. It
// trims the document id.
func (s *Service) validateDocument(d *kgapi.Document) error {
	d.ID = strings.TrimSpace(d.ID)
	if err := checkID("document.id", d.ID); err != nil {
		return err
	}
	if len(d.URL) > maxURLBytes {
		return httpserver.BadRequest("document.url", fmt.Sprintf("document.url is %d bytes long, the maximum is %d", len(d.URL), maxURLBytes))
	}
	if len(d.Title) > maxTitleBytes || !utf8.ValidString(d.Title) {
		return httpserver.BadRequest("document.title", fmt.Sprintf("document.title must be UTF-8 text of at most %d bytes", maxTitleBytes))
	}
	if len(d.Chunks) == 0 {
		return httpserver.BadRequest("document.chunks", "document.chunks is empty; send the document's text as at least one chunk")
	}
	if len(d.Chunks) > s.lim.MaxChunks {
		return httpserver.BadRequest("document.chunks", fmt.Sprintf("document.chunks has %d chunks, the maximum is %d (KG_MAX_CHUNKS); send larger chunks", len(d.Chunks), s.lim.MaxChunks))
	}
	seen := make(map[string]int, len(d.Chunks))
	for i := range d.Chunks {
		ch := &d.Chunks[i]
		f := fmt.Sprintf("document.chunks[%d]", i)
		ch.ID = strings.TrimSpace(ch.ID)
		if err := checkID(f+".id", ch.ID); err != nil {
			return err
		}
		if j, dup := seen[ch.ID]; dup {
			return httpserver.BadRequest(f+".id", fmt.Sprintf("%s.id %q repeats document.chunks[%d].id; chunk ids must be unique", f, ch.ID, j))
		}
		seen[ch.ID] = i
		if ch.Ordinal < 0 {
			return httpserver.BadRequest(f+".ordinal", fmt.Sprintf("%s.ordinal is %d, want >= 0", f, ch.Ordinal))
		}
		if strings.TrimSpace(ch.Text) == "" {
			return httpserver.BadRequest(f+".text", f+".text is empty; drop empty chunks before ingesting")
		}
		if len(ch.Text) > s.lim.MaxChunkBytes {
			return httpserver.BadRequest(f+".text", fmt.Sprintf("%s.text is %d bytes long, the maximum is %d (KG_MAX_CHUNK_BYTES); cut it into smaller chunks", f, len(ch.Text), s.lim.MaxChunkBytes))
		}
		if !utf8.ValidString(ch.Text) {
			return httpserver.BadRequest(f+".text", f+".text is not valid UTF-8")
		}
	}
	if len(d.Links) > s.lim.MaxLinks {
		return httpserver.BadRequest("document.links", fmt.Sprintf("document.links has %d links, the maximum is %d (KG_MAX_LINKS)", len(d.Links), s.lim.MaxLinks))
	}
	for i, l := range d.Links {
		f := fmt.Sprintf("document.links[%d]", i)
		if l.URL == "" || len(l.URL) > maxURLBytes {
			return httpserver.BadRequest(f+".url", fmt.Sprintf("%s.url must be a URL of 1..%d bytes", f, maxURLBytes))
		}
		if u, err := url.Parse(l.URL); err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return httpserver.BadRequest(f+".url", fmt.Sprintf("%s.url %q is not an absolute http(s) URL", f, clip(l.URL, 100)))
		}
		if len(l.DocumentID) > maxIDBytes {
			return httpserver.BadRequest(f+".document_id", fmt.Sprintf("%s.document_id is longer than %d bytes", f, maxIDBytes))
		}
	}
	return nil
}

func checkID(field, id string) error {
	if id == "" {
		return httpserver.BadRequest(field, field+" is empty")
	}
	if len(id) > maxIDBytes {
		return httpserver.BadRequest(field, fmt.Sprintf("%s is %d bytes long, the maximum is %d", field, len(id), maxIDBytes))
	}
	if !utf8.ValidString(id) || strings.ContainsAny(id, "\x00\r\n") {
		return httpserver.BadRequest(field, field+" must be one line of UTF-8 text")
	}
	return nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// DocumentID is the document id of a URL as the crawler derives it
// (store.DocumentID): the first 16 bytes of SHA-256 of the canonical URL, hex.
func DocumentID(canonicalURL string) string {
	sum := sha256.Sum256([]byte(canonicalURL))
	return hex.EncodeToString(sum[:16])
}

func toExtract(d kgapi.Document) extract.Document {
	out := extract.Document{ID: d.ID, URL: d.URL, Title: d.Title, Headings: d.Headings,
		Chunks: make([]extract.Chunk, len(d.Chunks)), Links: make([]extract.Link, len(d.Links))}
	for i, c := range d.Chunks {
		out.Chunks[i] = extract.Chunk{ID: c.ID, Text: c.Text, HeadingPath: c.HeadingPath, CodeSpans: c.CodeSpans}
	}
	for i, l := range d.Links {
		out.Links[i] = extract.Link{URL: l.URL, Anchor: l.Anchor}
	}
	return out
}

// Bounds of what one document may give an entity; longer names or more aliases
// are dropped rather than refused, since the extractor, not the client, made them.
const (
	maxEntityName = 512
	maxAliases    = 64
	maxAnchor     = 1000
)

// toGraph maps a document and its extraction to what the graph stores. It keeps
// only what the graph accepts: entities with usable ids and names, mentions and
// relations whose ends exist, evidence among the document's chunks, unit
// confidences and finite weights.
func toGraph(d kgapi.Document, res extract.Result) graph.Doc {
	g := graph.Doc{ID: d.ID, URL: d.URL, Title: d.Title, Chunks: make([]graph.Chunk, len(d.Chunks))}
	chunks := make(map[string]bool, len(d.Chunks))
	for i, c := range d.Chunks {
		g.Chunks[i] = graph.Chunk{ID: c.ID, Ordinal: c.Ordinal}
		chunks[c.ID] = true
	}
	entities := make(map[string]bool, len(res.Entities))
	for _, e := range res.Entities {
		name := strings.TrimSpace(e.Name)
		if e.ID == "" || len(e.ID) > maxIDBytes || name == "" || len(name) > maxEntityName || strings.TrimSpace(e.Type) == "" {
			continue
		}
		aliases := make([]string, 0, len(e.Aliases))
		for _, a := range e.Aliases {
			if a = strings.TrimSpace(a); a != "" && len(a) <= maxEntityName && len(aliases) < maxAliases {
				aliases = append(aliases, a)
			}
		}
		entities[e.ID] = true
		g.Entities = append(g.Entities, graph.Entity{ID: e.ID, Name: name, Type: e.Type, Aliases: aliases, Confidence: unit(e.Confidence)})
	}
	for _, m := range res.Mentions {
		if !chunks[m.ChunkID] || !entities[m.EntityID] {
			continue
		}
		g.Mentions = append(g.Mentions, graph.Mention{ChunkID: m.ChunkID, EntityID: m.EntityID, Count: max(m.Count, 1), Confidence: unit(m.Confidence)})
	}
	for _, r := range res.Relations {
		if !entities[r.From] || !entities[r.To] || r.From == r.To || r.Type == "" || math.IsNaN(r.Weight) || math.IsInf(r.Weight, 0) {
			continue
		}
		src := graph.SourcePattern
		switch r.Type {
		case extract.RelCoOccurs:
			src = graph.SourceCooccurrence
		case extract.RelLinksTo:
			src = graph.SourceLink
		}
		var ev []string
		for _, e := range r.Evidence {
			if chunks[e.ChunkID] && (len(ev) == 0 || ev[len(ev)-1] != e.ChunkID) {
				ev = append(ev, e.ChunkID)
			}
		}
		g.Relations = append(g.Relations, graph.Relation{From: r.From, To: r.To, Type: r.Type, Weight: r.Weight,
			Confidence: unit(r.Confidence), Evidence: ev, Source: src})
	}
	ids := make(map[string]string, len(d.Links))
	for _, l := range d.Links {
		if l.DocumentID != "" {
			ids[l.URL] = l.DocumentID
		}
	}
	for _, l := range res.Links {
		target := ids[l.To]
		if target == "" {
			target = DocumentID(l.To)
		}
		anchor := ""
		if len(l.Anchors) > 0 {
			anchor = clip(l.Anchors[0], maxAnchor)
		}
		g.Links = append(g.Links, graph.Link{TargetID: target, URL: l.To, Anchor: anchor})
	}
	return g
}

func unit(v float64) float64 {
	switch {
	case math.IsNaN(v) || v < 0:
		return 0
	case v > 1:
		return 1
	}
	return v
}
