#!/usr/bin/env bash
# `make eval`: relevance of the full search pipeline, its ablations and the peer
# baselines on the judged datasets (eval/*/queries.json; format: eval/README.md).
#  1. MariaDB 11.8, Neo4j 5.26 and the embedding model up (installed on first run)
#  2. each dataset's site served on loopback by its site.script (`<script> start`,
#     e.g. deploy/local/pydocs.sh)
#  3. kg, crawler and search started (scripts/services.sh)
#  4. each dataset's crawl run through the crawler's API, unless a finished crawl with
#     the same spec is recorded (KGS_EVAL_RECRAWL=1 crawls again; unchanged pages are
#     not embedded again)
#  5. wait until the search index has caught up (index_lag 0) and the crawler's kg
#     outbox is empty (every stored page ingested by kg)
#  6. a search process for the evaluation (127.0.0.1:8090, own Bleve copy, generous
#     timeouts), stopped at the end
#  7. the peers' Python: tantivy from PyPI in a venv under $KGS_STATE/eval/venv
#     (evaluation only, never a product dependency)
#  8. go run ./cmd/kgeval over all datasets: our modes (full, bm25, vector, rrf), the
#     ablations and the peers (tantivy BM25, exact dense, their RRF) ranking the same
#     stored chunks; nDCG@10, MRR@10, Recall@10 and sign tests per dataset and over
#     the union of the datasets
# The stack and the three services keep running afterwards; `make down` stops them.
#
# Environment: KGS_EVAL_DATASETS [the dev sets: eval/pydocs/queries.json
# eval/django/queries.json] (space-separated; the older KGS_EVAL_DATASET is read too), KGS_EVAL_ARGS (extra kgeval flags, e.g. "-v"),
# KGS_EVAL_OUT [$KGS_STATE/eval] (JSON and Markdown reports, the evaluation's Bleve
# copy), KGS_EVAL_PEERS [1] (0: no peer baselines), KGS_EVAL_VENV
# [$KGS_STATE/eval/venv], KGS_EVAL_TANTIVY [0.27.0] (the tantivy version installed),
# KGS_EVAL_RECRAWL [0], KGS_EVAL_CRAWL_TIMEOUT [5400] and KGS_EVAL_SETTLE_TIMEOUT
# [1800] seconds, KGS_EVAL_DEFAULT_CRAWL [0] (1: crawl each dataset's site without its
# crawl.exclude, as a user crawls with default settings; the pages the judges left out
# then count as not relevant), KGS_EVAL_MAX_PAGES [the dataset's crawl.max_pages],
# KGS_EVAL_PRUNE [0] (1: delete stored pages of a dataset's site that
# its crawl excludes, e.g. left by other crawls), KGS_EVAL_SEARCH_URL (evaluate a
# running service instead of starting one), KGS_EVAL_SEARCH_PORT [8090],
# KGS_EVAL_TIMEOUT [10s] per retriever, KGS_EVAL_DEADLINE [20s].
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export KGS_STATE=${KGS_STATE:-$PWD/.state}
crawler=http://127.0.0.1:${CRAWLER_PORT:-8081}
search=http://127.0.0.1:${SEARCH_PORT:-8080}
kg=http://127.0.0.1:${KG_PORT:-8088}
read -r -a datasets <<<"${KGS_EVAL_DATASETS:-${KGS_EVAL_DATASET:-eval/pydocs/queries.json eval/django/queries.json}}"
out=${KGS_EVAL_OUT:-$KGS_STATE/eval}
mkdir -p "$out"

step() { printf '\n== %s\n' "$*"; }
die() { echo "eval.sh: $*" >&2; exit 1; }
json() { python3 -c "import json,sys; j=json.load(sys.stdin); print($1)"; }

((${#datasets[@]} > 0)) || die "no dataset (KGS_EVAL_DATASETS)"
for dataset in "${datasets[@]}"; do
	[[ -f $dataset ]] || die "no dataset at $dataset"
done

# site <dataset> root|script|hostport: the dataset's site.root, its site.script (the
# older "served_by": "deploy/local/x.sh start" is read too) or its root's host:port.
site() {
	python3 - "$1" "$2" <<'EOF'
import json, sys, urllib.parse
s = json.load(open(sys.argv[1])).get("site", {})
root = s.get("root", "")
if sys.argv[2] == "root":
    print(root)
elif sys.argv[2] == "script":
    print(s.get("script") or (s.get("served_by") or "").split(" ")[0])
else:
    print(urllib.parse.urlsplit(root).netloc)
EOF
}

# crawl_dataset <dataset>: run the dataset's crawl unless an identical one is done,
# then say how many pages of its site are stored.
crawl_dataset() {
	local dataset=$1 name root hostport body expected done_job job id deadline line status docs headers code location
	name=$(basename "$(dirname "$dataset")")
	root=$(site "$dataset" root)
	hostport=$(site "$dataset" hostport)
	# The crawl spec of the dataset, as the body of POST /api/v1/crawls.
	body=$(python3 - "$dataset" "$root" <<'EOF'
import json, os, sys
d = json.load(open(sys.argv[1]))
c = d["crawl"]
default = os.environ.get("KGS_EVAL_DEFAULT_CRAWL", "0") == "1"  # as a user crawls: no exclude
print(json.dumps({"url": sys.argv[2] + c["start"], "max_depth": c["max_depth"],
                  "max_pages": int(os.environ.get("KGS_EVAL_MAX_PAGES") or c["max_pages"]),
                  "exclude": [] if default else c.get("exclude", []), "tags": c.get("tags", [])}))
EOF
	)
	expected=$(json 'j["crawl"].get("expected_pages", 0)' <"$dataset")

	# A finished job of this process's database with the same spec? Pages that failed
	# only with 404 or 410 (dangling links in the site) do not make it incomplete.
	done_job=$(curl -fsS "$crawler/api/v1/crawls?status=done&limit=100" | python3 -c '
import json, sys
want = json.loads(sys.argv[1])
for j in json.load(sys.stdin).get("crawls", []):
    s, c = j.get("spec", {}), j.get("counters", {})
    gone = sum(n for r, n in (c.get("failed_by_reason") or {}).items() if r in ("http_404", "http_410"))
    # A stored spec leaves empty lists out (omitempty): missing (or null) equals [].
    same = all(((s.get(k) or []) if isinstance(v, list) else s.get(k)) == v for k, v in want.items())
    if same and c.get("failed", 0) == gone:
        print(j["id"]); break
' "$body")

	if [[ -n $done_job && ${KGS_EVAL_RECRAWL:-0} != 1 ]]; then
		step "crawl of $name: already done (job $done_job); KGS_EVAL_RECRAWL=1 crawls again"
	else
		step "crawl of $name: $body"
		# 409: an identical crawl is queued or running (Location names it); follow it.
		headers=$(mktemp)
		job=$(curl -sS -D "$headers" -w '\n%{http_code}' -X POST "$crawler/api/v1/crawls" \
			-H 'Content-Type: application/json' -d "$body") || {
			rm -f "$headers"
			die "crawl of $name: POST $crawler/api/v1/crawls failed"
		}
		code=${job##*$'\n'} job=${job%$'\n'*}
		location=$(tr -d '\r' <"$headers" | sed -n 's/^[Ll]ocation:[[:space:]]*//p' | tail -n 1)
		rm -f "$headers"
		case "$code" in
		2??)
			id=$(printf '%s' "$job" | json 'j["id"]')
			echo "job $id"
			;;
		409)
			id=${location##*/}
			[[ $location == */api/v1/crawls/* && -n $id ]] ||
				die "crawl of $name: POST $crawler/api/v1/crawls answered 409 without a job in Location: $job"
			echo "crawl of $name: an identical crawl is already running (job $id); following it"
			;;
		*) die "crawl of $name: POST $crawler/api/v1/crawls answered $code: $job" ;;
		esac
		deadline=$((SECONDS + ${KGS_EVAL_CRAWL_TIMEOUT:-5400}))
		while :; do
			line=$(curl -fsS "$crawler/api/v1/crawls/$id" | python3 -c '
import json, sys
j = json.load(sys.stdin); c = j.get("counters", {}); r = j.get("rates", {})
print(j["status"], "fetched=%s stored=%s unchanged=%s failed=%s queued=%s chunks=%s chunks/s=%s" % (
    c.get("fetched", 0), c.get("stored", 0), c.get("unchanged", 0), c.get("failed", 0), c.get("queued", 0),
    c.get("chunks", 0), r.get("chunks_per_sec", 0)))')
			status=${line%% *}
			echo "  $line"
			case "$status" in done | failed | cancelled) break ;; esac
			((SECONDS < deadline)) || die "crawl did not finish in time; see $KGS_STATE/logs/crawler.log"
			sleep 10
		done
		[[ $status == "done" ]] || die "crawl ended $status; see $KGS_STATE/logs/crawler.log"
	fi

	# Pages of the site in the store that the dataset's crawl would not fetch (left by
	# other crawls, e.g. `make run`) are not searched when the crawl has tags (kgeval
	# restricts every search to them), but say how many so runs can be compared.
	docs=$out/documents-$name.json
	# Every stored document of the host, page by page (one host can serve several
	# sites on different ports, more than one page of the listing).
	python3 - "$crawler/api/v1/documents?limit=1000&domain=${hostport%%:*}" >"$docs" <<'EOF' || true
import json, sys, urllib.parse, urllib.request
url, docs, after = sys.argv[1], [], ""
while True:
    page = json.load(urllib.request.urlopen(url + ("&after=" + urllib.parse.quote(after) if after else ""), timeout=30))
    docs += page.get("documents", [])
    after = page.get("next_after") or ""
    if not after:
        break
json.dump({"documents": docs}, sys.stdout)
EOF
	python3 - "$docs" "$body" "$expected" <<'EOF' || true
import json, re, sys
try:
    docs = json.load(open(sys.argv[1])).get("documents", [])
except Exception:
    sys.exit(0)
spec = json.loads(sys.argv[2])
root = spec["url"].rsplit("/", 1)[0] + "/"
site = [d for d in docs if d["url"].startswith(root)]
outside = [d["url"] for d in site if any(re.search(x, d["url"]) for x in spec["exclude"])]
chunks = sum(d.get("chunk_count", 0) for d in site)
print(f"{len(site)} pages of {root} stored ({chunks} chunks); expected {sys.argv[3]} pages")
if outside:
    print(f"note: {len(outside)} stored pages fall outside the crawl spec, e.g. {outside[:3]}; KGS_EVAL_PRUNE=1 deletes them")
with open(sys.argv[1] + ".outside", "w") as f:
    for d in site:
        if d["url"] in outside:
            print(d["id"], d["url"], file=f)
EOF
	if [[ ${KGS_EVAL_PRUNE:-0} == 1 && -s $docs.outside ]]; then
		local docid docurl
		while read -r docid docurl; do
			echo "  delete $docurl"
			curl -fsS -o /dev/null -X DELETE "$crawler/api/v1/documents/$docid"
		done <"$docs.outside"
	fi
}

step "stack: MariaDB 11.8, Neo4j 5.26, embedding model"
deploy/local/stack.sh up

allow=()
for dataset in "${datasets[@]}"; do
	script=$(site "$dataset" script)
	root=$(site "$dataset" root)
	[[ -n $root ]] || die "$dataset: no site.root"
	step "site of $dataset: $root"
	if [[ -n $script ]]; then
		[[ -x $script ]] || die "$dataset: site.script $script is not an executable script"
		"$script" start
	else
		echo "no site.script: $root must be served already"
	fi
	allow+=("$(site "$dataset" hostport)")
done

step "services: kg, crawler, search"
if [[ -z ${CRAWLER_ALLOW_HOSTS:-} ]]; then
	CRAWLER_ALLOW_HOSTS=$(printf '%s\n' "${allow[@]}" | sort -u | paste -sd, -)
fi
export CRAWLER_ALLOW_HOSTS
scripts/services.sh start

for dataset in "${datasets[@]}"; do
	crawl_dataset "$dataset"
done

step "settle: search index caught up, kg outbox drained"
deadline=$((SECONDS + ${KGS_EVAL_SETTLE_TIMEOUT:-1800}))
db=$(eval "$(deploy/local/stack.sh env)"; printf '%s' "${KGS_MARIADB_DSN:-}" | sed -E 's#.*/([^/?]+)(\?.*)?$#\1#')
db=${db:-kgsearch}
last_stats="" stable=0
while :; do
	lag=$(curl -fsS "$search/api/v1/status" 2>/dev/null | json 'j.get("index_lag", -1)' 2>/dev/null || echo -1)
	pending=$(deploy/local/mariadb.sh client -N -B -e "SELECT COUNT(*) FROM \`$db\`.outbox" 2>/dev/null || echo "")
	if [[ -z $pending ]]; then
		# No client: the outbox is drained when kg's counts stop changing.
		stats=$(curl -fsS "$kg/api/v1/stats" 2>/dev/null || echo "")
		if [[ -n $stats && $stats == "$last_stats" ]]; then stable=$((stable + 1)); else stable=0; fi
		last_stats=$stats
		((stable >= 3)) && pending=0 || pending="?"
	fi
	echo "  index_lag=$lag kg_outbox=$pending"
	[[ $lag == 0 && $pending == 0 ]] && break
	((SECONDS < deadline)) || die "not settled in time (index_lag $lag, outbox $pending); see $KGS_STATE/logs/"
	sleep 5
done

# The evaluation asks its own search process, started now that the graph has settled
# (the service loads kg's entities, its query gazetteer, at start): on 127.0.0.1:8090
# with its own Bleve copy under $out/bleve (built from MariaDB, then kept in sync), and
# with generous retrieval timeouts, so that a loaded machine degrades no answer — the
# evaluation measures ranking, `make bench` measures speed. KGS_EVAL_SEARCH_URL points
# kgeval at a running service instead.
if [[ -n ${KGS_EVAL_SEARCH_URL:-} ]]; then
	search=$KGS_EVAL_SEARCH_URL
else
	step "search: evaluation instance"
	port=${KGS_EVAL_SEARCH_PORT:-8090}
	search=http://127.0.0.1:$port
	if curl -fsS "$search/healthz" >/dev/null 2>&1; then
		die "something already answers on $search; stop it or set KGS_EVAL_SEARCH_PORT"
	fi
	go build -o bin/ ./services/search
	timeout=${KGS_EVAL_TIMEOUT:-10s}
	(
		eval "$(deploy/local/stack.sh env)"
		export SEARCH_ADDR=127.0.0.1:$port SEARCH_INDEX_DIR=$out/bleve KGS_KG_URL=$kg \
			SEARCH_DEADLINE=${KGS_EVAL_DEADLINE:-20s} SEARCH_VECTOR_TIMEOUT=$timeout SEARCH_GRAPH_TIMEOUT=$timeout \
			SEARCH_BM25_TIMEOUT=$timeout SEARCH_EXPAND_TIMEOUT=$timeout
		exec bin/search >>"$KGS_STATE/logs/search-eval-$port.log" 2>&1
	) &
	search_pid=$!
	trap 'kill "$search_pid" 2>/dev/null || true' EXIT
	deadline=$((SECONDS + 600))
	until [[ $(curl -fsS "$search/api/v1/status" 2>/dev/null | json 'j.get("index_lag", -1)' 2>/dev/null || echo -1) == 0 ]]; do
		kill -0 "$search_pid" 2>/dev/null || die "the evaluation search process exited; see $KGS_STATE/logs/search-eval-$port.log"
		((SECONDS < deadline)) || die "the evaluation search index did not catch up in 600s; see $KGS_STATE/logs/search-eval-$port.log"
		sleep 1
	done
	echo "search: ready (pid $search_pid) $search, log $KGS_STATE/logs/search-eval-$port.log"
fi

peer_args=()
if [[ ${KGS_EVAL_PEERS:-1} != 0 ]]; then
	venv=${KGS_EVAL_VENV:-$KGS_STATE/eval/venv}
	want=${KGS_EVAL_TANTIVY:-0.27.0}
	step "peers: tantivy $want in $venv (evaluation only)"
	if ! "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('tantivy') != sys.argv[1])" "$want" 2>/dev/null; then
		python3 -m venv "$venv"
		"$venv/bin/pip" install --quiet "tantivy==$want"
	fi
	peer_args=(-peers -python "$venv/bin/python")
fi

step "evaluate: ${datasets[*]}"
list=$(printf '%s,' "${datasets[@]}")
(
	eval "$(deploy/local/stack.sh env)"
	# shellcheck disable=SC2086 # KGS_EVAL_ARGS is a list of flags
	go run ./cmd/kgeval -dataset "${list%,}" -search "$search" -ablations "${peer_args[@]}" \
		-json "$out/report.json" -md "$out/report.md" ${KGS_EVAL_ARGS:-}
)
echo
echo "reports: $out/report.json (per query) and $out/report.md (for docs/benchmarks.md)"
