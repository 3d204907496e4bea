// kgsearch web pages: progressive enhancement only (every page works without it).
// Written for this project; no dependencies, no build step.
"use strict";

(function () {
  // Slider values shown next to the sliders.
  document.querySelectorAll('input[type=range]').forEach(function (r) {
    var out = document.getElementById(r.id + '_out');
    if (!out) return;
    r.addEventListener('input', function () { out.value = Number(r.value).toFixed(3); });
  });

  // Suggestions as you type: entity and title completions of the last word.
  var q = document.getElementById('q');
  var list = document.getElementById('q-suggest');
  if (q && list) {
    var timer = null, seq = 0;
    q.addEventListener('input', function () {
      clearTimeout(timer);
      timer = setTimeout(function () { suggest(++seq); }, 150);
    });
    var suggest = function (mine) {
      var v = q.value, m = /(\S+)$/.exec(v);
      if (!m || m[1].length < 2) { list.replaceChildren(); return; }
      var head = v.slice(0, m.index);
      fetch('/api/v1/suggest?format=json&limit=8&prefix=' + encodeURIComponent(m[1]), { headers: { Accept: 'application/json' } })
        .then(function (r) { return r.ok ? r.json() : null; })
        .then(function (s) {
          if (!s || mine !== seq) return;
          var opts = [], seen = {};
          var add = function (text, label) {
            if (seen[text]) return;
            seen[text] = true;
            var o = document.createElement('option');
            o.value = text;
            o.label = label;
            opts.push(o);
          };
          (s.entities || []).forEach(function (e) { add(head + e.name, e.type + ' · ' + e.documents + ' docs'); });
          (s.titles || []).forEach(function (t) { add(t.title, 'page title'); });
          list.replaceChildren.apply(list, opts);
        })
        .catch(function () { /* suggestions are optional */ });
    };
  }

  // An error's link to the control it names focuses that control (following the
  // link alone only scrolls), opening the folded panel around it.
  document.querySelectorAll('.notice.bad a[href^="#"]').forEach(function (a) {
    a.addEventListener('click', function (e) {
      var el = document.getElementById(a.getAttribute('href').slice(1));
      if (!el) return;
      e.preventDefault();
      var d = el.closest('details');
      if (d) d.open = true;
      el.focus();
    });
  });

  // A drawing wider than a phone scrolls in its frame: start with the entity in
  // the middle of the view.
  document.querySelectorAll('.graphwrap').forEach(function (w) {
    w.scrollLeft = (w.scrollWidth - w.clientWidth) / 2;
  });

  // Confirmation before deleting.
  document.querySelectorAll('form.confirm').forEach(function (f) {
    f.addEventListener('submit', function (e) {
      if (!window.confirm(f.getAttribute('data-confirm') || 'Are you sure?')) e.preventDefault();
    });
  });

  var terminal = function (s) { return s === 'done' || s === 'failed' || s === 'cancelled'; };

  // The crawls list: the rows of crawls that have not ended are refreshed from
  // this server's /crawls/{id}/status every few seconds while the page is open,
  // until none is left running. Crawls started after the page loaded (from the
  // CLI, the API or another tab) are added at the top from /crawls.json, with the
  // list's filter, and announced in a polite live region. A tab in the background
  // asks nothing. Without this script the list keeps the rows and counts of its
  // loading, and says so; a reload shows the new crawls.
  var jobs = document.getElementById('jobs');
  if (jobs) addNewRows(jobs, followRows(jobs));

  // followRows refreshes the running rows; it returns a function that starts it
  // again when rows were added.
  function followRows(table) {
    var every = Number(table.getAttribute('data-poll-ms')) || 2000;
    var note = document.getElementById('jobs-live');
    var failures = 0, active = false;
    var running = function () {
      return Array.prototype.filter.call(table.querySelectorAll('tr[data-job]'), function (tr) {
        return !terminal(tr.getAttribute('data-status')) && !tr.hasAttribute('data-gone');
      });
    };
    var cell = function (tr, k) { return tr.querySelector('[data-k="' + k + '"]'); };
    var update = function (tr, st) {
      var c = st.counters || {};
      ['stored', 'failed', 'chunks'].forEach(function (k) { var el = cell(tr, k); if (el) el.textContent = String(c[k] || 0); });
      var s = cell(tr, 'status');
      s.textContent = st.status;
      s.className = 'status st-' + st.status;
      var w = cell(tr, 'warn');
      if (w) w.hidden = !(st.warnings && st.warnings.length);
      tr.setAttribute('data-status', st.status);
      if (terminal(st.status) && note) {
        note.textContent = 'The crawl of ' + tr.querySelector('a').textContent + ' ended: ' + st.status + ', ' + (c.stored || 0) + ' pages stored.';
      }
    };
    var read = function (tr) {
      return fetch(tr.getAttribute('data-status-url'), { headers: { Accept: 'application/json' } }).then(function (r) {
        if (r.status === 404) { tr.setAttribute('data-gone', '1'); return; } // the crawler no longer knows it
        if (!r.ok) throw new Error('status ' + r.status);
        return r.json().then(function (st) { update(tr, st); });
      });
    };
    var tick = function () {
      var rows = running();
      if (document.hidden) { setTimeout(tick, every); return; } // a tab in the background asks nothing
      Promise.all(rows.map(read)).then(function () { failures = 0; }, function () { failures++; }).then(function () {
        if (!running().length) { active = false; table.setAttribute('data-live', 'off'); return; }
        if (failures < 5) { setTimeout(tick, every); return; }
        active = false;
        table.setAttribute('data-live', 'off');
        if (note) note.textContent = 'Live updates stopped: the server did not answer. Reload the page for the latest numbers.';
      });
    };
    var start = function () {
      if (active || !running().length) return;
      active = true;
      failures = 0;
      table.setAttribute('data-live', 'on');
      if (note) note.textContent = 'Running crawls update every few seconds while this page is open.';
      setTimeout(tick, every);
    };
    start();
    return start;
  }

  // addNewRows asks the list's JSON (data-list-url) every data-list-poll-ms for
  // crawls it does not show, and puts them at the top, newest first.
  function addNewRows(table, wake) {
    var url = table.getAttribute('data-list-url');
    var every = Number(table.getAttribute('data-list-poll-ms')) || 5000;
    var body = table.tBodies[0];
    var say = document.getElementById('jobs-new');
    var empty = document.getElementById('jobs-empty');
    var failures = 0, timer = 0, busy = false, added = 0;
    if (!url || !body) return;
    var shown = function () {
      var ids = {};
      Array.prototype.forEach.call(body.rows, function (tr) { ids[tr.getAttribute('data-job')] = true; });
      return ids;
    };
    var td = function (k, text, cls) {
      var el = document.createElement('td');
      el.setAttribute('data-k', k);
      if (cls) el.className = cls;
      el.textContent = text;
      return el;
    };
    var row = function (st) {
      var c = st.counters || {};
      var tr = document.createElement('tr');
      tr.setAttribute('data-job', st.id);
      tr.setAttribute('data-status', st.status);
      tr.setAttribute('data-status-url', '/crawls/' + encodeURIComponent(st.id) + '/status');
      tr.setAttribute('data-new', '1');
      var first = document.createElement('td');
      var a = document.createElement('a');
      a.href = '/crawls/' + encodeURIComponent(st.id);
      a.textContent = st.url;
      var warn = document.createElement('div');
      warn.className = 'jwarn';
      warn.setAttribute('data-k', 'warn');
      warn.hidden = !(st.warnings && st.warnings.length);
      var sign = document.createElement('span');
      sign.setAttribute('aria-hidden', 'true');
      sign.textContent = '\u26a0';
      warn.append(sign, ' has a warning: open the crawl');
      first.append(a, warn);
      var status = document.createElement('td');
      var span = document.createElement('span');
      span.className = 'status st-' + st.status;
      span.setAttribute('data-k', 'status');
      span.textContent = st.status;
      status.append(span);
      var created = new Date(st.created_at);
      tr.append(first, status, td('stored', String(c.stored || 0)), td('failed', String(c.failed || 0), 'opt'),
        td('chunks', String(c.chunks || 0), 'opt'), td('created', isNaN(created) ? '' : created.toISOString().slice(0, 16).replace('T', ' ')));
      return tr;
    };
    var add = function (list) {
      var ids = shown();
      var fresh = (list.crawls || []).filter(function (st) {
        if (!st || !st.id || ids[st.id]) return false;
        ids[st.id] = true;
        return true;
      });
      for (var i = fresh.length - 1; i >= 0; i--) body.insertBefore(row(fresh[i]), body.firstChild);
      if (!fresh.length) return;
      added += fresh.length;
      table.hidden = false;
      if (empty) empty.hidden = true;
      if (say) say.textContent = added === 1 ? '1 new crawl' : added + ' new crawls';
      wake();
    };
    var schedule = function () {
      if (!timer && !busy && !document.hidden && table.getAttribute('data-list') === 'on') timer = setTimeout(poll, every);
    };
    var poll = function () {
      timer = 0;
      if (document.hidden) return; // visibilitychange asks again when the tab is shown
      busy = true;
      fetch(url, { headers: { Accept: 'application/json' } }).then(function (r) {
        if (!r.ok) throw new Error('status ' + r.status);
        return r.json();
      }).then(function (list) { failures = 0; add(list); }, function () { failures++; }).then(function () {
        busy = false;
        if (failures >= 5) {
          table.setAttribute('data-list', 'off');
          if (say) say.textContent = 'New crawls are no longer looked for: the server did not answer. Reload the page to see them.';
          return;
        }
        schedule();
      });
    };
    document.addEventListener('visibilitychange', function () {
      if (!document.hidden) { schedule(); return; }
      if (timer) { clearTimeout(timer); timer = 0; }
    });
    table.setAttribute('data-list', 'on');
    schedule();
  }

  // Live crawl counters from the crawl's server-sent events (relayed by this server).
  var job = document.getElementById('job');
  if (!job) return;
  if (terminal(job.getAttribute('data-status'))) return;
  var maxPages = Number(job.getAttribute('data-max-pages')) || 0;
  var live = document.getElementById('live');
  var set = function (id, v) { var el = document.getElementById(id); if (el) el.textContent = String(v); };
  var counts = function (id, m) {
    var ul = document.getElementById(id), items = [];
    Object.keys(m || {}).forEach(function (k) { if (m[k] > 0) items.push([k, m[k]]); });
    items.sort(function (a, b) { return b[1] - a[1] || (a[0] < b[0] ? -1 : 1); });
    var lis = items.map(function (it) { var li = document.createElement('li'); li.textContent = it[0] + ': ' + it[1]; return li; });
    if (!lis.length) { var li = document.createElement('li'); li.className = 'hint'; li.textContent = 'none'; lis.push(li); }
    ul.replaceChildren.apply(ul, lis);
  };
  var processedOf = function (c) { return (c.stored || 0) + (c.unchanged || 0) + (c.empty || 0) + (c.deleted || 0); };
  // pagesLeft mirrors web.pagesLeft: pages max_pages still allows, at most the
  // queued and in-flight URLs.
  var pagesLeft = function (c) {
    var left = maxPages - processedOf(c), work = (c.queued || 0) + (c.in_flight || 0);
    if (work < left || maxPages === 0) left = work;
    return left;
  };
  // eta mirrors web.eta: the pages left at the fetch rate so far.
  var eta = function (st, c) {
    if (terminal(st.status)) return 'finished';
    var left = pagesLeft(c);
    if (left <= 0) return 'almost done';
    var rate = (st.rates && st.rates.pages_per_sec) || 0;
    if (rate <= 0) return 'estimating…';
    var s = Math.round(left / rate), h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
    return (h ? h + 'h' : '') + (h || m ? m + 'm' : '') + (s % 60) + 's';
  };
  // progress mirrors crawl.html: processed of (processed + pages left); full when
  // finished, indeterminate while nothing is known.
  var progress = function (st, c) {
    var bar = document.getElementById('c-progress'), text = document.getElementById('c-progress-text');
    if (!bar || !text) return;
    var done = terminal(st.status), processed = processedOf(c);
    var total = processed + (done ? 0 : Math.max(pagesLeft(c), 0));
    if (total > 0) { bar.max = total; bar.value = processed; }
    else if (done) { bar.max = 1; bar.value = 1; }
    else bar.removeAttribute('value');
    text.textContent = processed + ' of ' + (done ? processed + ' (finished)' : total + ' known so far, at most ' + maxPages);
  };
  // warnings mirrors crawl.html's callout; it is rebuilt only when the list
  // changes, so a screen reader hears a warning once, not at every progress event.
  var warnings = function (list) {
    var box = document.getElementById('c-warnings');
    list = list || [];
    var shown = Array.prototype.map.call(box.querySelectorAll('li'), function (li) { return li.textContent; });
    if (shown.join('\n') === list.join('\n')) return;
    if (!list.length) { box.replaceChildren(); return; }
    var div = document.createElement('div'), p = document.createElement('p'), icon = document.createElement('span');
    var strong = document.createElement('strong'), ul = document.createElement('ul');
    div.className = 'notice warn warnings';
    icon.setAttribute('aria-hidden', 'true');
    icon.textContent = '⚠';
    strong.textContent = list.length > 1 ? 'Warnings' : 'Warning';
    p.append(icon, ' ', strong);
    ul.className = 'plain';
    list.forEach(function (w) { var li = document.createElement('li'); li.textContent = w; ul.append(li); });
    div.append(p, ul);
    box.replaceChildren(div);
  };
  var show = function (st) {
    var c = st.counters || {};
    ['discovered', 'queued', 'in_flight', 'fetched', 'stored', 'unchanged', 'deleted', 'empty', 'script_rendered', 'failed', 'chunks'].forEach(function (k) {
      set('c-' + k, c[k] || 0);
    });
    var b = c.bytes || 0;
    set('c-bytes', b >= 1048576 ? (b / 1048576).toFixed(1) + ' MiB' : b >= 1024 ? (b / 1024).toFixed(1) + ' KiB' : b + ' B');
    set('c-rate', ((st.rates && st.rates.pages_per_sec) || 0).toFixed(1));
    set('c-eta', eta(st, c));
    progress(st, c);
    warnings(st.warnings);
    counts('c-reasons', c.failed_by_reason);
    counts('c-skipped', c.skipped);
    counts('c-deleted-by', c.deleted_by_reason);
    var s = document.getElementById('c-status');
    s.textContent = st.status;
    s.className = 'status st-' + st.status;
    job.setAttribute('data-status', st.status);
    if (terminal(st.status)) {
      var cf = document.getElementById('cancel-form');
      if (cf) cf.remove();
    }
  };
  var pages = document.getElementById('c-pages');
  // A finished page in words: the outcome's label from the page's legend
  // (#c-outcomes, see outcomes.go), then the crawler's detail when it sent one
  // (what showed a page to be rendered by JavaScript, why a stored page was
  // removed), else the reason of a skip, failure or removal; and an error.
  var labels = {};
  document.querySelectorAll('#c-outcomes [data-outcome]').forEach(function (d) {
    labels[d.getAttribute('data-outcome')] = d.querySelector('dt').textContent;
  });
  var reasons = {};
  try { reasons = JSON.parse(pages.getAttribute('data-reasons') || '{}'); } catch (e) { /* the codes are shown instead */ }
  var reasonText = function (r) {
    var http = /^http_(\d+)$/.exec(r);
    return reasons[r] || labels[r] || (http ? 'HTTP ' + http[1] : r);
  };
  var pageText = function (d) {
    var t = labels[d.outcome] || d.outcome;
    if (d.detail) t += ' (' + d.detail + ')';
    else if (d.reason && d.reason !== d.outcome) t += ': ' + reasonText(d.reason);
    t += ' · ' + d.url;
    if (d.chunks) t += ' · ' + d.chunks + (d.chunks === 1 ? ' chunk' : ' chunks');
    if (d.error) t += ' · ' + (d.error.length > 200 ? d.error.slice(0, 200) + '…' : d.error);
    return t;
  };
  var es = new EventSource(job.getAttribute('data-events'));
  es.addEventListener('open', function () { live.textContent = '(live)'; });
  es.addEventListener('progress', function (e) { var d = JSON.parse(e.data); if (d.status) show(d.status); });
  es.addEventListener('page', function (e) {
    var d = JSON.parse(e.data), li = document.createElement('li');
    li.className = 'o-' + d.outcome;
    li.textContent = pageText(d);
    pages.prepend(li);
    while (pages.children.length > 200) pages.lastChild.remove();
  });
  es.addEventListener('summary', function (e) {
    var d = JSON.parse(e.data);
    if (d.status) show(d.status);
    live.textContent = '(finished)';
    job.setAttribute('data-final', '1');
    es.close();
  });
  es.addEventListener('error', function () {
    if (es.readyState === EventSource.CLOSED) live.textContent = '(live updates ended; reload for the latest numbers)';
    else live.textContent = '(reconnecting…)';
  });
})();
