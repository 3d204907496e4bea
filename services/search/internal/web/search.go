package web

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/gin-gonic/gin"

	"github.com/kgsearch/kgsearch/pkg/httpserver"
	"github.com/kgsearch/kgsearch/pkg/ranker"
	"github.com/kgsearch/kgsearch/services/search/internal/api"
	"github.com/kgsearch/kgsearch/services/search/internal/pipeline"
)

// signalNames are the breakdown's signals in bar order, with their labels.
var signalNames = []struct{ Key, Label string }{
	{"vector", "vector"}, {"graph", "graph"}, {"bm25", "BM25"}, {"recency", "recency"}, {"title", "title"},
}

// form is the search form as the URL carries it.
type form struct {
	Q, Tags, Domain, After, Before, Fusion string
	Weights                                [5]float64 // slider positions, in signalNames order
	MMR                                    bool
	Lambda                                 float64
	Expand                                 bool
	KeepHistory                            bool   // history=keep: version-history pages at their full score
	KeepGenerated                          bool   // generated=keep: source listings and generated indexes at their full score
	K                                      string // results per page as typed, kept after an error
}

// fieldNames are the request fields as the form shows them: the label the user
// reads and the id of the control that fixes the field ("" when only the address
// carries it). An error names the label and links to the control, never the API's
// field name alone: a bad slider is named as that slider, not as "weights".
var fieldNames = map[string]struct{ Label, ID string }{
	"q": {"Search words", "q"}, "tags": {"Tags", "tags"}, "domain": {"Domain", "domain"},
	"published_after": {"Published on or after", "published_after"}, "published_before": {"Published before", "published_before"},
	"weights": {"Signal weights", "w_vector"}, "w_vector": {"vector weight", "w_vector"}, "w_graph": {"graph weight", "w_graph"},
	"w_bm25": {"BM25 weight", "w_bm25"}, "w_recency": {"recency weight", "w_recency"}, "w_title": {"title weight", "w_title"},
	"fusion": {"Fusion", "fusion"}, "mmr": {"MMR λ", "lambda"}, "expand": {"Expand", "expand"},
	"k": {"Results per page", "k"}, "offset": {"Result page (offset in the address)", ""},
	"lambda": {"MMR λ", "lambda"}, "tag": {"Tags", "tags"}, "x": {"x (the address's mark of a sent form)", ""},
	"history":   {"Release notes at full rank", "history"},
	"generated": {"Source listings and indexes at full rank", "generated"},
}

// searchQuery is what the search page reads from its URL: the API's search
// parameters (an API query string opens as a page), the sliders, the MMR λ and
// x=1, the mark of a sent form. Others (utm_source, ...) are ignored.
var searchQuery = pageQuery{Path: "/", Known: []string{"q", "k", "offset", "tags", "tag", "domain", "published_after", "published_before",
	"weights", "w_vector", "w_graph", "w_bm25", "w_recency", "w_title", "fusion", "mmr", "lambda", "expand", "history", "generated", "x"}, Lists: []string{"tags", "tag"}}

// withoutParams are the URL parameters a link "without" a field drops: the
// sliders make the weights, the λ and the checkbox make mmr.
var withoutParams = map[string][]string{"weights": {"weights", "w_vector", "w_graph", "w_bm25", "w_recency", "w_title"},
	"mmr": {"mmr", "lambda"}, "lambda": {"mmr", "lambda"}, "tags": {"tags", "tag"}, "tag": {"tags", "tag"}}

// inOptions are the controls inside the folded "Filters and ranking" panel, which
// opens when one of them needs fixing.
var inOptions = map[string]bool{"tags": true, "domain": true, "published_after": true, "published_before": true,
	"w_vector": true, "w_graph": true, "w_bm25": true, "w_recency": true, "w_title": true, "fusion": true, "lambda": true, "expand": true, "history": true, "generated": true, "k": true}

// fieldError is a field the page asks the user to fix.
type fieldError struct {
	Field   string // the request field
	Message string
}

// searchView is the data of the search page.
type searchView struct {
	Form        form
	Signals     []sliderView
	Resp        *pipeline.Response
	Results     []resultView
	Weights     [5]float64 // weights the ranker used (renormalised)
	Fusion      string     // the fusion the ranker used
	Error       string
	ErrorField  string // id of the control to fix ("" when none)
	ErrorLabel  string // the control's label, as the message names it
	OpenOptions bool   // the options panel is open: something in it is set or needs fixing
	Without     string // the page's address without the parameter at fault ("" when it is the search words)
	WithoutName string // that parameter, as the link names it
	Degraded    []string
	NextPage    string
	PrevPage    string // the page before, when this one does not start at the first result
	Offset      int
	Suggestions []linkView
	v           url.Values // the page's parameters, for the link without the one at fault
}

type sliderView struct {
	Key, Label string
	Value      float64
	Invalid    bool
}

type linkView struct{ Text, Href string }

type resultView struct {
	pipeline.Result
	Preview  []segment
	Headings []string
	Bars     []barView
	Sources  []string
	SumS     string // Σ weight × value: the score under weighted fusion
}

// barView is one segment of the stacked score bar: the signal's contribution
// weight × value, as a share of the bar's full width (a score of 1).
type barView struct {
	Key, Label    string
	Value, Weight float64
	X, Width      float64 // percent of the bar
	// The numbers as the page prints them, formatted once here: the template's
	// own function calls were most of a page's rendering time.
	XS, WidthS, ValueS, WeightS, ContribS string
}

type segment struct {
	Text string
	Hit  bool
}

// defaultForm is what an empty search page shows.
func defaultForm() form {
	w := ranker.DefaultWeights()
	return form{Weights: [5]float64{w[ranker.Vector], w[ranker.Graph], w[ranker.BM25], w[ranker.Recency], w[ranker.Title]},
		Fusion: "weighted", Lambda: 0.7, Expand: true, K: strconv.Itoa(pipeline.DefaultK)}
}

// readForm reads the page's URL into the form and the API's search fields. The
// sliders arrive as w_vector ... w_title, MMR as a checkbox plus lambda; the API's
// own names (weights, mmr as a lambda) work too, so an API query string can be
// opened as a page. x=1 marks a submitted form, where an unchecked box means off.
// A slider value that is not a number from 0 to 1 is reported as that slider.
func readForm(v url.Values) (form, url.Values, *fieldError) {
	var bad *fieldError
	f := defaultForm()
	out := url.Values{}
	f.Q = v.Get("q")
	if _, ok := v["q"]; ok {
		out.Set("q", f.Q)
	}
	f.Tags, f.Domain = v.Get("tags"), v.Get("domain")
	f.After, f.Before = v.Get("published_after"), v.Get("published_before")
	for _, name := range []string{"tags", "domain", "published_after", "published_before", "k", "offset", "fusion", "history", "generated"} {
		if s := v.Get(name); s != "" {
			out.Set(name, s)
		}
	}
	if s := v.Get("fusion"); s != "" {
		f.Fusion = s
	}
	if s := v.Get("k"); s != "" {
		f.K = s
	}
	sliders, parts, bad := readSliders(v)
	if s := v.Get("weights"); s != "" {
		out.Set("weights", s)
		if w, err := ranker.ParseWeights(s); err == nil {
			f.Weights = [5]float64{w[ranker.Vector], w[ranker.Graph], w[ranker.BM25], w[ranker.Recency], w[ranker.Title]}
		}
	} else {
		for i, x := range sliders {
			if x >= 0 {
				f.Weights[i] = x
			}
		}
		if len(parts) > 0 {
			out.Set("weights", strings.Join(parts, ","))
		}
	}
	submitted := v.Get("x") == "1"
	if s, ok := v["x"]; ok && s[0] != "1" && bad == nil {
		bad = &fieldError{Field: "x", Message: fmt.Sprintf("x=%s: x=1 marks a search sent from the form and takes no other value; leave it out.", strconv.Quote(clip(s[0], 40)))}
	}
	if s := v.Get("lambda"); s != "" {
		x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err == nil && !math.IsNaN(x) && x >= 0 && x <= 1 {
			f.Lambda = x
		} else if bad == nil {
			bad = &fieldError{Field: "lambda", Message: fmt.Sprintf("%q is not a number from 0 to 1; move the MMR λ slider (1 ranks by relevance only).", clip(s, 40))}
		}
	}
	switch m := v.Get("mmr"); {
	case m == "on" || m == "true":
		f.MMR = true
		out.Set("mmr", strconv.FormatFloat(f.Lambda, 'g', -1, 64))
		if s := v.Get("lambda"); s != "" {
			out.Set("mmr", s)
		}
	case m != "" && m != "off" && m != "false":
		f.MMR = true
		out.Set("mmr", m)
		if x, err := strconv.ParseFloat(m, 64); err == nil {
			f.Lambda = x
		}
	}
	// The box sends history=keep; unticked it sends nothing, the API's default
	// (demote). The API's own spellings (KEEP, " keep") tick it too.
	f.KeepHistory = strings.EqualFold(strings.TrimSpace(v.Get("history")), "keep")
	f.KeepGenerated = strings.EqualFold(strings.TrimSpace(v.Get("generated")), "keep")
	switch e := v.Get("expand"); {
	case e != "":
		out.Set("expand", e)
		f.Expand = e == "on" || e == "true" || e == "1" || e == "yes"
	case submitted:
		out.Set("expand", "false")
		f.Expand = false
	}
	return f, out, bad
}

// readSliders reads the sliders w_vector ... w_title in signalNames order (-1
// where absent) and the API's weights they make ("vector:0.4", ...); the first
// that is not a number from 0 to 1 is the error.
func readSliders(v url.Values) ([5]float64, []string, *fieldError) {
	xs := [5]float64{-1, -1, -1, -1, -1}
	var parts []string
	var bad *fieldError
	for i, s := range signalNames {
		raw := v.Get("w_" + s.Key)
		if raw == "" {
			continue
		}
		x, err := strconv.ParseFloat(strings.TrimSpace(raw), 64)
		if err != nil || math.IsNaN(x) || x < 0 || x > 1 {
			if bad == nil {
				bad = &fieldError{Field: "w_" + s.Key, Message: fmt.Sprintf("%q is not a number from 0 to 1; move the %s slider (0 turns the signal off).", clip(raw, 40), s.Label)}
			}
			continue
		}
		xs[i] = x
		parts = append(parts, s.Key+":"+raw)
	}
	return xs, parts, bad
}

// showError puts a field error on the page: its message, the control's label and
// id, and the options panel opened when the control is in it.
func (view *searchView) showError(field, msg string) {
	view.Error = msg
	if n, ok := fieldNames[field]; ok {
		view.ErrorField, view.ErrorLabel = n.ID, n.Label
	} else if field != "" {
		view.ErrorLabel = field
	}
	if inOptions[view.ErrorField] {
		view.OpenOptions = true
	}
	view.Without, view.WithoutName = "", ""
	if field != "" && field != "q" && view.v != nil {
		drop := withoutParams[field]
		if drop == nil {
			drop = []string{field}
		}
		rest := url.Values{}
		for k, vs := range view.v {
			if !slices.Contains(drop, k) {
				rest[k] = vs
			}
		}
		view.Without, view.WithoutName = "/", field
		if len(rest) > 0 {
			view.Without = "/?" + rest.Encode()
		}
	}
	for i := range view.Signals {
		view.Signals[i].Invalid = field == "weights" || field == "w_"+view.Signals[i].Key
	}
}

func (w *Web) searchPage(c *gin.Context) {
	v, err := url.ParseQuery(c.Request.URL.RawQuery)
	if err != nil {
		// URL.Query would drop the broken pair and show the start page as if
		// nothing had been asked.
		view := &searchView{Form: defaultForm()}
		view.showError("q", "The address is not valid: a '%' must be followed by two hex digits (send a literal % as %25). Type the words in the search box instead.")
		w.render(c, http.StatusBadRequest, "search", "Search: bad address", "search", view)
		return
	}
	v, pe := searchQuery.filter(v)
	f, fields, bad := readForm(v)
	if pe != nil {
		bad = &fieldError{Field: pe.Name, Message: pe.Problem + " " + pe.Accepts}
	}
	view := &searchView{Form: f, v: v}
	view.OpenOptions = f.Tags != "" || f.Domain != "" || f.After != "" || f.Before != "" || f.MMR || !f.Expand || f.KeepHistory || f.KeepGenerated ||
		f.Fusion != "weighted" || f.K != strconv.Itoa(pipeline.DefaultK)
	for i, s := range signalNames {
		view.Signals = append(view.Signals, sliderView{Key: s.Key, Label: s.Label, Value: f.Weights[i]})
	}
	if _, asked := v["q"]; !asked {
		// The start page with options in its address (a bookmark, a shared link):
		// one it cannot use is said, as on a search.
		if bad == nil {
			bad = optionsError(fields)
		}
		if bad != nil {
			view.showError(bad.Field, bad.Message)
			w.render(c, http.StatusBadRequest, "search", "Search", "search", view)
			return
		}
		w.render(c, http.StatusOK, "search", "Search", "search", view)
		return
	}
	title := "Search: " + clip(f.Q, 60)
	if bad != nil {
		view.showError(bad.Field, bad.Message)
		w.render(c, http.StatusBadRequest, "search", title, "search", view)
		return
	}
	req, err := api.RequestFromQuery(fields)
	if err != nil {
		var he *httpserver.Error
		if errors.As(err, &he) {
			view.showError(he.Field, pageMessage(he.Field, he.Detail))
		} else {
			view.showError("", err.Error())
		}
		w.render(c, http.StatusBadRequest, "search", title, "search", view)
		return
	}
	req.Explain = true // the bars need the weights the ranker used
	resp, err := w.d.Search.Search(c.Request.Context(), req)
	if err != nil {
		status, msg, field := searchFailure(err)
		view.showError(field, msg)
		if status >= 500 {
			w.d.Logger.Warn("web: search failed", "err", err)
		}
		w.render(c, status, "search", title, "search", view)
		return
	}
	w.fillResults(c.Request.Context(), view, req, resp, fields)
	w.render(c, http.StatusOK, "search", title, "search", view)
}

// optionsError checks the search options of a URL without search words as a
// search would: the first it cannot use, or nil.
func optionsError(fields url.Values) *fieldError {
	if len(fields) == 0 {
		return nil
	}
	probe := url.Values{}
	for k, vs := range fields {
		probe[k] = vs
	}
	probe.Set("q", "x")
	_, err := api.RequestFromQuery(probe)
	var he *httpserver.Error
	if errors.As(err, &he) && he.Field != "q" {
		return &fieldError{Field: he.Field, Message: pageMessage(he.Field, he.Detail)}
	}
	return nil
}

// pageMessage is the API's message, reworded where it speaks of the address
// (?q=...) or in ranges (1..100) while the page has a search box and controls.
func pageMessage(field, detail string) string {
	switch field {
	case "q":
		if strings.Contains(detail, "UTF-8") {
			return "The words to search for are not valid text (the address holds bytes that are not UTF-8); type them in the search box."
		}
		return "Type the words to search for."
	case "k":
		return fmt.Sprintf("give a whole number from 1 to %d.", pipeline.MaxK)
	case "offset":
		return fmt.Sprintf("the first result shown must be a whole number from 0 to %d; follow the Next and Previous links.", pipeline.MaxOffset)
	case "history":
		return "tick the box to rank release notes and changelogs at their full score, or leave it unticked to rank them lower (the address's history takes keep or demote only)."
	case "generated":
		return "tick the box to rank source listings and generated indexes at their full score, or leave it unticked to rank them lower (the address's generated takes keep or demote only)."
	}
	return detail
}

// searchFailure maps a pipeline error to a status and a message for people.
func searchFailure(err error) (int, string, string) {
	var fe *pipeline.FieldError
	var ue *pipeline.UnavailableError
	switch {
	case errors.As(err, &fe):
		return http.StatusBadRequest, fe.Reason, fe.Field
	case errors.As(err, &ue):
		return http.StatusServiceUnavailable, "This search cannot be answered right now (" + ue.Error() + "). Try again in a moment.", ""
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable, "The search ran out of time. Try again in a moment.", ""
	}
	return http.StatusServiceUnavailable, "The search failed; the server log has the details.", ""
}

// fillResults turns the pipeline's answer into what the template shows.
func (w *Web) fillResults(ctx context.Context, view *searchView, req pipeline.Request, resp *pipeline.Response, fields url.Values) {
	view.Resp = resp
	view.Degraded = resp.Degraded
	view.Offset = req.Offset
	if resp.Explain != nil {
		view.Fusion = resp.Explain.Fusion
		if ws, err := ranker.ParseWeights(resp.Explain.Weights); err == nil {
			view.Weights = [5]float64{ws[ranker.Vector], ws[ranker.Graph], ws[ranker.BM25], ws[ranker.Recency], ws[ranker.Title]}
		}
	}
	terms := queryTerms(resp.Query.Normalized)
	headings := w.headingPaths(ctx, resp.Results)
	for _, r := range resp.Results {
		rv := resultView{Result: r, Preview: highlight(r.Preview, terms), Headings: headings[r.ChunkID]}
		rv.Bars = bars(r.ScoreBreakdown, view.Weights)
		sum := 0.0
		for _, b := range rv.Bars {
			sum += b.Weight * b.Value
		}
		rv.SumS = strconv.FormatFloat(sum, 'f', 4, 64)
		for _, s := range strings.Split(r.Source, "+") {
			if s != "" {
				rv.Sources = append(rv.Sources, s)
			}
		}
		view.Results = append(view.Results, rv)
	}
	// Links to other searches keep the form (filters, weights, fusion): a suggested
	// query is searched within the same tags and domain as the query it came from.
	link := func(q string, offset int) string {
		v := url.Values{}
		for k, vs := range fields {
			v[k] = vs
		}
		v.Set("q", q)
		v.Del("offset")
		if offset > 0 {
			v.Set("offset", strconv.Itoa(offset))
		}
		return "/?" + v.Encode()
	}
	for _, q := range resp.SuggestedQueries {
		view.Suggestions = append(view.Suggestions, linkView{Text: q, Href: link(q, 0)})
	}
	page := func(offset int) string { return link(req.Query, offset) }
	if len(resp.Results) == req.K && req.Offset+req.K <= pipeline.MaxOffset {
		view.NextPage = page(req.Offset + req.K)
	}
	if req.Offset > 0 {
		view.PrevPage = page(max(req.Offset-req.K, 0))
	}
}

// bars lays the weighted signals of a result side by side: each segment's width
// is weight × value, so the whole bar is the weighted score.
func bars(b pipeline.ScoreBreakdown, w [5]float64) []barView {
	vals := [5]float64{b.Vector, b.Graph, b.BM25, b.Recency, b.Title}
	out := make([]barView, 0, 5)
	x := 0.0
	for i, s := range signalNames {
		width := w[i] * vals[i] * 100
		out = append(out, barView{Key: s.Key, Label: s.Label, Value: vals[i], Weight: w[i], X: x, Width: width,
			XS: strconv.FormatFloat(x, 'f', 4, 64), WidthS: strconv.FormatFloat(width, 'f', 4, 64),
			ValueS: strconv.FormatFloat(vals[i], 'f', 4, 64), WeightS: strconv.FormatFloat(w[i], 'f', 4, 64),
			ContribS: strconv.FormatFloat(w[i]*vals[i], 'f', 4, 64)})
		x += width
	}
	return out
}

// headingPaths reads the heading path of each result's chunk from the store (one
// query, bounded by Timeout: a database that does not answer must not hold the
// page); a failure only leaves the citations without headings.
func (w *Web) headingPaths(ctx context.Context, results []pipeline.Result) map[string][]string {
	out := map[string][]string{}
	if w.d.Chunks == nil || len(results) == 0 {
		return out
	}
	ids := make([]int64, 0, len(results))
	for _, r := range results {
		if id, err := strconv.ParseInt(r.ChunkID, 10, 64); err == nil {
			ids = append(ids, id)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, w.d.Timeout)
	defer cancel()
	chunks, err := w.d.Chunks.ChunksByIDs(ctx, ids)
	if err != nil {
		w.d.Logger.Warn("web: heading paths", "err", err)
		return out
	}
	for _, ch := range chunks {
		out[strconv.FormatInt(ch.ID, 10)] = ch.HeadingPath
	}
	return out
}

// stopwords are not highlighted.
var stopwords = map[string]bool{
	"the": true, "and": true, "for": true, "with": true, "how": true, "what": true, "does": true, "from": true,
	"into": true, "are": true, "can": true, "use": true, "that": true, "this": true, "you": true, "not": true,
}

// queryTerms are the lower-cased words of the query worth highlighting.
func queryTerms(q string) []string {
	var out []string
	for _, t := range strings.FieldsFunc(strings.ToLower(q), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len([]rune(t)) >= 2 && !stopwords[t] {
			out = append(out, t)
		}
	}
	return out
}

// highlight cuts text into words and the rest, marking the words that are a query
// term or start with one of at least three letters (environment → environments).
// The template escapes every segment.
func highlight(text string, terms []string) []segment {
	var out []segment
	isWord := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
	start, inWord := 0, false
	flush := func(end int, word bool) {
		if end <= start {
			return
		}
		s := text[start:end]
		hit := word && matches(strings.ToLower(s), terms)
		if n := len(out); n > 0 && out[n-1].Hit == hit {
			out[n-1].Text += s
		} else {
			out = append(out, segment{Text: s, Hit: hit})
		}
		start = end
	}
	for i, r := range text {
		if w := isWord(r); w != inWord {
			flush(i, inWord)
			inWord = w
		}
	}
	flush(len(text), inWord)
	return out
}

func matches(word string, terms []string) bool {
	for _, t := range terms {
		if word == t || (len(t) >= 3 && strings.HasPrefix(word, t)) {
			return true
		}
	}
	return false
}

// clip shortens s to n runes.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
