// Package testenv gives integration tests the addresses of the real servers that
// `make test` starts. When KGS_INTEGRATION=1 (set by `make test` and CI) a missing
// server is a test failure; otherwise the integration test is skipped with a message
// saying how to run it.
package testenv

import (
	"os"
	"testing"
)

// Required reports whether integration tests must run (KGS_INTEGRATION=1).
func Required() bool { return os.Getenv("KGS_INTEGRATION") == "1" }

func lookup(t testing.TB, key, what string) string {
	t.Helper()
	v := os.Getenv(key)
	if v != "" {
		return v
	}
	if Required() {
		t.Fatalf("%s is not set: %s is required because KGS_INTEGRATION=1 (run through `make test`)", key, what)
	}
	t.Skipf("%s not set: skipping %s integration test (run `make test` to start the real servers)", key, what)
	return ""
}

// MariaDBDSN returns the go-sql-driver DSN of the test MariaDB server
// (KGS_TEST_MARIADB_DSN), for example
// "root:pw@tcp(127.0.0.1:13306)/kgsearch_test?parseTime=true".
func MariaDBDSN(t testing.TB) string {
	t.Helper()
	return lookup(t, "KGS_TEST_MARIADB_DSN", "MariaDB")
}

// Neo4j returns the Bolt URI, user and password of the test Neo4j server
// (KGS_TEST_NEO4J_URI, KGS_TEST_NEO4J_USER, KGS_TEST_NEO4J_PASSWORD).
func Neo4j(t testing.TB) (uri, user, password string) {
	t.Helper()
	uri = lookup(t, "KGS_TEST_NEO4J_URI", "Neo4j")
	return uri, os.Getenv("KGS_TEST_NEO4J_USER"), os.Getenv("KGS_TEST_NEO4J_PASSWORD")
}
