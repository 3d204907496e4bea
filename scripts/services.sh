#!/usr/bin/env bash
# Starts and stops the three kgsearch services as background processes on loopback,
# with pid files and logs under ${KGS_STATE}/run and ${KGS_STATE}/logs.
#
#   services.sh start [svc...]   build and start (default: kg crawler search), wait for /readyz
#   services.sh stop  [svc...]   stop what start started (pid files)
#   services.sh status           one line per service
#   services.sh reindex          rebuild the search service's Bleve index from MariaDB
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export KGS_STATE=${KGS_STATE:-$PWD/.state}
run=$KGS_STATE/run logs=$KGS_STATE/logs
mkdir -p "$run" "$logs" bin

declare -A port=([kg]=${KG_PORT:-8088} [crawler]=${CRAWLER_PORT:-8081} [search]=${SEARCH_PORT:-8080})
all=(kg crawler search)

alive() { [[ -f $run/$1.pid ]] && kill -0 "$(cat "$run/$1.pid")" 2>/dev/null; }

start_one() {
	local svc=$1 p=${port[$1]} crawler_key=${KGS_API_KEYS:-}
	crawler_key=${crawler_key%%,*} # search calls the crawler, and both call kg, with the stack's first key
	if alive "$svc"; then
		echo "$svc: already running (pid $(cat "$run/$svc.pid")) http://127.0.0.1:$p"
		return 0
	fi
	KG_ADDR=127.0.0.1:${port[kg]} CRAWLER_ADDR=127.0.0.1:${port[crawler]} SEARCH_ADDR=127.0.0.1:${port[search]} \
		KGS_KG_URL=${KGS_KG_URL:-http://127.0.0.1:${port[kg]}} SEARCH_INDEX_DIR=${SEARCH_INDEX_DIR:-$KGS_STATE/search/bleve} \
		KGS_CRAWLER_URL=${KGS_CRAWLER_URL:-http://127.0.0.1:${port[crawler]}} \
		KGS_CRAWLER_API_KEY=${KGS_CRAWLER_API_KEY:-$crawler_key} KGS_KG_API_KEY=${KGS_KG_API_KEY:-$crawler_key} \
		nohup "bin/$svc" >>"$logs/$svc.log" 2>&1 &
	echo $! >"$run/$svc.pid"
	local deadline=$((SECONDS + ${KGS_START_TIMEOUT:-120}))
	until curl -fsS "http://127.0.0.1:$p/readyz" >/dev/null 2>&1; do
		if ! alive "$svc"; then
			echo "$svc: exited during start; last lines of $logs/$svc.log:" >&2
			tail -n 20 "$logs/$svc.log" >&2
			rm -f "$run/$svc.pid"
			return 1
		fi
		if ((SECONDS > deadline)); then
			echo "$svc: not ready after ${KGS_START_TIMEOUT:-120}s; see $logs/$svc.log and http://127.0.0.1:$p/readyz" >&2
			return 1
		fi
		sleep 0.5
	done
	echo "$svc: ready (pid $(cat "$run/$svc.pid")) http://127.0.0.1:$p"
}

stop_one() {
	local svc=$1
	if ! alive "$svc"; then
		rm -f "$run/$svc.pid"
		return 0
	fi
	local pid
	pid=$(cat "$run/$svc.pid")
	kill -TERM "$pid"
	for _ in $(seq 1 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.2
	done
	if kill -0 "$pid" 2>/dev/null; then
		echo "$svc: did not stop within 20s after SIGTERM; sending SIGKILL" >&2
		kill -KILL "$pid" 2>/dev/null || true
	fi
	rm -f "$run/$svc.pid"
	echo "$svc: stopped"
}

cmd=${1:-}
shift || true
svcs=("$@")
[[ ${#svcs[@]} -gt 0 ]] || svcs=("${all[@]}")
case "$cmd" in
start)
	eval "$(deploy/local/stack.sh env)"
	go build -o bin/ $(printf './services/%s ' "${svcs[@]}")
	for s in "${svcs[@]}"; do start_one "$s"; done
	;;
stop)
	for ((i = ${#svcs[@]} - 1; i >= 0; i--)); do stop_one "${svcs[$i]}"; done
	;;
status)
	for s in "${all[@]}"; do
		if alive "$s"; then echo "$s: running (pid $(cat "$run/$s.pid")) http://127.0.0.1:${port[$s]}"; else echo "$s: stopped"; fi
	done
	;;
reindex)
	eval "$(deploy/local/stack.sh env)"
	stop_one search
	go build -o bin/ ./services/search
	SEARCH_INDEX_DIR=${SEARCH_INDEX_DIR:-$KGS_STATE/search/bleve} bin/search -reindex
	start_one search
	;;
*)
	echo "usage: $0 start|stop|status|reindex [service...]" >&2
	exit 2
	;;
esac
