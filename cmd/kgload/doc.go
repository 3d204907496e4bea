// Command kgload drives the running search service with concurrent clients and
// reports what a user would see: client-measured latency percentiles, sustained
// QPS (2xx answers per second), degraded answers by signal, requests shed by
// the search service's admission control (503 with Retry-After) and errors by
// status class, each counted apart, the server's own
// total_time_ms and per-phase medians, the search process's resident memory, and
// the CPU milliseconds each answered query costs each process of the stack
// (search, kg, MariaDB, Neo4j and kgload itself, from utime+stime in
// /proc/<pid>/stat before and after each level; -cpu names them) next to the
// machine's busy time, so work by anything else on the machine shows as "other".
//
// With -fault it also checks the degradation contract: kg is stopped after a
// third of the run and started again after two thirds; every request must be
// answered without a 5xx, answers for queries with entities during the outage
// must list graph (or expansion) in degraded, and once kg is back (plus a grace
// period) answers must no longer be degraded (-recover-tolerance allows a share
// of them to be, since retriever timeouts under saturation look the same; the
// pre-outage rate is printed for comparison). A broken contract exits 1.
//
// On a stack with KGS_API_KEYS it sends the key in KGS_API_KEY (or -api-key)
// as a bearer token, as kgs does, and never prints it; a refused or missing
// key stops it before the run (one probe query) with what to do.
//
//	go run ./cmd/kgload -clients 1,8 -duration 30s -pid-file .state/run/search.pid
//	go run ./cmd/kgload -clients 8 -duration 60s -fault -json fault.json
package main
