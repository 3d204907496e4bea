#!/usr/bin/env bash
# `make run`: the product's main job, end to end on this machine.
#  1. MariaDB 11.8, Neo4j 5.26 and the embedding model up (installed on first run)
#  2. the Python 3.11 manual (Debian's python3.11-doc) served on 127.0.0.1:8099
#  3. kg, crawler and search started on loopback
#  4. the manual crawled through the crawler's API, with progress
#  5. a search answered in TOON
# Everything keeps running afterwards; `make down` stops it.
#
# Environment: KGS_RUN_MAX_PAGES [80], KGS_RUN_DEPTH [3], KGS_RUN_QUERY, KGS_RUN_START
# (the URL to crawl; default the manual's tutorial), and the ports SEARCH_PORT [8080],
# CRAWLER_PORT [8081], KG_PORT [8088] and KGS_PYDOCS_PORT [8099]. CRAWLER_ALLOW_HOSTS
# set for another local site is kept, with the manual's host added to it. When an
# identical crawl is still queued or running (a `make run` interrupted during its
# crawl), that job is followed; any other refusal is printed with the crawler's detail.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/runlib.sh
export KGS_STATE=${KGS_STATE:-$PWD/.state}
crawler=http://127.0.0.1:${CRAWLER_PORT:-8081}
search=http://127.0.0.1:${SEARCH_PORT:-8080}
kg=http://127.0.0.1:${KG_PORT:-8088}
max_pages=${KGS_RUN_MAX_PAGES:-80}
depth=${KGS_RUN_DEPTH:-3}
query=${KGS_RUN_QUERY:-how do I read a file line by line}

step() { printf '\n== %s\n' "$*"; }

# With KGS_API_KEYS the services answer /api/ only with a key: use the first one.
auth=()
if [[ -n ${KGS_API_KEYS:-} ]]; then
	auth=(-H "Authorization: Bearer ${KGS_API_KEYS%%,*}")
fi

step "stack: MariaDB 11.8, Neo4j 5.26, embedding model (first run downloads them)"
deploy/local/stack.sh up

step "site: the Python 3.11 manual on loopback"
deploy/local/pydocs.sh start
site=$(deploy/local/pydocs.sh url)
start_url=${KGS_RUN_START:-${site%/index.html}/tutorial/index.html}
pyhostport=$(echo "$site" | sed -E 's#^https?://([^/]+)/.*#\1#')

step "services: kg, crawler, search"
CRAWLER_ALLOW_HOSTS=$(allow_host "${CRAWLER_ALLOW_HOSTS:-}" "$pyhostport")
export CRAWLER_ALLOW_HOSTS
scripts/services.sh start

step "crawl: $start_url (max_pages $max_pages, depth $depth)"
# Generated navigation (indexes, search page, page sources) is not content.
exclude='["/_sources/","/_static/","/genindex","/search\\.html","/py-modindex","/contents\\.html"]'
body=$(printf '{"url":"%s","max_pages":%d,"max_depth":%d,"tags":["python-docs"],"exclude":%s}' "$start_url" "$max_pages" "$depth" "$exclude")
id=$(start_crawl "$crawler" "$body" "${auth[@]}")
echo "job $id"
status=""
deadline=$((SECONDS + ${KGS_RUN_TIMEOUT:-1800}))
while :; do
	st=$(curl -fsS "${auth[@]}" "$crawler/api/v1/crawls/$id")
	line=$(printf '%s' "$st" | python3 -c '
import json,sys
j=json.load(sys.stdin); c=j.get("counters",{})
print(j["status"], "fetched=%s stored=%s unchanged=%s failed=%s discovered=%s" % (c.get("fetched",0), c.get("stored",0), c.get("unchanged",0), c.get("failed",0), c.get("discovered",0)))')
	status=${line%% *}
	echo "  $line"
	case "$status" in done | failed | cancelled) break ;; esac
	if ((SECONDS > deadline)); then
		echo "crawl did not finish in time; see $KGS_STATE/logs/crawler.log" >&2
		exit 1
	fi
	sleep 3
done
[[ $status == "done" ]] || { echo "crawl ended $status; see $KGS_STATE/logs/crawler.log" >&2; exit 1; }

step "index: waiting for the search index and the graph to catch up"
# The index has caught up when search's index_lag is 0; the graph when kg holds as
# many documents as the store (the crawler's outbox has delivered them all).
caught_up=""
for _ in $(seq 1 120); do
	lag=$(curl -fsS "${auth[@]}" "$search/api/v1/status" 2>/dev/null | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j.get("index_lag", 1), j.get("documents", 0))' 2>/dev/null || echo "1 0")
	graph_docs=$(curl -fsS "${auth[@]}" "$kg/api/v1/stats" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin).get("documents", 0))' 2>/dev/null || echo 0)
	if [[ ${lag%% *} == 0 ]] && ((graph_docs >= ${lag##* })); then
		caught_up=1
		break
	fi
	sleep 1
done
[[ -n $caught_up ]] || echo "  not caught up after 120 s (index_lag and documents: $lag; graph documents: $graph_docs); the search below may miss some"

step "search: \"$query\" (TOON)"
curl -fsS "${auth[@]}" -G "$search/api/v1/search" --data-urlencode "q=$query" --data-urlencode "k=5" -H 'Accept: text/toon'
echo

go build -o bin/ ./cmd/kgs
# kgs reads its endpoints from the environment; say so when they are not its defaults.
cli_env=""
if [[ $search != http://127.0.0.1:8080 || $crawler != http://127.0.0.1:8081 || $kg != http://127.0.0.1:8088 ]]; then
	cli_env="export KGS_SEARCH_URL=$search KGS_CRAWLER_URL=$crawler KGS_KG_URL=$kg   (kgs's defaults are ports 8080, 8081, 8088)
           "
fi
if [[ -n ${KGS_API_KEYS:-} ]]; then
	cli_env="${cli_env}export KGS_API_KEY=<one of KGS_API_KEYS>   (the services were started with keys)
           "
fi
printf '\n== running\n'
running_line web "$search/" "(search, entities, crawls in the browser)"
running_line search "$search" "(GET /api/v1/search?q=...; JSON with Accept: application/json)"
running_line crawler "$crawler" "(POST /api/v1/crawls)"
running_line kg "$kg" "(GET /api/v1/stats)"
running_line site "$site"
running_line mcp "$search/mcp" "(streamable HTTP; on stdio for an agent: bin/kgs mcp)"
cat <<EOT
  cli      ${cli_env}bin/kgs search "$query" | bin/kgs crawl URL --wait | bin/kgs status | bin/kgs --help
  logs     $KGS_STATE/logs/    stop everything with: make down
EOT
