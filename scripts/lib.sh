# Sourced by scripts/test.sh and scripts/bench.sh: bring the stack up and, on exit, stop
# again exactly the components this run started (those already running stay up).
stack_up_tracked() {
	_kgs_was_running=()
	local c
	for c in mariadb neo4j; do
		if deploy/local/$c.sh status >/dev/null 2>&1; then _kgs_was_running+=("$c"); fi
	done
	trap _kgs_stack_cleanup EXIT INT TERM
	deploy/local/stack.sh up
	eval "$(deploy/local/stack.sh env)"
}

_kgs_stack_cleanup() {
	local rc=$? c
	for c in mariadb neo4j; do
		if [[ " ${_kgs_was_running[*]-} " != *" $c "* ]]; then deploy/local/$c.sh stop >/dev/null 2>&1 || true; fi
	done
	exit $rc
}
