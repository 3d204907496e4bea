package graph

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	neo4jconfig "github.com/neo4j/neo4j-go-driver/v5/neo4j/config"
)

// Config says how to reach Neo4j.
type Config struct {
	URI      string // bolt://host:port or neo4j://host:port (+s / +ssc for TLS)
	User     string // empty: no authentication
	Password string
	Database string // empty: the server's default database
	// MaxConnections caps the driver's connection pool (0: the driver's default, 100).
	MaxConnections int
	// MaxRetryTime bounds the driver's retries of transient failures such as deadlocks
	// or a lost connection (0: 10s).
	MaxRetryTime time.Duration
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
}

// Validate reports the first problem with c, naming the field.
func (c Config) Validate() error {
	if c.URI == "" {
		return fmt.Errorf("%w: neo4j URI is empty", ErrInvalid)
	}
	u, err := url.Parse(c.URI)
	if err != nil {
		return fmt.Errorf("%w: neo4j URI %q: %v", ErrInvalid, c.URI, err) //nolint:errorlint // the sentinel classifies the input as invalid; the parser's error is only its description
	}
	switch u.Scheme {
	case "bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc":
	default:
		return fmt.Errorf("%w: neo4j URI %q has scheme %q, want bolt:// or neo4j://", ErrInvalid, c.URI, u.Scheme)
	}
	if u.Host == "" {
		return fmt.Errorf("%w: neo4j URI %q has no host", ErrInvalid, c.URI)
	}
	if c.User == "" && c.Password != "" {
		return fmt.Errorf("%w: neo4j password is set but the user is empty", ErrInvalid)
	}
	if c.MaxConnections < 0 {
		return fmt.Errorf("%w: neo4j max connections is %d, want >= 0", ErrInvalid, c.MaxConnections)
	}
	return nil
}

// Store is the graph store. It is safe for concurrent use.
type Store struct {
	driver   neo4j.DriverWithContext
	database string
	logger   *slog.Logger
}

// Open creates a driver for cfg and checks that the server answers. The returned Store
// must be closed.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	s, err := New(cfg)
	if err != nil {
		return nil, err
	}
	if err := s.Ping(ctx); err != nil {
		_ = s.driver.Close(ctx)
		return nil, err
	}
	return s, nil
}

// New creates a driver for cfg without contacting the server: connections are made on
// first use. A service that must start while Neo4j is down uses New, reports Ping in its
// readiness check and runs EnsureSchema once Neo4j answers. The returned Store must be
// closed.
func New(cfg Config) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	auth := neo4j.NoAuth()
	if cfg.User != "" {
		auth = neo4j.BasicAuth(cfg.User, cfg.Password, "")
	}
	drv, err := neo4j.NewDriverWithContext(cfg.URI, auth, func(c *neo4jconfig.Config) {
		if cfg.MaxConnections > 0 {
			c.MaxConnectionPoolSize = cfg.MaxConnections
		}
		c.SocketConnectTimeout = 5 * time.Second
		c.ConnectionAcquisitionTimeout = 30 * time.Second
		c.MaxTransactionRetryTime = 10 * time.Second
		if cfg.MaxRetryTime > 0 {
			c.MaxTransactionRetryTime = cfg.MaxRetryTime
		}
	})
	if err != nil {
		return nil, fmt.Errorf("open neo4j driver for %s: %w", cfg.URI, err)
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Store{driver: drv, database: cfg.Database, logger: logger}, nil
}

// Ping checks that the server is reachable and accepts the credentials.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.driver.VerifyConnectivity(ctx); err != nil {
		return fmt.Errorf("ping neo4j: %w", classify(err))
	}
	return nil
}

// Close releases the driver's connections.
func (s *Store) Close(ctx context.Context) error {
	if err := s.driver.Close(ctx); err != nil {
		return fmt.Errorf("close neo4j driver: %w", err)
	}
	return nil
}

// schema lists the constraints and indexes the queries rely on.
var schema = []string{
	"CREATE CONSTRAINT document_id IF NOT EXISTS FOR (d:Document) REQUIRE d.id IS UNIQUE",
	"CREATE CONSTRAINT chunk_id IF NOT EXISTS FOR (c:Chunk) REQUIRE c.id IS UNIQUE",
	"CREATE CONSTRAINT entity_id IF NOT EXISTS FOR (e:Entity) REQUIRE e.id IS UNIQUE",
	"CREATE CONSTRAINT graph_lock_id IF NOT EXISTS FOR (l:GraphLock) REQUIRE l.id IS UNIQUE",
	// The change feed is read by sequence number (see feed.go).
	"CREATE CONSTRAINT graph_change_seq IF NOT EXISTS FOR (c:GraphChange) REQUIRE c.seq IS UNIQUE",
	"CREATE INDEX entity_name_lower IF NOT EXISTS FOR (e:Entity) ON (e.name_lower)",
	"CREATE INDEX entity_type IF NOT EXISTS FOR (e:Entity) ON (e.type)",
	"CREATE INDEX related_doc IF NOT EXISTS FOR ()-[r:RELATED]-() ON (r.doc)",
	// Retired: no query seeks RELATED by type (Expand filters after traversal), and
	// every index costs time at commit.
	"DROP INDEX related_type IF EXISTS",
}

// EnsureSchema creates the constraints and indexes that do not exist yet (and drops
// retired ones), creates the write lock node and waits until
// they are online. It is idempotent and safe to run from several processes.
func (s *Store) EnsureSchema(ctx context.Context) error {
	sess := s.session(ctx, neo4j.AccessModeWrite)
	defer sess.Close(ctx)
	for _, stmt := range schema {
		res, err := sess.Run(ctx, stmt, nil)
		if err == nil {
			_, err = res.Consume(ctx)
		}
		if err != nil {
			// Two processes creating the same index concurrently: the loser sees an
			// "equivalent schema rule already exists" error, which is success for us.
			var ne *neo4j.Neo4jError
			if errors.As(err, &ne) && (ne.Code == "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists" ||
				ne.Code == "Neo.ClientError.Schema.IndexAlreadyExists" ||
				ne.Code == "Neo.ClientError.Schema.ConstraintAlreadyExists") {
				continue
			}
			return fmt.Errorf("ensure schema %q: %w", stmt, classify(err))
		}
	}
	res, err := sess.Run(ctx, "MERGE (l:GraphLock {id: 'write'}) ON CREATE SET l.seq = 0", nil)
	if err == nil {
		_, err = res.Consume(ctx)
	}
	if err != nil {
		return fmt.Errorf("create graph write lock node: %w", classify(err))
	}
	res, err = sess.Run(ctx, "CALL db.awaitIndexes(300)", nil)
	if err == nil {
		_, err = res.Consume(ctx)
	}
	if err != nil {
		return fmt.Errorf("await indexes: %w", classify(err))
	}
	return nil
}

func (s *Store) session(ctx context.Context, mode neo4j.AccessMode) neo4j.SessionWithContext {
	return s.driver.NewSession(ctx, neo4j.SessionConfig{AccessMode: mode, DatabaseName: s.database})
}

// classify marks connectivity and authentication failures, and Neo4j's transient
// errors, with ErrUnavailable so that callers can answer 503.
func classify(err error) error {
	if err == nil {
		return nil
	}
	// The driver's retry loop reports a TransactionExecutionLimit that does not unwrap:
	// classify by its last attempt.
	var limit *neo4j.TransactionExecutionLimit
	if errors.As(err, &limit) && len(limit.Errors) > 0 {
		if last := limit.Errors[len(limit.Errors)-1]; errors.Is(classify(last), ErrUnavailable) {
			return fmt.Errorf("%w: %w", ErrUnavailable, err)
		}
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var (
		conn *neo4j.ConnectivityError
		ne   *neo4j.Neo4jError
		op   *net.OpError
	)
	switch {
	case errors.As(err, &conn), errors.As(err, &op):
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	case errors.As(err, &ne) && (ne.IsAuthenticationFailed() ||
		// Transient errors (database unavailable, out of transaction memory, locks)
		// say the server cannot do it now: retry later (503), not a bug (500).
		strings.HasPrefix(ne.Code, "Neo.TransientError.") ||
		ne.Code == "Neo.ClientError.Security.AuthenticationRateLimit"):
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return err
}
