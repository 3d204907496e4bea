#!/usr/bin/env bash
# make apicheck: schemathesis (property-based API testing) against each service's
# /openapi.json, bounded in examples and time. The three services run from fresh
# builds on their own ports (APICHECK_PORT, default 18611..18614) with API keys, a
# scratch MariaDB database (kgsearch_test_apicheck, dropped at the end) and a small site on
# loopback that seeds three documents. Operations that would fetch from the network or
# write to the shared Neo4j (crawler: POST /crawls, POST /pages; kg: POST /ingest,
# DELETE /documents) are left out here; the contract tests (go test) cover them.
# Every check runs except three about how exactly the documents describe the accepted
# input, which a JSON Schema cannot state here: positive_data_acceptance (the services
# normalise text, so a query of punctuation or control characters is "empty", and
# 377.0 is not an integer to Go's decoder), negative_data_rejection (Go's decoders take
# null as "absent" for optional fields, and kg's empty ?type= as "any type") and
# allow_header_conformance (kg's GET /entities/{id} also answers /entities/match, so
# Allow lists GET there). Server errors and answers that do not match the document
# (status, content type, headers, body) fail the run.
# Reports: $KGS_STATE/apicheck/<service>.txt and junit XML.
set -euo pipefail
cd "$(dirname "$0")/.."
export KGS_STATE=${KGS_STATE:-$PWD/.state}
deploy/local/stack.sh up >/dev/null
eval "$(deploy/local/stack.sh env)"

examples=${APICHECK_EXAMPLES:-25}
budget=${APICHECK_TIMEOUT:-300} # seconds per service, a hard stop
base=${APICHECK_PORT:-18611}
search_port=$base crawler_port=$((base + 1)) kg_port=$((base + 2)) site_port=$((base + 3))
dir=$KGS_STATE/apicheck
venv=$dir/venv
db=kgsearch_test_apicheck # the kgsearch user's test-database grant covers it
mkdir -p "$dir/bin" "$dir/site" "$dir/reports"

if [[ ! -x $venv/bin/schemathesis ]]; then
	echo "installing schemathesis into $venv"
	python3 -m venv "$venv"
	"$venv/bin/pip" install -q 'schemathesis==4.32.5'
fi

key=apicheck-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
dsn="kgsearch:kgsearch@tcp(127.0.0.1:${KGS_MARIADB_PORT:-13306})/$db?parseTime=true"
deploy/local/mariadb.sh client -e "DROP DATABASE IF EXISTS $db; CREATE DATABASE $db"

go build -o "$dir/bin/" ./services/search ./services/crawler ./services/kg

pids=()
cleanup() {
	local rc=$?
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	deploy/local/mariadb.sh client -e "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1 || true
	exit $rc
}
trap cleanup EXIT INT TERM

for n in 1 2 3; do
	cat >"$dir/site/page$n.html" <<EOT
<!doctype html><html lang="en"><head><title>Apicheck page $n: PostgreSQL and Redis</title></head>
<body><main><h1>Page $n</h1><p>PostgreSQL streaming replication ships WAL records to standby servers.
Redis persistence writes RDB snapshots. Django supports PostgreSQL; page $n of the apicheck site.</p>
<p>The asyncio event loop runs coroutines and tasks concurrently in Python.</p></main></body></html>
EOT
done
python3 -m http.server "$site_port" --bind 127.0.0.1 --directory "$dir/site" >"$dir/site.log" 2>&1 &
pids+=($!)

KG_ADDR=127.0.0.1:$kg_port KGS_API_KEYS=$key KG_LEARNER_FILE=off KG_GAZETTEER_REFRESH=0 \
	"$dir/bin/kg" >"$dir/kg.log" 2>&1 &
pids+=($!)
CRAWLER_ADDR=127.0.0.1:$crawler_port KGS_MARIADB_DSN=$dsn KGS_KG_URL=http://127.0.0.1:$kg_port KGS_API_KEYS=$key \
	CRAWLER_OUTBOX_WORKERS=0 CRAWLER_ALLOW_HOSTS=127.0.0.1:$site_port "$dir/bin/crawler" >"$dir/crawler.log" 2>&1 &
pids+=($!)
SEARCH_ADDR=127.0.0.1:$search_port KGS_MARIADB_DSN=$dsn KGS_KG_URL=http://127.0.0.1:$kg_port KGS_API_KEYS=$key \
	KGS_CRAWLER_URL=http://127.0.0.1:$crawler_port SEARCH_INDEX_DIR=$dir/bleve SEARCH_GAZETTEER_REFRESH=0 \
	"$dir/bin/search" >"$dir/search.log" 2>&1 &
pids+=($!)

for port in $kg_port $crawler_port $search_port; do
	for _ in $(seq 1 120); do
		curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
		sleep 1
	done
	curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null || { echo "service on :$port not ready; see $dir/*.log" >&2; exit 1; }
done
for n in 1 2 3; do
	curl -fsS -X POST "http://127.0.0.1:$crawler_port/api/v1/pages" -H "Authorization: Bearer $key" \
		-H 'Content-Type: application/json' -d "{\"url\":\"http://127.0.0.1:$site_port/page$n.html\",\"tags\":[\"apicheck\"]}" >/dev/null
done
sleep 2 # the search index follows the change feed every second

rc=0
run() { # service port [extra schemathesis args]
	local svc=$1 port=$2
	shift 2
	echo "== $svc: schemathesis, $examples examples per operation, at most ${budget}s"
	# schemathesis keeps a cache in its working directory: run it in $dir.
	(cd "$dir" && timeout "$budget" "$venv/bin/schemathesis" run "http://127.0.0.1:$port/openapi.json" \
		--checks all --exclude-checks positive_data_acceptance,negative_data_rejection,allow_header_conformance --max-examples "$examples" --request-timeout 20 --workers 1 \
		-H "Authorization: Bearer $key" --report junit --report-dir "$dir/reports/$svc" --no-color "$@" \
		>"$dir/$svc.txt" 2>&1) || rc=1
	sed -n '/SUMMARY/,$p' "$dir/$svc.txt" | head -40
}
run search "$search_port"
run crawler "$crawler_port" --exclude-operation-id createCrawl --exclude-operation-id crawlPage
run kg "$kg_port" --exclude-operation-id ingest --exclude-operation-id deleteDocument
echo
if ((rc == 0)); then echo "apicheck: no failures (reports in $dir)"; else echo "apicheck: failures; see $dir/<service>.txt" >&2; fi
exit $rc
