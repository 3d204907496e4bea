#!/usr/bin/env bash
# `make test`: bring up the real MariaDB and Neo4j (installing them on a fresh machine),
# run every unit and integration test with -race against them, and stop again whatever
# this run started, even when a test fails.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
stack=deploy/local/stack.sh
export KGS_STATE=${KGS_STATE:-$PWD/.state}

# Components already running before this run are left running afterwards.
was_running=()
for c in mariadb neo4j; do
	if deploy/local/$c.sh status >/dev/null 2>&1; then was_running+=("$c"); fi
done
cleanup() {
	local rc=$?
	for c in mariadb neo4j; do
		if [[ " ${was_running[*]-} " != *" $c "* ]]; then deploy/local/$c.sh stop >/dev/null 2>&1 || true; fi
	done
	exit $rc
}
trap cleanup EXIT INT TERM

echo "== stack up (first run on a fresh machine downloads MariaDB, Neo4j and the model: several minutes)"
"$stack" up
eval "$("$stack" env)"
export KGS_INTEGRATION=1

echo "== go vet"
go vet ./...
echo "== go test -race"
# -p 2: two packages at a time on this 2-core box; integration packages share the servers
# but each uses its own database / id prefix.
go test -race -p 2 -timeout 40m -count=1 ${GOTESTFLAGS:-} ./...
