#!/usr/bin/env bash
# The reference implementation of TOON spec 3.x, for pkg/toon's
# TestReferenceImplementation: @toon-format/toon 2.3.1 (MIT, the toon-format/toon
# repository's TypeScript encoder and decoder; its 2.x line implements spec 3, the
# 4.x line spec 4, which adds comment lines). The package is one self-contained ES
# module; deploy/local/npmpkg.sh fetches the tarball with curl from the npm registry
# (no npm needed), checks it against a pinned sha256 and unpacks it under
# ${KGS_STATE:-<repo>/.state}/toon-ref.
# Running it needs Node.js (18 or later) on PATH.
#
#   deploy/local/toonref.sh install   download (cached) and unpack; idempotent
#   deploy/local/toonref.sh path      print the module's path (installing it if needed)
#   deploy/local/toonref.sh env       print `export KGS_TOON_REFERENCE=...`
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
STATE="$(realpath -m "${KGS_STATE:-$REPO/.state}")"
BASE="$STATE/toon-ref"
VERSION="2.3.1"
SHA256="6925613ea3298f5625ae84a2056b79021aacf737ed1782107f77d8c20aebac2a"
MODULE="$BASE/$VERSION/package/dist/index.mjs"

die() { echo "toonref.sh: $*" >&2; exit 1; }

install() {
	[[ -f $MODULE ]] && return 0
	"$REPO/deploy/local/npmpkg.sh" @toon-format/toon "$VERSION" "$SHA256" "$BASE" package/dist/index.mjs package/LICENSE package/package.json
	[[ -f $MODULE ]] || die "no dist/index.mjs in @toon-format/toon $VERSION"
}

case "${1:-}" in
install) install ;;
path)
	install >&2
	echo "$MODULE"
	;;
env)
	install >&2
	echo "export KGS_TOON_REFERENCE=$MODULE"
	;;
*)
	echo "usage: $0 install|path|env" >&2
	exit 2
	;;
esac
