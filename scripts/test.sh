#!/usr/bin/env bash
# `make test`: bring up the real MariaDB and Neo4j (installing them on a fresh machine),
# run every unit and integration test with -race against them, and stop again whatever
# this run started, even when a test fails.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export KGS_STATE=${KGS_STATE:-$PWD/.state}
source scripts/lib.sh

echo "== stack up (first run on a fresh machine downloads MariaDB, Neo4j and the model: several minutes)"
stack_up_tracked
export KGS_INTEGRATION=1
echo "== chromium for the browser tests (deploy/local/chromium.sh: the system's, or Debian's unpacked under the state folder)"
KGS_CHROMIUM=${KGS_CHROMIUM:-$(deploy/local/chromium.sh path)}
export KGS_CHROMIUM
echo "== the official TOON conformance fixtures (deploy/local/toonspec.sh: @toon-format/spec 3.3.2 from the npm registry)"
KGS_TOON_FIXTURES=$(deploy/local/toonspec.sh path)
export KGS_TOON_FIXTURES
if command -v node >/dev/null; then
	echo "== the reference TOON implementation (deploy/local/toonref.sh: @toon-format/toon 2.3.1 from the npm registry, run by $(node --version 2>/dev/null || echo node))"
	KGS_TOON_REFERENCE=$(deploy/local/toonref.sh path)
	export KGS_TOON_REFERENCE
else
	echo "== no node on PATH: pkg/toon's comparison with the reference TOON implementation is skipped"
fi

echo "== make lint (gofmt, go vet, golangci-lint; .golangci.yml)"
"${MAKE:-make}" --no-print-directory lint
echo "== go test -race"
# -p 2: two packages at a time on this 2-core box; integration packages share the servers
# but each uses its own database or id prefix.
go test -race -p 2 -timeout 45m -count=1 ${GOTESTFLAGS:-} ./...
