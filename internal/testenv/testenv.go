// Package testenv gives integration tests the addresses of the real servers that
// `make test` starts. When KGS_INTEGRATION=1 (set by `make test` and CI) a missing
// server is a test failure; otherwise the integration test is skipped with a message
// saying how to run it.
package testenv

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
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

// FreshMariaDB creates an empty database kgsearch_test_<random> on the test server,
// drops it when the test ends, and returns a DSN pointing at it, so integration tests
// can run in parallel packages without seeing each other's rows.
func FreshMariaDB(t testing.TB) string {
	t.Helper()
	base := MariaDBDSN(t)
	mc, err := mysql.ParseDSN(base)
	if err != nil {
		t.Fatalf("parse KGS_TEST_MARIADB_DSN: %v", err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "kgsearch_test_" + hex.EncodeToString(b[:])
	admin, err := sql.Open("mysql", base)
	if err != nil {
		t.Fatalf("open %s: %v", base, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE `"+name+"` CHARACTER SET utf8mb4"); err != nil {
		admin.Close()
		t.Fatalf("create test database %s: %v (the kgsearch user needs ALL on `kgsearch_test%%`.*; deploy/local/mariadb.sh start grants it)", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS `"+name+"`"); err != nil {
			t.Errorf("drop test database %s: %v", name, err)
		}
		admin.Close()
	})
	mc.DBName = name
	return mc.FormatDSN()
}
