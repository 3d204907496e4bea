package graph

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// TestClassify: errors that say Neo4j cannot do the work now (connectivity, its
// transient errors — out of transaction memory included — after the driver's
// retries) are ErrUnavailable, which the kg service answers 503 with Retry-After;
// a statement the server refuses stays as it is (a 500). A 507-chunk page that
// ran Neo4j out of transaction memory was answered 500 before.
func TestClassify(t *testing.T) {
	memory := &neo4j.Neo4jError{Code: "Neo.TransientError.General.MemoryPoolOutOfMemoryError", Msg: "dbms.memory.transaction.total.max threshold reached"}
	for _, tc := range []struct {
		name        string
		err         error
		unavailable bool
	}{
		{"out of transaction memory", memory, true},
		{"out of memory after the driver's retries", &neo4j.TransactionExecutionLimit{Cause: "timeout", Errors: []error{memory}}, true},
		{"database unavailable", &neo4j.Neo4jError{Code: "Neo.TransientError.General.DatabaseUnavailable"}, true},
		{"deadlock after retries", fmt.Errorf("write: %w", &neo4j.Neo4jError{Code: "Neo.TransientError.Transaction.DeadlockDetected"}), true},
		{"connectivity", &neo4j.ConnectivityError{Inner: errors.New("refused")}, true},
		{"syntax error", &neo4j.Neo4jError{Code: "Neo.ClientError.Statement.SyntaxError"}, false},
		{"constraint", &neo4j.Neo4jError{Code: "Neo.ClientError.Schema.ConstraintValidationFailed"}, false},
		{"cancelled", context.Canceled, false},
	} {
		if got := errors.Is(classify(tc.err), ErrUnavailable); got != tc.unavailable {
			t.Errorf("%s: unavailable %v, want %v (%v)", tc.name, got, tc.unavailable, classify(tc.err))
		}
	}
}
