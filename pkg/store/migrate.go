package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

type migration struct {
	version int
	name    string
	stmts   []string
}

var migrationName = regexp.MustCompile(`^(\d{4})_([a-z0-9_]+)\.sql$`)

// loadMigrations reads the embedded migrations in version order.
func loadMigrations(fsys fs.FS) ([]migration, error) {
	entries, err := fs.ReadDir(fsys, "migrations")
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	var out []migration
	seen := map[int]string{}
	for _, e := range entries {
		m := migrationName.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("migration file %q: want NNNN_name.sql", e.Name())
		}
		v, _ := strconv.Atoi(m[1])
		if prev, dup := seen[v]; dup {
			return nil, fmt.Errorf("migrations %q and %q share version %d", prev, e.Name(), v)
		}
		seen[v] = e.Name()
		body, err := fs.ReadFile(fsys, path.Join("migrations", e.Name()))
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", e.Name(), err)
		}
		stmts := splitStatements(string(body))
		if len(stmts) == 0 {
			return nil, fmt.Errorf("migration %s has no statements", e.Name())
		}
		out = append(out, migration{version: v, name: m[2], stmts: stmts})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	return out, nil
}

// splitStatements splits a migration on semicolons that end a line, dropping
// "--" comment lines. Migrations must not put ";" at a line end inside a literal.
func splitStatements(src string) []string {
	var stmts []string
	var cur strings.Builder
	for _, line := range strings.Split(src, "\n") {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "--") {
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
		if strings.HasSuffix(trimmed, ";") {
			if stmt := strings.TrimSpace(strings.TrimRightFunc(cur.String(), isSpaceOrSemicolon)); stmt != "" {
				stmts = append(stmts, stmt)
			}
			cur.Reset()
		}
	}
	if rest := strings.TrimSpace(cur.String()); rest != "" {
		stmts = append(stmts, rest)
	}
	return stmts
}

func isSpaceOrSemicolon(r rune) bool { return r == ';' || unicode.IsSpace(r) }

// migrate applies pending migrations and registers the model while holding a
// server-wide named lock, so concurrent Opens (other goroutines or processes)
// apply each migration exactly once.
func (s *Store) migrate(ctx context.Context, want Model) error {
	migs, err := loadMigrations(migrationFS)
	if err != nil {
		return err
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w: %w", ErrNotReady, err)
	}
	defer conn.Close()

	lock := "kgsearch.migrate." + s.dbName
	var got sql.NullInt64
	if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK(?, ?)", lock, int(s.lockWait.Seconds())).Scan(&got); err != nil {
		return fmt.Errorf("migrate: take lock %s: %w", lock, err)
	}
	if !got.Valid || got.Int64 != 1 {
		return fmt.Errorf("migrate: lock %s still held by another process after %s: %w", lock, s.lockWait, ErrNotReady)
	}
	defer func() {
		// A fresh context: the lock must be released even when ctx is cancelled.
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), "SELECT RELEASE_LOCK(?)", lock)
	}()

	if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INT NOT NULL PRIMARY KEY,
		name VARCHAR(255) NOT NULL,
		applied_at DATETIME(6) NOT NULL
	) ENGINE=InnoDB`); err != nil {
		return fmt.Errorf("migrate: create schema_migrations: %w", err)
	}
	applied := map[int]bool{}
	rows, err := conn.QueryContext(ctx, "SELECT version FROM schema_migrations")
	if err != nil {
		return fmt.Errorf("migrate: read schema_migrations: %w", err)
	}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			rows.Close() //nolint:sqlclosecheck // closed before the next statement on this connection; a deferred Close would keep it busy
			return fmt.Errorf("migrate: read schema_migrations: %w", err)
		}
		applied[v] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("migrate: read schema_migrations: %w", err)
	}
	latest := 0
	if n := len(migs); n > 0 {
		latest = migs[n-1].version
	}
	for v := range applied {
		if v > latest {
			return fmt.Errorf("migrate: database is at schema version %d, newer than this binary's %d: %w", v, latest, ErrNotReady)
		}
	}
	for _, m := range migs {
		if applied[m.version] {
			continue
		}
		// MariaDB commits DDL implicitly, so a migration is not atomic; every
		// statement is written to be re-runnable (IF NOT EXISTS, INSERT IGNORE).
		for i, stmt := range m.stmts {
			if _, err := conn.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("migrate: %04d_%s statement %d: %w", m.version, m.name, i+1, err)
			}
		}
		if _, err := conn.ExecContext(ctx,
			"INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, UTC_TIMESTAMP(6))",
			m.version, m.name); err != nil {
			return fmt.Errorf("migrate: record %04d_%s: %w", m.version, m.name, err)
		}
		s.logger.Info("schema migration applied", "version", m.version, "name", m.name, "database", s.dbName)
	}
	return s.registerModel(ctx, conn, want)
}

type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (s *Store) loadModel(ctx context.Context, q queryer) (Model, bool, error) {
	var m Model
	err := q.QueryRowContext(ctx, "SELECT name, dims FROM embedding_model WHERE id = 1").Scan(&m.Name, &m.Dims)
	if errors.Is(err, sql.ErrNoRows) {
		return Model{}, false, nil
	}
	if err != nil {
		return Model{}, false, fmt.Errorf("read embedding model: %w", err)
	}
	return m, true, nil
}

// registerModel records want as the store's model (first time), or checks it
// against the recorded one, and makes sure the chunks table exists with its width.
// It runs under the migration lock.
func (s *Store) registerModel(ctx context.Context, conn *sql.Conn, want Model) error {
	have, ok, err := s.loadModel(ctx, conn)
	if err != nil {
		return err
	}
	switch {
	case !ok && want.Dims == 0:
		return nil // a reader on an empty store; vector operations wait for a model
	case !ok:
		if err := s.createChunks(ctx, conn, want.Dims); err != nil {
			return err
		}
		if _, err := conn.ExecContext(ctx,
			"INSERT INTO embedding_model (id, name, dims, created_at) VALUES (1, ?, ?, UTC_TIMESTAMP(6))",
			want.Name, want.Dims); err != nil {
			return fmt.Errorf("register embedding model %s: %w", want, err)
		}
		s.logger.Info("embedding model registered", "model", want.Name, "dims", want.Dims, "database", s.dbName)
		have = want
	case want.Dims != 0 && have != want:
		return &ModelMismatchError{Registered: have, Requested: want}
	default:
		// Registered earlier; the chunks table exists unless a crash hit between
		// creating it and recording the model, which CREATE IF NOT EXISTS covers.
		if err := s.createChunks(ctx, conn, have.Dims); err != nil {
			return err
		}
	}
	s.model.Store(&have)
	return nil
}

func (s *Store) createChunks(ctx context.Context, conn *sql.Conn, dims int) error {
	// dims and M are validated integers: DDL cannot take placeholders.
	ddl := fmt.Sprintf(`CREATE TABLE IF NOT EXISTS chunks (
  id           BIGINT NOT NULL,
  document_id  CHAR(32) CHARACTER SET ascii NOT NULL,
  ordinal      INT NOT NULL,
  text         MEDIUMTEXT NOT NULL,
  token_count  INT NOT NULL,
  start_offset INT NOT NULL,
  end_offset   INT NOT NULL,
  heading_path JSON NOT NULL,
  embedding    VECTOR(%d) NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY chunks_document_ordinal (document_id, ordinal),
  VECTOR INDEX chunks_embedding (embedding) M=%d DISTANCE=cosine,
  CONSTRAINT chunks_document FOREIGN KEY (document_id) REFERENCES documents (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`, dims, s.hnswM)
	if _, err := conn.ExecContext(ctx, ddl); err != nil {
		return fmt.Errorf("create chunks table VECTOR(%d): %w", dims, err)
	}
	return nil
}
