#!/usr/bin/env bash
# `make eval` as a new user meets it: a store that holds ONLY the dataset's site.
# The shared evaluation store holds every site at once, and several things depend on
# what the store holds (BM25 idf over the whole index, kg's entity idf and its seed
# guard of one feedback seed per 50 stored documents, the "generic entity" rule), so
# this script measures the single-site case on a second, private stack:
#  1. refuse unless its ports are free (it never talks to another stack)
#  2. wipe the store of its own state folder (MariaDB data, Neo4j data, kg's learner
#     file, search's Bleve index, the previous evaluation); installs are kept
#  3. scripts/eval.sh with that state folder and those ports: stack up, services up,
#     the dataset's crawl into the empty store, settle, evaluate (peers included)
#  4. print the crawl's time and the store's size, copy the reports, then stop the
#     servers it started (MariaDB, Neo4j, the services, a docs site if it started one)
#
#   scripts/eval-single-site.sh eval/nodedocs/queries.json
#   scripts/eval-single-site.sh eval/pydocs/queries.json eval/pydocs-holdout/queries.json
# Several datasets are crawled into the same store: give only datasets of one site.
#
# Environment (defaults in brackets): KGS_SINGLE_STATE [<repo>/.state/single-site]
# the private state folder (created with a marker file; a folder without it is never
# wiped); KGS_SINGLE_REPORTS [$KGS_SINGLE_STATE/reports] where reports are kept, one
# folder per dataset; KGS_SINGLE_REUSE [<repo>/.state] a state folder whose model,
# MariaDB packages and Neo4j jars are symlinked instead of downloaded again (only
# read; empty: install anew); KGS_SINGLE_KEEP [0] (1: leave the private stack running).
# Ports: KGS_MARIADB_PORT [23306], KGS_NEO4J_BOLT_PORT [27687], KGS_NEO4J_HTTP_PORT
# [27474], KG_PORT [18088], CRAWLER_PORT [18081], SEARCH_PORT [18080],
# KGS_EVAL_SEARCH_PORT [18090]. Every other variable of scripts/eval.sh applies.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

die() { echo "eval-single-site.sh: $*" >&2; exit 1; }
(($# > 0)) || die "usage: $0 eval/<set>/queries.json [another dataset of the same site...]"
for d in "$@"; do [[ -f $d ]] || die "no dataset at $d"; done

export KGS_STATE=${KGS_SINGLE_STATE:-$PWD/.state/single-site}
export KGS_MARIADB_PORT=${KGS_MARIADB_PORT:-23306} KGS_NEO4J_BOLT_PORT=${KGS_NEO4J_BOLT_PORT:-27687}
export KGS_NEO4J_HTTP_PORT=${KGS_NEO4J_HTTP_PORT:-27474} KG_PORT=${KG_PORT:-18088}
export CRAWLER_PORT=${CRAWLER_PORT:-18081} SEARCH_PORT=${SEARCH_PORT:-18080}
export KGS_EVAL_SEARCH_PORT=${KGS_EVAL_SEARCH_PORT:-18090} KGS_EVAL_VENV=${KGS_EVAL_VENV:-$KGS_STATE/venv}
export KGS_EVAL_DATASETS="$*"
unset KGS_EVAL_SEARCH_URL # the evaluation asks the private stack's own search process
reports=${KGS_SINGLE_REPORTS:-$KGS_STATE/reports}/$(basename "$(dirname "$1")")
marker=$KGS_STATE/.kgs-single-site

# 1. Nothing may answer on the private ports: a store that is not empty, or another
# stack, would be measured instead.
for p in "$KGS_MARIADB_PORT" "$KGS_NEO4J_BOLT_PORT" "$KGS_NEO4J_HTTP_PORT" "$KG_PORT" "$CRAWLER_PORT" \
	"$SEARCH_PORT" "$KGS_EVAL_SEARCH_PORT"; do
	if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
		die "127.0.0.1:$p is in use; stop what runs there or choose other ports (see the header)"
	fi
done

# 2. A fresh store: only in a folder this script made.
if [[ -d $KGS_STATE && ! -f $marker ]]; then
	die "$KGS_STATE exists but was not made by this script; set KGS_SINGLE_STATE to a new folder"
fi
mkdir -p "$KGS_STATE"
touch "$marker"
rm -rf "$KGS_STATE"/mariadb/{data,run} "$KGS_STATE"/neo4j/{data,run,logs,initial-password} \
	"$KGS_STATE"/{kg,search,eval,run,logs}
reuse=${KGS_SINGLE_REUSE-$PWD/.state}
if [[ -n $reuse ]]; then
	for d in model mariadb/debs neo4j/lib; do
		if [[ ! -e $KGS_STATE/$d && -e $reuse/$d ]]; then
			mkdir -p "$(dirname "$KGS_STATE/$d")"
			ln -s "$(realpath "$reuse/$d")" "$KGS_STATE/$d"
		fi
	done
fi

stop_all() {
	[[ ${KGS_SINGLE_KEEP:-0} == 1 ]] && return 0
	scripts/services.sh stop || true
	deploy/local/stack.sh down || true
	local d s
	for d in "$@"; do # a docs site this state folder started (one already served is left alone)
		s=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])).get("site",{}); print(s.get("script",""))' "$d")
		[[ -z $s ]] || "$s" stop || true
	done
}
# shellcheck disable=SC2064 # the datasets are fixed now
trap "stop_all $(printf '%q ' "$@")" EXIT

# 3. The evaluation itself.
start=$SECONDS
scripts/eval.sh
echo "eval-single-site: make eval took $((SECONDS - start))s"

# 4. What the store held and how long its crawl took.
mkdir -p "$reports"
{
	echo "single-site store: $KGS_STATE, datasets: $*"
	curl -fsS "http://127.0.0.1:$CRAWLER_PORT/api/v1/crawls?limit=100" | python3 -c '
import json, sys
for j in json.load(sys.stdin).get("crawls", []):
    c = j.get("counters", {})
    print("crawl %s %s: %s, %.0f s, stored %s pages, %s chunks, failed %s %s" % (j["id"][:8], j["url"], j["status"],
          j.get("running_ms", 0) / 1000, c.get("stored", 0), c.get("chunks", 0), c.get("failed", 0),
          json.dumps(c.get("failed_by_reason") or {})))'
	curl -fsS "http://127.0.0.1:$KG_PORT/api/v1/stats" | python3 -c '
import json, sys
s = json.load(sys.stdin)
print("kg: %s documents, %s chunks, %s entities, %s relations" % (s.get("documents"), s.get("chunks"), s.get("entities"), s.get("relations")))'
} | tee "$reports/store.txt"
cp "$KGS_STATE/eval/report.md" "$KGS_STATE/eval/report.json" "$reports/"
echo "reports: $reports/report.md, $reports/report.json, $reports/store.txt"
