package web

import (
	"context"
	"errors"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/kgsearch/kgsearch/pkg/kgapi"
	"github.com/kgsearch/kgsearch/services/search/internal/indexer"
)

// Limits of the entity view.
const (
	maxEntityID    = 256 // bytes of an entity id or name in the URL
	graphNeighbour = 12  // neighbours drawn; the rest are listed only
	mentionChunks  = 200 // chunks asked of kg for the pages list
	mentionPages   = 30  // pages listed
)

// entityView is the data of the entity page.
type entityView struct {
	Entity      *kgapi.Entity
	Graph       graphView
	Relations   []kgapi.Relation // every relation kg returned, strongest first
	Pages       []pageRef
	OtherPages  int    // documents mentioning it that this search index does not hold
	PagesError  string // why the pages could not be listed
	SearchHref  string
	NeighbourOf int
}

type pageRef struct {
	Title, URL string
	Chunks     int
	Score      float64
}

// graphView is the neighbourhood drawn as SVG: the entity in the middle, its
// strongest neighbours on a circle, one labelled edge each.
type graphView struct {
	Width, Height float64
	Center        nodeView
	Nodes         []nodeView
	Edges         []edgeView
}

type nodeView struct {
	ID, Name, Type, Href string
	X, Y, R              float64
	LabelY               float64
}

type edgeView struct {
	X1, Y1, X2, Y2 float64
	LX, LY         float64 // label position
	Label, Title   string
	Width          float64 // stroke width from the weight
	Out            bool
}

func (w *Web) entityPage(c *gin.Context) {
	id := strings.TrimSpace(c.Param("id"))
	if id == "" || len(id) > maxEntityID {
		w.fail(c, http.StatusBadRequest, "id", "An entity id or name is 1 to 256 bytes long, e.g. /entities/python.", "/")
		return
	}
	if w.d.Graph == nil {
		w.fail(c, http.StatusServiceUnavailable, "", "This server has no knowledge-graph service configured (KGS_KG_URL).", "/")
		return
	}
	ctx, cancel := context.WithTimeout(c.Request.Context(), w.d.Timeout)
	defer cancel()
	ent, err := w.d.Graph.Entity(ctx, id)
	var se *kgapi.StatusError
	if errors.As(err, &se) && se.Status == http.StatusNotFound {
		w.fail(c, http.StatusNotFound, "id", "The knowledge graph has no entity called \""+clip(id, 80)+"\". Search for it instead, or pick one from a result's related entities.", "/?q="+url.QueryEscape(id))
		return
	}
	if err != nil {
		w.dependencyError(c, "knowledge-graph", err, "/")
		return
	}
	view := entityView{Entity: ent, SearchHref: "/?q=" + url.QueryEscape(ent.Name)}
	view.Relations = append(view.Relations, ent.Relations...)
	sort.SliceStable(view.Relations, func(i, j int) bool { return view.Relations[i].Weight > view.Relations[j].Weight })
	view.Graph = layout(ent, view.Relations)
	w.mentioningPages(ctx, &view)
	w.render(c, http.StatusOK, "entity", ent.Name+" ("+ent.Type+")", "", view)
}

// mentioningPages lists the pages whose chunks mention the entity (kg match), with
// titles from the search index's document table.
func (w *Web) mentioningPages(ctx context.Context, view *entityView) {
	m, err := w.d.Graph.Match(ctx, kgapi.MatchRequest{Entities: []string{view.Entity.ID}, Limit: mentionChunks})
	if err != nil {
		w.d.Logger.Warn("web: entity pages", "err", err)
		view.PagesError = "The pages mentioning this entity could not be listed right now."
		return
	}
	byDoc := map[string]*pageRef{}
	var order []string
	unknown := map[string]bool{}
	for _, ch := range m.Chunks {
		if p, ok := byDoc[ch.DocumentID]; ok {
			p.Chunks++
			p.Score = math.Max(p.Score, ch.Score)
			continue
		}
		var d indexer.Doc
		ok := false
		if w.d.Docs != nil {
			d, ok = w.d.Docs.Doc(ch.DocumentID)
		}
		if !ok {
			unknown[ch.DocumentID] = true
			continue
		}
		title := d.Title
		if title == "" {
			title = d.URL
		}
		byDoc[ch.DocumentID] = &pageRef{Title: title, URL: d.URL, Chunks: 1, Score: ch.Score}
		order = append(order, ch.DocumentID)
	}
	for _, id := range order {
		if len(view.Pages) == mentionPages {
			break
		}
		view.Pages = append(view.Pages, *byDoc[id])
	}
	view.OtherPages = len(unknown)
}

// layout places the entity in the middle and up to graphNeighbour neighbours on a
// circle around it. Coordinates are in the SVG's viewBox units.
func layout(ent *kgapi.Entity, rels []kgapi.Relation) graphView {
	const w, h, r = 640.0, 440.0, 165.0
	g := graphView{Width: w, Height: h}
	g.Center = nodeView{ID: ent.ID, Name: ent.Name, Type: ent.Type, X: w / 2, Y: h / 2, R: 30, LabelY: h/2 + 46}
	seen := map[string]int{} // neighbour id → node index (one node per neighbour)
	maxW := 0.0
	for _, rel := range rels {
		maxW = math.Max(maxW, rel.Weight)
	}
	var shown []kgapi.Relation
	for _, rel := range rels {
		if rel.Other.ID == ent.ID {
			continue
		}
		if _, ok := seen[rel.Other.ID]; !ok {
			if len(g.Nodes) == graphNeighbour {
				continue
			}
			seen[rel.Other.ID] = len(g.Nodes)
			g.Nodes = append(g.Nodes, nodeView{ID: rel.Other.ID, Name: rel.Other.Name, Type: rel.Other.Type,
				Href: "/entities/" + url.PathEscape(rel.Other.ID), R: 18})
		}
		shown = append(shown, rel)
	}
	n := float64(len(g.Nodes))
	for i := range g.Nodes {
		a := -math.Pi/2 + 2*math.Pi*float64(i)/math.Max(n, 1)
		g.Nodes[i].X = round1(w/2 + r*1.35*math.Cos(a))
		g.Nodes[i].Y = round1(h/2 + r*math.Sin(a))
		// Names go outward: above the nodes of the upper half, below the others, so
		// no name sits on its own edge.
		g.Nodes[i].LabelY = round1(g.Nodes[i].Y + g.Nodes[i].R + 14)
		if g.Nodes[i].Y < g.Center.Y-1 {
			g.Nodes[i].LabelY = round1(g.Nodes[i].Y - g.Nodes[i].R - 6)
		}
	}
	perPair := map[string]int{}
	for _, rel := range shown {
		nd := g.Nodes[seen[rel.Other.ID]]
		k := perPair[rel.Other.ID]
		perPair[rel.Other.ID]++
		// Labels of neighbouring edges alternate between two distances from the
		// centre so they do not run into each other; a second relation to the same
		// neighbour moves further along its edge.
		t := 0.42 + 0.14*float64(k)
		if seen[rel.Other.ID]%2 == 1 {
			t = 0.66 + 0.14*float64(k)
		}
		width := 1.0
		if maxW > 0 {
			width = 1 + 4*rel.Weight/maxW
		}
		arrow := "→"
		if rel.Direction == "in" {
			arrow = "←"
		}
		g.Edges = append(g.Edges, edgeView{
			X1: g.Center.X, Y1: g.Center.Y, X2: nd.X, Y2: nd.Y,
			LX: round1(g.Center.X + (nd.X-g.Center.X)*t), LY: round1(g.Center.Y + (nd.Y-g.Center.Y)*t - 4),
			Label: rel.Type + " " + strconv.FormatFloat(rel.Weight, 'g', 3, 64), Width: round1(width), Out: rel.Direction != "in",
			Title: ent.Name + " " + arrow + " " + rel.Type + " " + arrow + " " + rel.Other.Name + ": weight " + f3(rel.Weight) + ", confidence " + f3(rel.Confidence),
		})
	}
	return g
}

func round1(x float64) float64 { return math.Round(x*10) / 10 }

func f3(x float64) string { return funcs["f3"].(func(float64) string)(x) }
