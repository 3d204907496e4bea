#!/usr/bin/env bash
# Brings the local stack (MariaDB 11.8, Neo4j 5.26, the embedding model) up or down.
# Everything lives under ${KGS_STATE:-<repo>/.state}; nothing is installed system-wide
# except patchelf (mariadb.sh installs it with apt-get when it is missing). Java 17 or 21,
# Maven (neo4j.sh) and Python 3 with pip (model.sh) must be there: the scripts stop
# with a message naming what is missing.
#
#   stack.sh up      install what is missing, start what is stopped, wait until ready
#   stack.sh down    stop exactly the processes this stack started (pid files)
#   stack.sh status  one line per component
#   stack.sh env     shell exports for the services and the tests
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export KGS_STATE=${KGS_STATE:-$(cd "$here/../.." && pwd)/.state}
mkdir -p "$KGS_STATE/logs"

components=(mariadb neo4j)

up() {
	local start=$SECONDS pids=() names=() failed=0
	# Installs are independent downloads: run them side by side.
	for c in "${components[@]}" model; do
		"$here/$c.sh" install >"$KGS_STATE/logs/install-$c.log" 2>&1 &
		pids+=($!) names+=("$c")
	done
	for i in "${!pids[@]}"; do
		if ! wait "${pids[$i]}"; then
			echo "stack: installing ${names[$i]} failed; last lines of $KGS_STATE/logs/install-${names[$i]}.log:" >&2
			tail -n 25 "$KGS_STATE/logs/install-${names[$i]}.log" >&2
			failed=1
		fi
	done
	[ "$failed" = 0 ] || exit 1
	for c in "${components[@]}"; do
		"$here/$c.sh" start
	done
	echo "stack: up in $((SECONDS - start))s (state in $KGS_STATE)"
}

down() {
	for c in "${components[@]}"; do
		"$here/$c.sh" stop || true
	done
}

status() {
	for c in "${components[@]}"; do
		"$here/$c.sh" status || true
	done
}

env_() {
	for c in "${components[@]}" model; do
		"$here/$c.sh" env
	done
}

case "${1:-}" in
up) up ;;
down) down ;;
status) status ;;
env) env_ ;;
*)
	echo "usage: $0 up|down|status|env" >&2
	exit 2
	;;
esac
