#!/usr/bin/env bash
# The official TOON conformance fixtures for pkg/toon's TestConformance, from the npm
# registry: @toon-format/spec 3.3.2 (MIT, the toon-format/spec repository's release of
# spec 3.3) ships tests/fixtures/{encode,decode}/*.json, byte-identical to the
# repository's v3.3.2 tag. deploy/local/npmpkg.sh fetches the tarball with curl (no npm
# needed), checks it against a pinned sha256 and unpacks it under
# ${KGS_STATE:-<repo>/.state}/toon-spec.
#
#   deploy/local/toonspec.sh install   download (cached) and unpack; idempotent
#   deploy/local/toonspec.sh path      print the fixtures folder: KGS_TOON_FIXTURES, else
#                                      the shared checkout beside the repository
#                                      (../shared/fixtures/toon-spec/fixtures), else the
#                                      download (installing it if needed)
#   deploy/local/toonspec.sh env       print `export KGS_TOON_FIXTURES=...`
#
# KGS_TOON_FIXTURES, when set to a folder holding encode/ and decode/, is used as is.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
STATE="$(realpath -m "${KGS_STATE:-$REPO/.state}")"
BASE="$STATE/toon-spec"
VERSION="3.3.2"
SHA256="9f60fdb76bbd6969298bc73c4f0fa247cf2991c6dc21b7f8efd59828425625e9"
FIXTURES="$BASE/$VERSION/package/tests/fixtures"
SHARED="$REPO/../shared/fixtures/toon-spec/fixtures"

die() { echo "toonspec.sh: $*" >&2; exit 1; }

install() {
	if [[ -d $FIXTURES/encode && -d $FIXTURES/decode ]]; then
		return 0
	fi
	"$REPO/deploy/local/npmpkg.sh" @toon-format/spec "$VERSION" "$SHA256" "$BASE" package/tests package/LICENSE
	[[ -d $FIXTURES/encode && -d $FIXTURES/decode ]] || die "no tests/fixtures/{encode,decode} in @toon-format/spec $VERSION"
}

path() {
	if [[ -n ${KGS_TOON_FIXTURES:-} && -d ${KGS_TOON_FIXTURES}/encode ]]; then
		echo "$KGS_TOON_FIXTURES"
		return 0
	fi
	# The project's shared checkout beside the repository holds the same fixtures
	# (byte-identical); read there, nothing is downloaded.
	if [[ -d $SHARED/encode && -d $SHARED/decode ]]; then
		realpath "$SHARED"
		return 0
	fi
	install >&2
	echo "$FIXTURES"
}

case "${1:-}" in
install) install ;;
path) path ;;
env) echo "export KGS_TOON_FIXTURES=$(path)" ;;
*)
	echo "usage: $0 install|path|env" >&2
	exit 2
	;;
esac
