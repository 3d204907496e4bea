package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Defaults used when the Config leaves a field zero.
const (
	// DefaultEfSearch is the mhnsw_ef_search used by SearchVectors. With M=16 it
	// gives recall@10 of about 0.99 on 20k clustered 384-d vectors, where 64 gave
	// 0.97-0.99 depending on the graph build (see docs/benchmarks.md).
	DefaultEfSearch = 100
	// DefaultHNSWM is the M (graph degree) of the vector index created with the chunks table.
	DefaultHNSWM = 16
	// MaxDims is the widest vector MariaDB's VECTOR type accepts.
	MaxDims = 16383
	// DefaultLockTimeout bounds how long Open waits for another process's migration.
	DefaultLockTimeout = 60 * time.Second
)

// Config configures Open.
type Config struct {
	// DSN is a go-sql-driver/mysql DSN, e.g.
	// "kgsearch:kgsearch@tcp(127.0.0.1:13306)/kgsearch?parseTime=true".
	// parseTime, loc=UTC and time_zone='+00:00' are forced.
	DSN string
	// Model is the embedding model the caller writes and queries with. The first
	// model registered fixes the chunks table's VECTOR(d); a different one is refused
	// with *ModelMismatchError. Zero means "use whatever model is registered"
	// (readers); vector operations then fail with ErrNotReady until one is registered.
	Model Model
	// EfSearch is mhnsw_ef_search for SearchVectors (0: DefaultEfSearch).
	EfSearch int
	// HNSWM is M of the vector index, used only when the chunks table is created
	// (0: DefaultHNSWM; MariaDB accepts 3..200).
	HNSWM int
	// MaxOpenConns bounds the connection pool (0: 16).
	MaxOpenConns int
	// LockTimeout bounds the wait for another process's migration (0: DefaultLockTimeout).
	LockTimeout time.Duration
	// OutboxBackoff gives the delay before retry number attempts (>= 1) of a failed
	// outbox row (nil: 2s doubling per attempt, capped at 15 minutes).
	OutboxBackoff func(attempts int) time.Duration
}

// Store is the MariaDB store. It is safe for concurrent use.
type Store struct {
	db       *sql.DB
	dbName   string
	logger   *slog.Logger
	model    atomic.Pointer[Model]
	efSearch atomic.Int64
	hnswM    int
	lockWait time.Duration
	backoff  func(int) time.Duration

	// testHook, when set by tests in this package, is called at named points inside
	// transactions; a returned error aborts the transaction there.
	testHook func(point string) error
}

func (c Config) validate() (*mysql.Config, error) {
	if c.DSN == "" {
		return nil, invalid("DSN", "empty; want a go-sql-driver DSN such as user:pw@tcp(127.0.0.1:13306)/kgsearch")
	}
	mc, err := mysql.ParseDSN(c.DSN)
	if err != nil {
		return nil, invalid("DSN", "%v", err)
	}
	if mc.DBName == "" {
		return nil, invalid("DSN", "no database name after the '/'")
	}
	if c.Model.Dims < 0 || c.Model.Dims > MaxDims {
		return nil, invalid("Model.Dims", "%d is outside 1..%d", c.Model.Dims, MaxDims)
	}
	if (c.Model.Name == "") != (c.Model.Dims == 0) {
		return nil, invalid("Model", "name %q with %d dims: set both or neither", c.Model.Name, c.Model.Dims)
	}
	if len(c.Model.Name) > 255 {
		return nil, invalid("Model.Name", "longer than 255 bytes")
	}
	if c.EfSearch < 0 || c.EfSearch > 10000 {
		return nil, invalid("EfSearch", "%d is outside 1..10000", c.EfSearch)
	}
	if c.HNSWM != 0 && (c.HNSWM < 3 || c.HNSWM > 200) {
		return nil, invalid("HNSWM", "%d is outside 3..200", c.HNSWM)
	}
	if c.MaxOpenConns < 0 {
		return nil, invalid("MaxOpenConns", "negative")
	}
	mc.ParseTime = true
	mc.Loc = time.UTC
	if mc.Params == nil {
		mc.Params = map[string]string{}
	}
	mc.Params["time_zone"] = "'+00:00'"
	return mc, nil
}

// Open connects, applies the schema migrations and registers cfg.Model.
// An unreachable server gives an error matching ErrNotReady; a model other than the
// registered one gives *ModelMismatchError.
func Open(ctx context.Context, cfg Config, logger *slog.Logger) (*Store, error) {
	mc, err := cfg.validate()
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	connector, err := mysql.NewConnector(mc)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	db := sql.OpenDB(connector)
	maxOpen := cfg.MaxOpenConns
	if maxOpen == 0 {
		maxOpen = 16
	}
	db.SetMaxOpenConns(maxOpen)
	db.SetMaxIdleConns(maxOpen)
	db.SetConnMaxIdleTime(5 * time.Minute)

	s := &Store{
		db:       db,
		dbName:   mc.DBName,
		logger:   logger,
		hnswM:    cfg.HNSWM,
		lockWait: cfg.LockTimeout,
		backoff:  cfg.OutboxBackoff,
	}
	if s.hnswM == 0 {
		s.hnswM = DefaultHNSWM
	}
	if s.lockWait == 0 {
		s.lockWait = DefaultLockTimeout
	}
	if s.backoff == nil {
		s.backoff = defaultBackoff
	}
	ef := cfg.EfSearch
	if ef == 0 {
		ef = DefaultEfSearch
	}
	s.efSearch.Store(int64(ef))

	if err := s.Ping(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open store %s: %w", mc.DBName, err)
	}
	if err := s.migrate(ctx, cfg.Model); err != nil {
		db.Close()
		return nil, fmt.Errorf("open store %s: %w", mc.DBName, err)
	}
	return s, nil
}

func defaultBackoff(attempts int) time.Duration {
	d := 2 * time.Second
	for i := 1; i < attempts && d < 15*time.Minute; i++ {
		d *= 2
	}
	return min(d, 15*time.Minute)
}

// Close closes the connection pool.
func (s *Store) Close() error { return s.db.Close() }

// DB exposes the pool for health checks and tools; prefer the typed methods.
func (s *Store) DB() *sql.DB { return s.db }

// Ping checks that the server answers; failure matches ErrNotReady.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.db.PingContext(ctx); err != nil {
		return fmt.Errorf("ping mariadb: %w: %w", ErrNotReady, err)
	}
	return nil
}

// Ready reports whether the store can serve searches and writes: the server
// answers (else ErrNotReady) and an embedding model is registered (else ErrNotReady).
// Migrations are applied by Open, so an open Store has the current schema.
func (s *Store) Ready(ctx context.Context) error {
	if err := s.Ping(ctx); err != nil {
		return err
	}
	if _, err := s.Model(ctx); err != nil {
		return fmt.Errorf("store not ready: %w", err)
	}
	return nil
}

// Version returns the server's version string, e.g. "11.8.6-MariaDB-0+deb13u1".
func (s *Store) Version(ctx context.Context) (string, error) {
	var v string
	if err := s.db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&v); err != nil {
		return "", fmt.Errorf("server version: %w", err)
	}
	return v, nil
}

// Model returns the registered embedding model, or ErrNotReady when none is.
func (s *Store) Model(ctx context.Context) (Model, error) {
	if m := s.model.Load(); m != nil {
		return *m, nil
	}
	m, ok, err := s.loadModel(ctx, s.db)
	if err != nil {
		return Model{}, err
	}
	if !ok {
		return Model{}, fmt.Errorf("no embedding model registered: %w", ErrNotReady)
	}
	s.model.Store(&m)
	return m, nil
}

// SetEfSearch changes mhnsw_ef_search for later SearchVectors calls. Larger values
// raise recall and latency.
func (s *Store) SetEfSearch(ef int) error {
	if ef < 1 || ef > 10000 {
		return invalid("ef_search", "%d is outside 1..10000", ef)
	}
	s.efSearch.Store(int64(ef))
	return nil
}

// EfSearch returns the current mhnsw_ef_search.
func (s *Store) EfSearch() int { return int(s.efSearch.Load()) }

// Stats counts the main tables.
type Stats struct {
	Documents int64
	Chunks    int64
	LastSeq   int64
	Outbox    int64
}

// Stats returns row counts (exact, so it scans; meant for status pages, not hot paths).
func (s *Store) Stats(ctx context.Context) (Stats, error) {
	var st Stats
	q := "SELECT (SELECT COUNT(*) FROM documents), (SELECT seq FROM change_counter WHERE id = 1), (SELECT COUNT(*) FROM outbox)"
	if err := s.db.QueryRowContext(ctx, q).Scan(&st.Documents, &st.LastSeq, &st.Outbox); err != nil {
		return st, fmt.Errorf("store stats: %w", err)
	}
	if _, err := s.Model(ctx); err == nil {
		if err := s.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM chunks").Scan(&st.Chunks); err != nil {
			return st, fmt.Errorf("store stats: %w", err)
		}
	}
	return st, nil
}

// hook runs the test hook, if any.
func (s *Store) hook(point string) error {
	if s.testHook == nil {
		return nil
	}
	return s.testHook(point)
}

// inTx runs fn in a transaction, retrying on deadlocks and lock wait timeouts.
func (s *Store) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	const attempts = 5
	var err error
	for i := 0; i < attempts; i++ {
		err = s.tryTx(ctx, fn)
		if err == nil || !retryable(err) || ctx.Err() != nil {
			return err
		}
		time.Sleep(time.Duration(i+1) * 20 * time.Millisecond)
	}
	return err
}

func (s *Store) tryTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// execRetry runs one statement, again after a deadlock or lock wait timeout:
// concurrent inserts of overlapping keys (workers queueing the same links) can
// deadlock on a unique index.
func (s *Store) execRetry(ctx context.Context, query string, args ...any) (sql.Result, error) {
	const attempts = 5
	for i := 1; ; i++ {
		r, err := s.db.ExecContext(ctx, query, args...)
		if err == nil || !retryable(err) || i == attempts || ctx.Err() != nil {
			return r, err
		}
		time.Sleep(time.Duration(i) * 20 * time.Millisecond)
	}
}

// retryable reports InnoDB deadlocks and lock wait timeouts.
func retryable(err error) bool { return Conflict(err) }

// OpenRetry is Open retried every two seconds while the server is not reachable
// (ErrNotReady: a stack that is still starting, or a database down for a while),
// for at most wait, or until ctx ends when wait is 0: a service started during a
// database outage then comes up when the database does, instead of exiting and
// outliving the outage. onWait, when not nil, is told each failure (services
// report it on /readyz); the log has the first failure and then one line every
// 30 s. Other errors, such as a model mismatch or a refused password, return at
// once.
func OpenRetry(ctx context.Context, cfg Config, logger *slog.Logger, wait time.Duration, onWait func(error)) (*Store, error) {
	start := time.Now()
	var logged time.Time
	for {
		st, err := Open(ctx, cfg, logger)
		if err == nil || !errors.Is(err, ErrNotReady) || (wait > 0 && time.Since(start) > wait) {
			return st, err
		}
		if onWait != nil {
			onWait(err)
		}
		if logger != nil && time.Since(logged) >= 30*time.Second {
			logged = time.Now()
			logger.Warn("MariaDB not reachable yet, retrying", "waited", time.Since(start).Round(time.Second).String(), "err", err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
}
