#!/usr/bin/env bash
# Brings the local stack (MariaDB 11.8, Neo4j 5.26, the embedding model) up or down.
# Everything lives under ${KGS_STATE:-<repo>/.state}; nothing is installed system-wide
# except patchelf (mariadb.sh installs it with apt-get when it is missing). Java 17 or 21,
# Maven (neo4j.sh) and Python 3 with pip (model.sh) must be there: the scripts stop
# with a message naming what is missing.
#
#   stack.sh up      install what is missing (side by side, logs in <state>/logs/install-*.log;
#                    every KGS_STACK_HEARTBEAT seconds [15] it says which installs still run),
#                    start what is stopped, wait until ready
#   stack.sh down    stop exactly the processes this stack started (pid files)
#   stack.sh status  one line per component
#   stack.sh env     shell exports for the services and the tests
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export KGS_STATE=${KGS_STATE:-$(cd "$here/../.." && pwd)/.state}
mkdir -p "$KGS_STATE/logs"

components=(mariadb neo4j)

# Seconds between the "still installing" lines while installs run.
heartbeat=${KGS_STACK_HEARTBEAT:-15}

up() {
	local start=$SECONDS failed=0 c next
	local -A pid=()
	# Installs are independent downloads: run them side by side, their output in
	# logs, and say on the terminal what is going on (the first run's downloads
	# take minutes, which looked like a hang).
	echo "stack: installing what is missing of ${components[*]} and the model (the first run downloads about 300 MB: a few minutes; logs in $KGS_STATE/logs/install-*.log)"
	for c in "${components[@]}" model; do
		"$here/$c.sh" install >"$KGS_STATE/logs/install-$c.log" 2>&1 &
		pid[$c]=$!
	done
	next=$((SECONDS + heartbeat))
	while ((${#pid[@]} > 0)); do
		for c in "${components[@]}" model; do
			[[ -n ${pid[$c]:-} ]] || continue
			kill -0 "${pid[$c]}" 2>/dev/null && continue # bash reaps a finished job: kill -0 fails
			if wait "${pid[$c]}"; then
				# Only an install that did something takes seconds; a present one is quiet.
				if ((SECONDS - start >= 3)); then echo "stack: $c installed ($((SECONDS - start))s)"; fi
			else
				echo "stack: installing $c failed; last lines of $KGS_STATE/logs/install-$c.log:" >&2
				tail -n 25 "$KGS_STATE/logs/install-$c.log" >&2
				failed=1
			fi
			unset "pid[$c]"
		done
		((${#pid[@]} > 0)) || break
		if ((SECONDS >= next)); then
			echo "stack: still installing ${!pid[*]} ($((SECONDS - start))s)"
			next=$((SECONDS + heartbeat))
		fi
		sleep 0.5
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
