package entitygraph

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kgsearch/kgsearch/pkg/docid"
	"github.com/kgsearch/kgsearch/pkg/extract"
	"github.com/kgsearch/kgsearch/pkg/fielderr"
	"github.com/kgsearch/kgsearch/pkg/graph"
	"github.com/kgsearch/kgsearch/pkg/kgapi"
	"github.com/kgsearch/kgsearch/pkg/ranker"
)

// Ingest validates a document, extracts its entities and relations (feeding the
// learner) and replaces the document's part of the graph.
func (s *Service) Ingest(ctx context.Context, doc kgapi.Document) (kgapi.IngestResponse, error) {
	start := time.Now()
	if err := s.validateDocument(&doc); err != nil {
		s.ingestDocs.WithLabelValues("invalid").Inc()
		return kgapi.IngestResponse{}, err
	}
	// A large document gets a budget in proportion: an index page of 500 chunks
	// and thousands of entities took 5 to 20 s to extract and write on two cores.
	ctx, cancel, err := s.graphCtxScaled(ctx, ingestScale(len(doc.Chunks)))
	if err != nil {
		return kgapi.IngestResponse{}, err
	}
	defer cancel()
	res := s.d.Extractor.Document(toExtract(doc))
	s.changes.Add(1) // the learner has observed the document, whatever the graph says
	extracted := time.Since(start)
	g := toGraph(doc, res)
	if n := len(g.Relations); s.lim.MaxRelations > 0 && n > s.lim.MaxRelations {
		g.Relations = strongestRelations(g.Relations, s.lim.MaxRelations)
		s.d.Logger.Warn("document relations capped", "document", doc.ID, "relations", n, "kept", len(g.Relations), "setting", "KG_MAX_RELATIONS")
	}
	up, err := s.d.Writer.UpsertDocument(ctx, g)
	if err != nil {
		s.ingestDocs.WithLabelValues("failed").Inc()
		return kgapi.IngestResponse{}, err
	}
	s.ingestDocs.WithLabelValues("ok").Inc()
	s.profileChanged(ctx, doc.ID, false)
	s.ingestChunks.Add(float64(up.Chunks))
	took := time.Since(start)
	s.d.Logger.Debug("document ingested", "document", doc.ID, "chunks", up.Chunks, "entities", up.Entities,
		"mentions", up.Mentions, "relations", up.Relations, "links", up.Links,
		"extract_ms", extracted.Milliseconds(), "took_ms", took.Milliseconds())
	return kgapi.IngestResponse{
		DocumentID: doc.ID, Chunks: up.Chunks, Entities: up.Entities, Mentions: up.Mentions,
		Relations: up.Relations, Links: up.Links, TookMS: took.Milliseconds(),
	}, nil
}

// validateDocument checks an ingest request, naming the first field at fault. It
// trims the document and chunk ids.
func (s *Service) validateDocument(d *kgapi.Document) error {
	d.ID = strings.TrimSpace(d.ID)
	if err := checkID("document.id", d.ID); err != nil {
		return err
	}
	if len(d.URL) > maxURLBytes {
		return fielderr.Newf("document.url", "document.url is %d bytes long, the maximum is %d", len(d.URL), maxURLBytes)
	}
	if len(d.Title) > maxTitleBytes || !utf8.ValidString(d.Title) {
		return fielderr.Newf("document.title", "document.title must be UTF-8 text of at most %d bytes", maxTitleBytes)
	}
	if len(d.Chunks) == 0 {
		return fielderr.New("document.chunks", "document.chunks is empty; send the document's text as at least one chunk")
	}
	if len(d.Chunks) > s.lim.MaxChunks {
		return fielderr.Newf("document.chunks", "document.chunks has %d chunks, the maximum is %d (KG_MAX_CHUNKS); send larger chunks", len(d.Chunks), s.lim.MaxChunks)
	}
	seen := make(map[string]int, len(d.Chunks))
	for i := range d.Chunks {
		if err := s.validateChunk(i, &d.Chunks[i], seen); err != nil {
			return err
		}
	}
	if len(d.Links) > s.lim.MaxLinks {
		return fielderr.Newf("document.links", "document.links has %d links, the maximum is %d (KG_MAX_LINKS)", len(d.Links), s.lim.MaxLinks)
	}
	for i, l := range d.Links {
		f := fmt.Sprintf("document.links[%d]", i)
		if l.URL == "" || len(l.URL) > maxURLBytes {
			return fielderr.Newf(f+".url", "%s.url must be a URL of 1..%d bytes", f, maxURLBytes)
		}
		if u, err := url.Parse(l.URL); err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return fielderr.Newf(f+".url", "%s.url %q is not an absolute http(s) URL", f, Clip(l.URL, 100))
		}
		if len(l.DocumentID) > maxIDBytes {
			return fielderr.Newf(f+".document_id", "%s.document_id is longer than %d bytes", f, maxIDBytes)
		}
	}
	return nil
}

// validateChunk checks chunk i (trimming its id); seen maps the ids so far to
// their index.
func (s *Service) validateChunk(i int, ch *kgapi.Chunk, seen map[string]int) error {
	f := fmt.Sprintf("document.chunks[%d]", i)
	ch.ID = strings.TrimSpace(ch.ID)
	if err := checkID(f+".id", ch.ID); err != nil {
		return err
	}
	if j, dup := seen[ch.ID]; dup {
		return fielderr.Newf(f+".id", "%s.id %q repeats document.chunks[%d].id; chunk ids must be unique", f, ch.ID, j)
	}
	seen[ch.ID] = i
	if ch.Ordinal < 0 {
		return fielderr.Newf(f+".ordinal", "%s.ordinal is %d, want >= 0", f, ch.Ordinal)
	}
	if strings.TrimSpace(ch.Text) == "" {
		return fielderr.New(f+".text", f+".text is empty; drop empty chunks before ingesting")
	}
	if len(ch.Text) > s.lim.MaxChunkBytes {
		return fielderr.Newf(f+".text", "%s.text is %d bytes long, the maximum is %d (KG_MAX_CHUNK_BYTES); cut it into smaller chunks", f, len(ch.Text), s.lim.MaxChunkBytes)
	}
	if !utf8.ValidString(ch.Text) {
		return fielderr.New(f+".text", f+".text is not valid UTF-8")
	}
	return nil
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
	g.Entities = graphEntities(res.Entities)
	entities := make(map[string]bool, len(g.Entities))
	for _, e := range g.Entities {
		entities[e.ID] = true
	}
	for _, m := range res.Mentions {
		if !chunks[m.ChunkID] || !entities[m.EntityID] {
			continue
		}
		g.Mentions = append(g.Mentions, graph.Mention{ChunkID: m.ChunkID, EntityID: m.EntityID, Count: max(m.Count, 1), Confidence: ranker.Clamp01(m.Confidence)})
	}
	for _, r := range res.Relations {
		if !entities[r.From] || !entities[r.To] || r.From == r.To || r.Type == "" || math.IsNaN(r.Weight) || math.IsInf(r.Weight, 0) {
			continue
		}
		g.Relations = append(g.Relations, graphRelation(r, chunks))
	}
	g.Links = graphLinks(d.Links, res.Links)
	return g
}

// strongestRelations keeps the n strongest relations: typed ones (patterns, links)
// before co-occurrences, then by confidence, support (evidence chunks) and weight,
// with the ends and type breaking ties, so the same document keeps the same ones.
func strongestRelations(rels []graph.Relation, n int) []graph.Relation {
	rank := func(r graph.Relation) int {
		if r.Source == graph.SourceCooccurrence {
			return 1
		}
		return 0
	}
	out := slices.Clone(rels)
	slices.SortFunc(out, func(a, b graph.Relation) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(b.Confidence, a.Confidence),
			cmp.Compare(len(b.Evidence), len(a.Evidence)), cmp.Compare(b.Weight, a.Weight),
			strings.Compare(a.From, b.From), strings.Compare(a.To, b.To), strings.Compare(a.Type, b.Type))
	})
	return out[:min(n, len(out))]
}

// graphEntities keeps the entities with usable ids, names and types, trimming
// their names and bounding their aliases.
func graphEntities(in []extract.Entity) []graph.Entity {
	var out []graph.Entity
	for _, e := range in {
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
		out = append(out, graph.Entity{ID: e.ID, Name: name, Type: e.Type, Aliases: aliases, Confidence: ranker.Clamp01(e.Confidence)})
	}
	return out
}

// graphRelation maps a relation, keeping the evidence among the document's chunks.
func graphRelation(r extract.Relation, chunks map[string]bool) graph.Relation {
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
	return graph.Relation{From: r.From, To: r.To, Type: r.Type, Weight: r.Weight,
		Confidence: ranker.Clamp01(r.Confidence), Evidence: ev, Source: src}
}

// graphLinks maps the extracted links, taking each target's document id from the
// request when the crawler gave it and deriving it from the URL otherwise.
func graphLinks(given []kgapi.Link, extracted []extract.LinkRelation) []graph.Link {
	ids := make(map[string]string, len(given))
	for _, l := range given {
		if l.DocumentID != "" {
			ids[l.URL] = l.DocumentID
		}
	}
	var out []graph.Link
	for _, l := range extracted {
		target := ids[l.To]
		if target == "" {
			target = docid.FromURL(l.To)
		}
		anchor := ""
		if len(l.Anchors) > 0 {
			anchor = Clip(l.Anchors[0], maxAnchor)
		}
		out = append(out, graph.Link{TargetID: target, URL: l.To, Anchor: anchor})
	}
	return out
}
