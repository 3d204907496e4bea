#!/usr/bin/env bash
# Runs every native fuzz target (func FuzzXxx in *_test.go) for the given time each.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
t=${1:-30s}
grep -rl --include='*_test.go' '^func Fuzz' . | sort | while read -r f; do
	pkg=./$(dirname "${f#./}")
	for fn in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$f" | cut -d' ' -f2); do
		echo "== $pkg $fn ($t)"
		go test -run '^$' -fuzz "^$fn\$" -fuzztime "$t" "$pkg"
	done
done
