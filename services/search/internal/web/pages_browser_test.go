package web_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/kgsearch/kgsearch/services/search/internal/web"
)

// audit is run in a page and lists what a user would call broken: the page wider
// than the window, a button or number broken over two lines, a form control
// without a label, headings out of order, a missing landmark, an image without
// alt text, a drawing's label under 10 px high, the controls of a one-line form out of line, text with less than 4.5:1 contrast (3:1 when large), a link or an
// aria-describedby pointing at nothing, no title or icon.
const audit = `(() => {
  const p = [];
  const over = document.documentElement.scrollWidth - window.innerWidth;
  if (over > 1) p.push('the page is ' + over + ' px wider than the window');
  document.querySelectorAll('button, .status, .score, .badge').forEach(el => {
    if (!el.offsetParent) return;
    const r = document.createRange(); r.selectNodeContents(el);
    const tops = new Set([...r.getClientRects()].filter(x => x.width > 0).map(x => Math.round(x.top)));
    if (tops.size > 1) p.push('"' + el.textContent.trim() + '" is broken over ' + tops.size + ' lines');
  });
  document.querySelectorAll('input:not([type=hidden]), select, textarea').forEach(el => {
    if (!(el.labels && el.labels.length) && !el.getAttribute('aria-label')) p.push('#' + el.id + ' has no label');
  });
  const hs = [...document.querySelectorAll('h1, h2, h3, h4, h5, h6')].map(h => Number(h.tagName[1]));
  const h1 = hs.filter(x => x === 1).length;
  if (h1 !== 1) p.push(h1 + ' h1 headings, want 1');
  if (hs[0] !== 1) p.push('the first heading is h' + hs[0]);
  for (let i = 1; i < hs.length; i++) if (hs[i] > hs[i - 1] + 1) p.push('h' + hs[i] + ' follows h' + hs[i - 1]);
  for (const sel of ['header', 'nav', 'main']) if (!document.querySelector(sel)) p.push('no <' + sel + '> landmark');
  document.querySelectorAll('img').forEach(i => { if (!i.hasAttribute('alt')) p.push('an image without alt: ' + i.src); });
  document.querySelectorAll('svg[role=img]').forEach(s => { if (!s.getAttribute('aria-label')) p.push('an SVG image without a label'); });
  document.querySelectorAll('svg text').forEach(x => {
    const h = x.getBoundingClientRect().height;
    if (h > 0 && h < 10) p.push('the drawing\'s label "' + x.textContent + '" is ' + h.toFixed(1) + ' px high');
  });
  document.querySelectorAll('.rowform').forEach(f => {
    const els = [...f.querySelectorAll('label, input:not([type=hidden]), select, button')].filter(e => e.offsetParent).map(e => [e, e.getBoundingClientRect()]);
    for (let i = 1; i < els.length; i++) {
      const [a, ra] = els[i - 1], [b, rb] = els[i], d = Math.abs((ra.top + ra.bottom) / 2 - (rb.top + rb.bottom) / 2);
      if (ra.bottom > rb.top && rb.bottom > ra.top && d > 2) p.push('#' + (a.id || a.textContent.trim()) + ' and ' + (b.id || b.textContent.trim()) + ' in one row are ' + d.toFixed(0) + ' px out of line');
    }
  });
  if (!document.title.trim()) p.push('no title');
  if (!document.querySelector('link[rel=icon]')) p.push('no icon');
  document.querySelectorAll('[aria-describedby]').forEach(el => el.getAttribute('aria-describedby').split(' ').forEach(id => {
    if (!document.getElementById(id)) p.push('#' + el.id + ' is described by #' + id + ', which is not on the page');
  }));
  document.querySelectorAll('a[href^="#"]').forEach(a => {
    const id = a.getAttribute('href').slice(1);
    if (id && !document.getElementById(id)) p.push('a link to #' + id + ', which is not on the page');
  });
  const rgb = s => { const m = s.match(/[\d.]+/g).map(Number); return { r: m[0], g: m[1], b: m[2], a: m.length > 3 ? m[3] : 1 }; };
  const lum = c => { const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); }; return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b); };
  const background = el => {
    for (let e = el; e; e = e.parentElement) { const c = rgb(getComputedStyle(e).backgroundColor); if (c.a > 0.5) return c; }
    return { r: 255, g: 255, b: 255, a: 1 };
  };
  const seen = new Set();
  document.querySelectorAll('main *, header *').forEach(el => {
    if (el.closest('svg') || el.closest('.sr') || el.closest('.skip') || !el.offsetParent) return;
    if (![...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())) return;
    const st = getComputedStyle(el), fg = rgb(st.color), bg = background(el);
    const l1 = lum(fg), l2 = lum(bg), ratio = (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05);
    const large = parseFloat(st.fontSize) >= 24 || (parseFloat(st.fontSize) >= 18.66 && Number(st.fontWeight) >= 700);
    const key = st.color + ' on ' + JSON.stringify(bg);
    if (ratio < (large ? 3 : 4.5) && !seen.has(key)) { seen.add(key); p.push('contrast ' + ratio.toFixed(2) + ':1 for "' + el.textContent.trim().slice(0, 30) + '" (' + key + ')'); }
  });
  return p;
})()`

// TestBrowserPages opens every page, with good and bad input, in Chromium at a
// desktop (1280 px) and a phone (390 px) width and audits it (see audit). The
// pages are served with the test fakes; TestBrowser runs the real system.
func TestBrowserPages(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test: not with -short")
	}
	exe := chromium(t)
	site := web.FakeSite(t)
	s := &stack{t: t, browser: newBrowser(t, exe)}
	pages := []string{"/", "/?q=python+venv", "/?q=" + strings.Repeat("a", 2000), "/?q=python+venv&fusion=rrf", "/?q=python+venv&offset=20",
		"/?q=", "/?q=x&w_bm25=abc&x=1", "/?q=x&k=500", "/entities/python", "/entities/nope", "/entities/" + strings.Repeat("x", 300),
		"/crawls", "/crawls/" + web.FakeJobID, "/crawls/" + web.FakeShellJobID, "/crawls/bad%20id", "/documents", "/documents?deleted=1", "/documents?after=%27",
		"/documents?domain=site.test", "/documents?domain=site.test&removed=3&more=1",
		"/crawls?status=bogus", "/crawls?status=queued", "/crawls?status=done&limit=1", "/documents?limit=abc",
		"/documents?domain=" + url.QueryEscape("https://docs.python.org/3/library/"), "/documents?domain=nothing.test", "/?k=abc", "/?q=x&lambda=abc&mmr=on",
		"/?q=python+venv&history=keep", "/?q=x&history=newest", "/?q=python+venv&generated=keep", "/?q=x&generated=all"}
	for _, width := range []int64{1280, 390, 375} {
		s.do(chromedp.EmulateViewport(width, 900))
		for _, p := range pages {
			s.do(chromedp.Navigate(site + p))
			s.until(`document.readyState === 'complete'`, 30*time.Second)
			for _, problem := range eval[[]string](s, audit) {
				t.Errorf("%s at %d px: %s", clipTo(p, 50), width, problem)
			}
		}
		// A crawl the crawler refuses keeps the form as typed and says why on it.
		s.do(chromedp.Navigate(site+"/crawls"), chromedp.WaitVisible(chromedp.ID("crawl-form")),
			chromedp.SetValue(chromedp.ID("url"), "http://10.0.0.1/"), chromedp.SetValue(chromedp.ID("tags"), "mine"),
			chromedp.Click(chromedp.CSS(`#crawl-form button[type=submit]`)))
		s.until(`document.getElementById('crawl-error') !== null`, 30*time.Second)
		if got := eval[[]string](s, `[document.getElementById('url').value, document.getElementById('tags').value, document.getElementById('url').getAttribute('aria-invalid')]`); strings.Join(got, " ") != "http://10.0.0.1/ mine true" {
			t.Errorf("after the crawler's refusal the form holds %q", got)
		}
		for _, problem := range eval[[]string](s, audit) {
			t.Errorf("refused crawl at %d px: %s", width, problem)
		}
	}
	// On a phone the documents' titles keep a third of the table (the tags column folds away).
	s.do(chromedp.EmulateViewport(375, 900), chromedp.Navigate(site+"/documents"))
	s.until(`document.readyState === 'complete'`, 30*time.Second)
	if share := eval[float64](s, `document.querySelector('table.docs td').getBoundingClientRect().width / document.querySelector('table.docs').getBoundingClientRect().width`); share < 1.0/3 {
		t.Errorf("on a phone the documents' titles have %.0f%% of the table", share*100)
	}
	// On a phone the drawing scrolls in its frame, the entity in the middle of the view.
	s.do(chromedp.EmulateViewport(390, 900), chromedp.Navigate(site+"/entities/python"))
	s.until(`document.readyState === 'complete'`, 30*time.Second)
	if off := eval[float64](s, `(() => { const w = document.querySelector('.graphwrap').getBoundingClientRect(), c = document.querySelector('#graph .center circle').getBoundingClientRect();
	  return Math.abs((c.left + c.right) / 2 - (w.left + w.right) / 2); })()`); off > 5 {
		t.Errorf("on a phone the entity is drawn %.0f px off the middle of the view", off)
	}
	s.do(chromedp.EmulateViewport(1280, 900))
	// On a desktop the crawls' status filter is one line: label, choice, button.
	s.do(chromedp.Navigate(site + "/crawls"))
	s.until(`document.readyState === 'complete'`, 30*time.Second)
	if !eval[bool](s, `(() => { const rs = [...document.querySelectorAll('#crawl-filter label, #crawl-filter select, #crawl-filter button')].map(e => e.getBoundingClientRect());
	  return rs.length === 3 && rs.every(r => r.top < rs[0].bottom && r.bottom > rs[0].top); })()`) {
		t.Error("the status filter is broken over lines at 1280 px")
	}
	s.keyboard(t, site)
	s.errorLinkFocusesTheField(t, site)
	s.keepBox(t, site, "history", "Keep release notes and changelogs at full rank")
	s.keepBox(t, site, "generated", "Keep source listings and generated indexes at full rank")
	s.crawlProgress(t, site)
	s.crawlsListLive(t)
	s.crawlsListNew(t)
	s.deleteFakeSite(t, site)
}

// deleteFakeSite deletes the documents of a host from the list filtered by it: the
// confirm dialog names the host (declining it sends nothing), accepting it leads
// to the page saying how many were deleted; without JavaScript the form works
// as well, and a crawl covering the host is said on the page with its link.
func (s *stack) deleteFakeSite(t *testing.T, site string) {
	s.do(chromedp.Navigate(site + "/documents?domain=site.test"))
	s.until(`document.readyState === 'complete'`, 30*time.Second)
	eval[bool](s, `(window.confirm = m => { window.asked = m; return false; }, true)`)
	s.do(chromedp.Click(chromedp.CSS(`#delete-domain button`)))
	if asked := eval[string](s, `window.asked || ''`); !strings.Contains(asked, "all documents of site.test") || !strings.Contains(asked, "cannot be undone") {
		t.Errorf("the confirm dialog asked %q", asked)
	}
	if eval[bool](s, `location.search !== '?domain=site.test' || document.getElementById('domain-deleted') !== null`) {
		t.Error("declining the confirm dialog still deleted")
	}
	eval[bool](s, `(window.confirm = () => true, true)`)
	s.do(chromedp.Click(chromedp.CSS(`#delete-domain button`)))
	s.until(`document.getElementById('domain-deleted') !== null`, 30*time.Second)
	if got := eval[string](s, `document.getElementById('domain-deleted').textContent`); !strings.HasPrefix(got, "Deleted 7 documents of site.test") {
		t.Errorf("after deleting the site the page says %q", got)
	}
	for _, problem := range eval[[]string](s, audit) {
		t.Errorf("the page after deleting a site: %s", problem)
	}
	s.scripts(false)
	defer s.scripts(true)
	s.do(chromedp.Navigate(site + "/documents?domain=busy.test"))
	s.until(`document.readyState === 'complete'`, 30*time.Second)
	s.do(chromedp.Click(chromedp.CSS(`#delete-domain button`)))
	s.until(`document.getElementById('delete-error') !== null`, 30*time.Second)
	got := eval[[]string](s, `[document.getElementById('delete-error').textContent, document.querySelector('#delete-error a').getAttribute('href'), document.getElementById('domain').value]`)
	if !strings.Contains(got[0], "A crawl covers busy.test") || got[1] != "/crawls/"+web.FakeJobID || got[2] != "busy.test" {
		t.Errorf("a delete refused for a running crawl shows %q", got)
	}
	for _, problem := range eval[[]string](s, audit) {
		t.Errorf("the refused delete of a site: %s", problem)
	}
}

// keyboard tabs through the search page: the skip link first, then the header,
// the search box and its button, each with a visible focus outline; the skip link
// jumps over the navigation.
func (s *stack) keyboard(t *testing.T, site string) {
	// A results page: the empty search page gives the search box the focus at once.
	s.do(chromedp.Navigate(site + "/?q=python+venv"))
	s.until(`document.readyState === 'complete'`, 30*time.Second)
	const focused = `(() => { const e = document.activeElement, st = getComputedStyle(e);
	  return [e.id || e.textContent.trim(), st.outlineStyle !== 'none' && parseFloat(st.outlineWidth) >= 2 ? 'visible' : 'invisible'].join(' '); })()`
	want := []string{"Skip to content visible", "kgsearch visible", "Search visible", "Crawls visible", "Documents visible", "q visible", "Search visible", "Filters and ranking visible"}
	for i, w := range want {
		s.do(chromedp.KeyEvent("\t"))
		if got := eval[string](s, focused); got != w {
			t.Errorf("tab %d: focus on %q, want %q", i+1, got, w)
		}
	}
	// The crawls list with a parameter it cannot use: after the navigation, the
	// notice's way out, then the filter it names, then the start form.
	s.do(chromedp.Navigate(site + "/crawls?status=bogus"))
	s.until(`document.readyState === 'complete'`, 30*time.Second)
	want = []string{"Skip to content visible", "kgsearch visible", "Search visible", "Crawls visible", "Documents visible",
		"Open the page without status visible", "filter-status visible", "Show visible", "url visible"}
	for i, w := range want {
		s.do(chromedp.KeyEvent("\t"))
		if got := eval[string](s, focused); got != w {
			t.Errorf("crawls?status=bogus, tab %d: focus on %q, want %q", i+1, got, w)
		}
	}
	s.do(chromedp.Navigate(site + "/?q=python+venv"))
	s.until(`document.readyState === 'complete'`, 30*time.Second)
	s.do(chromedp.KeyEvent("\t"), chromedp.KeyEvent("\r"), chromedp.KeyEvent("\t"))
	if got := eval[string](s, `document.activeElement.id`); got != "q" {
		t.Errorf("after the skip link, tab goes to %q, want the search box", got)
	}
}

// errorLinkFocusesTheField follows the error's link to the control it names: the
// control gets the focus, in the opened options panel.
func (s *stack) errorLinkFocusesTheField(t *testing.T, site string) {
	s.do(chromedp.Navigate(site + "/?q=x&w_bm25=abc&x=1"))
	s.until(`document.readyState === 'complete'`, 30*time.Second)
	s.do(chromedp.Click(chromedp.CSS(`#search-error a`)))
	if got := eval[string](s, `document.activeElement.id`); got != "w_bm25" {
		t.Errorf("the error's link focused %q, want the BM25 slider", got)
	}
}

// keepBox ticks a "Keep … at full rank" box (id, the API field it sends) from the
// keyboard (space on the focused box) and applies the form: the address says
// id=keep and the page comes back with the box ticked in the open options panel.
// Clicking its label unticks it, and the next search leaves the field out.
func (s *stack) keepBox(t *testing.T, site, id, label string) {
	s.do(chromedp.Navigate(site+"/?q=python+venv"), chromedp.WaitVisible(chromedp.ID("q")),
		chromedp.Click(chromedp.CSS(`details.options summary`)), chromedp.WaitVisible(chromedp.ID(id)),
		chromedp.Focus(chromedp.ID(id)), chromedp.KeyEvent(" "))
	el := `document.getElementById('` + id + `')`
	if !eval[bool](s, el+`.checked`) {
		t.Fatalf("space on the focused %s box did not tick it", id)
	}
	s.do(chromedp.Click(chromedp.CSS(`details.options button[type=submit]`)))
	s.until(`new URLSearchParams(location.search).get('`+id+`') === 'keep' && document.readyState === 'complete'`, 30*time.Second)
	got := eval[[]string](s, `[String(`+el+`.checked), String(document.querySelector('details.options').open),
	  `+el+`.labels[0].textContent, document.getElementById(`+el+`.getAttribute('aria-describedby')).textContent]`)
	if got[0] != "true" || got[1] != "true" || got[2] != label || !strings.Contains(got[3], "0.7") {
		t.Errorf("after applying the ticked %s box the page shows checked, open, label, help = %q", id, got)
	}
	for _, problem := range eval[[]string](s, audit) {
		t.Errorf("the page with the %s box ticked: %s", id, problem)
	}
	s.do(chromedp.Click(chromedp.CSS(`label[for=`+id+`]`)), chromedp.Click(chromedp.CSS(`details.options button[type=submit]`)))
	s.until(`!new URLSearchParams(location.search).has('`+id+`') && new URLSearchParams(location.search).get('x') === '1' && document.readyState === 'complete'`, 30*time.Second)
	if eval[bool](s, el+`.checked`) {
		t.Errorf("the %s box unticked by its label comes back ticked", id)
	}
}

// crawlProgress opens a crawl page: the live events (the fake crawler's stream:
// a page of each outcome, a progress event bringing a warning, the job done)
// fill the progress bar, the counters, the warning callout and the list of pages.
func (s *stack) crawlProgress(t *testing.T, site string) {
	s.do(chromedp.Navigate(site + "/crawls/" + web.FakeJobID))
	s.until(`document.getElementById('job').dataset.final === '1'`, 30*time.Second)
	got := eval[[]string](s, `[String(document.getElementById('c-progress').value), String(document.getElementById('c-progress').max), document.getElementById('c-progress-text').textContent]`)
	// processed: 2 stored + 2 empty + 2 deleted
	if got[0] != "6" || got[1] != "6" || !strings.Contains(got[2], "finished") {
		t.Errorf("finished crawl: progress %s of %s, %q; want 6 of 6, finished", got[0], got[1], got[2])
	}
	if got := eval[[]string](s, `['script_rendered', 'deleted', 'empty', 'deleted-by'].map(k => document.getElementById('c-' + k).innerText.replace(/\s+/g, ' '))`); strings.Join(got, "|") != "1|2|2|http_410: 1 noindex: 1" {
		t.Errorf("live counters rendered by JS, deleted, empty, deleted by reason: %q, want 1, 2, 2, http_410: 1 noindex: 1", got)
	}
	// The page came without warnings (the crawler had none yet): the callout is
	// the progress event's, shown once, in a status region.
	warn := eval[[]string](s, `(() => { const b = document.getElementById('c-warnings'), n = b.querySelector('.notice');
	  return [b.getAttribute('role'), String(b.querySelectorAll('li').length), n && n.offsetParent ? 'visible' : 'hidden', b.innerText.replace(/\s+/g, ' ').trim()]; })()`)
	if warn[0] != "status" || warn[1] != "1" || warn[2] != "visible" || !strings.HasPrefix(warn[3], "⚠ Warning 3 of 4 pages are rendered by JavaScript in the browser (an empty <div id=\"app\">)") {
		t.Errorf("the live warning: %q", warn)
	}
	want := []string{
		"failed: HTTP 404 · http://site.test/f · HTTP 404 Not Found",
		"skipped: robots.txt disallows it · http://site.test/e",
		"removed from the index: HTTP 410 · http://site.test/g",
		"removed from the index (the page now asks not to be indexed (robots noindex); its stored version was removed) · http://site.test/d",
		"not indexed (noindex) · http://site.test/c",
		`rendered by JavaScript: needs a browser (an empty <div id="app">) · http://site.test/b`,
		"stored · http://site.test/a · 1 chunk",
	}
	if got := eval[[]string](s, `[...document.querySelectorAll('#c-pages li')].map(li => li.textContent)`); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the finished pages are listed as\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, problem := range eval[[]string](s, audit) {
		t.Errorf("the finished crawl's page: %s", problem)
	}
}

// crawlsListLive opens the crawls list of a running crawl that stores a page at
// each read of its status and ends at the third: its row changes without a
// reload, the reads stop once no crawl runs, and without JavaScript the list
// says its counts are as of its loading.
func (s *stack) crawlsListLive(t *testing.T) {
	site, reads := web.FakeSiteFinishing(t, 3)
	row := `document.querySelector('tr[data-job="` + web.FakeJobID + `"]')`
	cells := `[...` + row + `.querySelectorAll('[data-k=status], [data-k=stored]')].map(e => e.textContent)`
	s.do(chromedp.Navigate(site + "/crawls"))
	s.until(`document.readyState === 'complete'`, 30*time.Second)
	if got := eval[[]string](s, cells); strings.Join(got, " ") != "running 2" {
		t.Errorf("the running row starts as %q, want running 2", got)
	}
	s.until(row+`.dataset.status === 'done'`, 30*time.Second)
	if got := eval[[]string](s, cells); strings.Join(got, " ") != "done 5" {
		t.Errorf("the finished row shows %q, want done 5", got)
	}
	got := eval[[]string](s, `[document.getElementById('jobs').dataset.live, document.getElementById('jobs-live').textContent,
	  `+row+`.querySelector('[data-k=warn]').offsetParent ? 'warned' : 'not warned']`)
	if got[0] != "off" || !strings.Contains(got[1], "ended: done, 5 pages stored") || got[2] != "warned" {
		t.Errorf("after the crawl ended the list shows %q", got)
	}
	for _, problem := range eval[[]string](s, audit) {
		t.Errorf("the live crawls list: %s", problem)
	}
	n := reads()
	time.Sleep(5 * time.Second) // two and a half of the list's 2 s refreshes
	if reads() != n {
		t.Errorf("the list still reads the status after no crawl runs (%d reads, then %d)", n, reads())
	}
	// Without JavaScript the list is as it was: numbers of its loading, and a note saying so.
	s.scripts(false)
	s.do(chromedp.Navigate(site + "/crawls"))
	s.until(`document.readyState === 'complete'`, 30*time.Second)
	if got := eval[string](s, `document.getElementById('jobs').dataset.live === undefined ? document.getElementById('jobs-live').textContent : 'live'`); !strings.Contains(got, "reload the page for newer numbers") {
		t.Errorf("without JavaScript the list says %q", got)
	}
	s.scripts(true)
}

// crawlsListNew opens the crawls list and starts crawls behind its back (as the
// CLI or another tab would): each appears at the top once, without a reload, and
// is announced in a polite live region; a hidden tab asks nothing until shown
// again; a filtered list adds only crawls of its status; without JavaScript a
// reload shows them.
func (s *stack) crawlsListNew(t *testing.T) {
	const poll = 400 * time.Millisecond
	site, add, lists, fail := web.FakeSiteAddingCrawls(t, poll)
	const first, second = "aaaaaaaa-0000-4000-8000-000000000001", "aaaaaaaa-0000-4000-8000-000000000002"
	ids := `[...document.querySelectorAll('#jobs tbody tr')].map(tr => tr.dataset.job)`
	s.do(chromedp.Navigate(site + "/crawls"))
	s.until(`document.getElementById('jobs').dataset.list === 'on'`, 30*time.Second)
	if got := eval[[]string](s, ids); len(got) != 2 {
		t.Fatalf("the list starts with %q, want the 2 crawls of the fake", got)
	}
	add(first, "queued", "http://new.test/<i>a</i>")
	s.until(`document.querySelector('tr[data-job="`+first+`"]') !== null`, 30*time.Second)
	got := eval[[]string](s, `(() => { const tr = document.querySelector('#jobs tbody tr'), live = document.getElementById('jobs-new');
	  return [tr.dataset.job, tr.querySelector('a').textContent, String(tr.querySelectorAll('i').length), tr.querySelector('[data-k=status]').textContent,
	    live.textContent, live.getAttribute('role'), live.getAttribute('aria-live')]; })()`)
	if strings.Join(got, "|") != first+"|http://new.test/<i>a</i>|0|queued|1 new crawl|status|polite" {
		t.Errorf("the new crawl's row and announcement: %q", got)
	}
	// More polls add nothing twice.
	for n := lists(); lists() < n+3; {
		time.Sleep(poll / 2)
	}
	if got := eval[[]string](s, ids); strings.Count(strings.Join(got, " "), first) != 1 || len(got) != 3 {
		t.Errorf("after more polls the list holds %q", got)
	}
	for _, problem := range eval[[]string](s, audit) {
		t.Errorf("the crawls list with a new crawl: %s", problem)
	}
	// A hidden tab asks nothing; shown again, it catches up.
	eval[bool](s, `(Object.defineProperty(document, 'hidden', {configurable: true, get: () => true}), document.dispatchEvent(new Event('visibilitychange')), true)`)
	time.Sleep(2 * poll) // a request under way when the tab was hidden arrives
	n := lists()
	add(second, "running", "http://second.test/")
	time.Sleep(6 * poll)
	if lists() != n || eval[bool](s, `document.querySelector('tr[data-job="`+second+`"]') !== null`) {
		t.Errorf("a hidden tab asked the list %d more times, or showed the new crawl", lists()-n)
	}
	eval[bool](s, `(Object.defineProperty(document, 'hidden', {configurable: true, get: () => false}), document.dispatchEvent(new Event('visibilitychange')), true)`)
	s.until(`document.querySelector('tr[data-job="`+second+`"]') !== null`, 30*time.Second)
	if got := eval[[]string](s, ids); len(got) != 4 || got[0] != second || got[1] != first {
		t.Errorf("after the tab was shown again the list holds %q, want the second new crawl first", got)
	}
	if got := eval[string](s, `document.getElementById('jobs-new').textContent`); got != "2 new crawls" {
		t.Errorf("the live region says %q, want 2 new crawls", got)
	}
	// The list of done crawls adds a done crawl, never a running one.
	s.do(chromedp.Navigate(site + "/crawls?status=done"))
	s.until(`document.getElementById('jobs').dataset.list === 'on'`, 30*time.Second)
	add("aaaaaaaa-0000-4000-8000-000000000003", "running", "http://third.test/")
	add("aaaaaaaa-0000-4000-8000-000000000004", "done", "http://fourth.test/")
	s.until(`document.querySelector('tr[data-job="aaaaaaaa-0000-4000-8000-000000000004"]') !== null`, 30*time.Second)
	if got := eval[[]string](s, ids); strings.Join(got, " ") != "aaaaaaaa-0000-4000-8000-000000000004 "+web.FakeShellJobID {
		t.Errorf("the list of done crawls holds %q", got)
	}
	// An empty list shows its table when a crawl of its status comes.
	s.do(chromedp.Navigate(site + "/crawls?status=cancelled"))
	s.until(`document.getElementById('jobs').dataset.list === 'on'`, 30*time.Second)
	add("aaaaaaaa-0000-4000-8000-000000000005", "cancelled", "http://fifth.test/")
	s.until(`document.querySelector('tr[data-job="aaaaaaaa-0000-4000-8000-000000000005"]') !== null`, 30*time.Second)
	if got := eval[[]string](s, `[String(document.getElementById('jobs').offsetParent !== null), String(document.getElementById('jobs-empty').offsetParent === null)]`); strings.Join(got, " ") != "true true" {
		t.Errorf("after a crawl came to the empty list: table shown, empty note hidden = %q", got)
	}
	for _, problem := range eval[[]string](s, audit) {
		t.Errorf("the once empty list with a new crawl: %s", problem)
	}
	// A list the server no longer answers stops asking after five tries, and says so.
	fail(true)
	s.until(`document.getElementById('jobs').dataset.list === 'off'`, 30*time.Second)
	if got := eval[string](s, `document.getElementById('jobs-new').textContent`); !strings.Contains(got, "New crawls are no longer looked for") {
		t.Errorf("after the list failed the live region says %q", got)
	}
	n = lists()
	time.Sleep(4 * poll)
	if lists() != n {
		t.Errorf("the list was asked %d more times after it stopped", lists()-n)
	}
	fail(false)
	// Without JavaScript nothing polls; a reload lists the new crawls.
	s.scripts(false)
	defer s.scripts(true)
	s.do(chromedp.Navigate(site + "/crawls"))
	s.until(`document.readyState === 'complete'`, 30*time.Second)
	if got := eval[[]string](s, ids); len(got) != 7 || got[0] != "aaaaaaaa-0000-4000-8000-000000000005" {
		t.Errorf("without JavaScript the reloaded list holds %q, want the 5 new crawls first", got)
	}
}

// scripts switches the page's JavaScript on or off (for the pages without it).
func (s *stack) scripts(on bool) {
	s.t.Helper()
	if _, err := chromedp.Call(s.browser, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: !on}); err != nil {
		s.t.Fatalf("switch scripts on=%v: %v", on, err)
	}
}

func clipTo(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
