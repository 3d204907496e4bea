// Command ping checks that a Neo4j server answers over Bolt with the given credentials:
// it opens a driver, verifies connectivity and runs RETURN 1. Exit status 0 means ready.
//
//	go run ./pkg/graph/internal/ping -uri bolt://127.0.0.1:17687 -user neo4j -password ...
//
// Flags default to KGS_NEO4J_URI, KGS_NEO4J_USER and KGS_NEO4J_PASSWORD.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

func main() {
	uri := flag.String("uri", envOr("KGS_NEO4J_URI", "bolt://127.0.0.1:17687"), "Bolt URI")
	user := flag.String("user", envOr("KGS_NEO4J_USER", "neo4j"), "user")
	password := flag.String("password", os.Getenv("KGS_NEO4J_PASSWORD"), "password")
	timeout := flag.Duration("timeout", 10*time.Second, "overall timeout")
	flag.Parse()
	if err := ping(*uri, *user, *password, *timeout); err != nil {
		fmt.Fprintf(os.Stderr, "ping %s: %v\n", *uri, err)
		os.Exit(1)
	}
	fmt.Printf("ok %s\n", *uri)
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func ping(uri, user, password string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	drv, err := neo4j.NewDriverWithContext(uri, neo4j.BasicAuth(user, password, ""))
	if err != nil {
		return fmt.Errorf("create driver: %w", err)
	}
	defer drv.Close(ctx)
	if err := drv.VerifyConnectivity(ctx); err != nil {
		return fmt.Errorf("verify connectivity: %w", err)
	}
	res, err := neo4j.ExecuteQuery(ctx, drv, "RETURN 1 AS one", nil, neo4j.EagerResultTransformer)
	if err != nil {
		return fmt.Errorf("run query: %w", err)
	}
	if len(res.Records) != 1 {
		return fmt.Errorf("run query: got %d records, want 1", len(res.Records))
	}
	return nil
}
