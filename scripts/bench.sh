#!/usr/bin/env bash
# `make bench`: the benchmarks behind docs/benchmarks.md, against the real stack, with
# their quick settings (about 15 minutes). Output goes to the terminal and to
# .state/bench/<time>/<name>.txt (benchstat reads these files).
#
#   KGS_BENCH_FULL=1   add the long runs: 100k-chunk vector store and search corpora,
#                      the 50k-entity / 500k-edge graph (an hour or more)
#   KGS_BENCH_ONLY=x   run only the benchmark group named x (toon, ranker, ...)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export KGS_STATE=${KGS_STATE:-$PWD/.state}
source scripts/lib.sh
stack_up_tracked

out=$KGS_STATE/bench/$(date +%Y%m%dT%H%M%S)
mkdir -p "$out"
run() {
	local name=$1
	shift
	[[ -z ${KGS_BENCH_ONLY:-} || ${KGS_BENCH_ONLY} == "$name" ]] || return 0
	echo "== $name: $*"
	"$@" 2>&1 | tee "$out/$name.txt"
}
b() { go test -run '^$' -timeout 120m "$@"; }

run toon b -bench . -benchtime=300ms -count=5 ./pkg/toon
run ranker b -bench . -count=5 ./pkg/ranker
run extract b -bench . -count=3 ./pkg/extract
run chunk b -bench . -count=3 ./services/crawler/internal/chunk ./services/crawler/internal/htmltext ./services/crawler/internal/canon
run embed b -bench ONNX -count=3 ./pkg/embed
run bm25 b -bench 'Search/chunks=10000$' -benchtime=3s ./services/search/internal/bm25
run store b -bench . -benchtime=300x ./pkg/store
run graph b -bench 'Upsert|Match' -benchtime=100x ./pkg/graph
run kg b -bench Ingest -benchtime=200x ./services/kg/internal/app/
run search b -bench . -benchtime=300x ./services/search/internal/pipeline
run crawler b -bench PythonDocs -benchtime=1x ./services/crawler/internal/engine

if [[ ${KGS_BENCH_FULL:-} == 1 ]]; then
	KGS_BENCH_100K=1 KGS_BENCH_REUSE=1 run store-100k b -bench Search -benchtime=300x ./pkg/store
	run bm25-100k b -bench . -benchtime=3s ./services/search/internal/bm25
	KGS_BENCH_GRAPH=1 KGS_BENCH_KEEP=1 run graph-50k b -bench Expand -benchtime=300x ./pkg/graph
	KGS_BENCH_GRAPH=1 run kg-expand b -bench ExpandHTTP -benchtime=300x ./services/kg/internal/app/
	KGS_BENCH_CHUNKS=100000 KGS_BENCH_REUSE=1 run search-100k b -bench Search -benchtime=1000x ./services/search/internal/pipeline
fi
echo "== results in $out"
