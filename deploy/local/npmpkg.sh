#!/usr/bin/env bash
# Fetches one npm package's tarball from the npm registry with curl (no npm needed),
# checks it against a pinned sha256 and unpacks the named members into
# <folder>/<version>/package/... The tarball is kept in <folder> and reused while its
# sha256 matches. Used by toonspec.sh (the TOON conformance fixtures) and toonref.sh
# (the reference TOON implementation).
#
#   deploy/local/npmpkg.sh PACKAGE VERSION SHA256 FOLDER MEMBER...
#   e.g. deploy/local/npmpkg.sh @toon-format/spec 3.3.2 9f60... .state/toon-spec package/tests
#
# KGS_NPM_REGISTRY [https://registry.npmjs.org] points at a mirror.
set -euo pipefail

if [[ $# -lt 5 ]]; then
	echo "usage: $0 PACKAGE VERSION SHA256 FOLDER MEMBER..." >&2
	exit 2
fi
pkg=$1 version=$2 sha256=$3 base=$4
shift 4
die() { echo "npmpkg.sh: $pkg $version: $*" >&2; exit 1; }

flat=${pkg#@}
tarball="$base/${flat//\//-}-$version.tgz"
url="${KGS_NPM_REGISTRY:-https://registry.npmjs.org}/$pkg/-/${pkg##*/}-$version.tgz"

mkdir -p "$base"
if [[ ! -f $tarball ]] || ! echo "$sha256  $tarball" | sha256sum -c --status; then
	curl -fsSL --retry 3 -o "$tarball.part" "$url" || die "download $url failed"
	echo "$sha256  $tarball.part" | sha256sum -c --status || die "$url: sha256 differs from the pinned $sha256"
	mv "$tarball.part" "$tarball"
fi
rm -rf "${base:?}/$version"
mkdir -p "$base/$version"
tar -xzf "$tarball" -C "$base/$version" "$@" || die "$tarball lacks one of: $*"
