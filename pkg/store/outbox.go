package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// OutboxItem is a pending delivery to the kg service.
type OutboxItem struct {
	ID            int64
	Kind          string // OutboxUpsert or OutboxDelete
	DocumentID    string
	Payload       json.RawMessage // nil when none was given
	Attempts      int             // claims so far, including the current one
	NextAttemptAt time.Time
	LastError     string
	CreatedAt     time.Time
}

// enqueueOutbox adds a row inside a document transaction. Rows of the same
// document that are not in flight are superseded: the newest state is what kg needs.
func enqueueOutbox(ctx context.Context, tx *sql.Tx, kind, docID string, payload json.RawMessage) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM outbox WHERE document_id = ?
		AND (claimed_by IS NULL OR next_attempt_at <= UTC_TIMESTAMP(6))`, docID); err != nil {
		return fmt.Errorf("supersede outbox rows: %w", err)
	}
	var p any
	if payload != nil {
		p = string(payload)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO outbox (kind, document_id, payload, next_attempt_at, created_at)
		VALUES (?, ?, ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))`, kind, docID, p); err != nil {
		return fmt.Errorf("enqueue outbox %s: %w", kind, err)
	}
	return nil
}

// ClaimOutbox claims up to n due rows for owner for the lease duration, oldest
// first, at most one per document (the oldest, so a document's events are delivered
// in order). A claim whose lease expires without Ack or Fail becomes due again.
func (s *Store) ClaimOutbox(ctx context.Context, owner string, n int, lease time.Duration) ([]OutboxItem, error) {
	if err := checkClaim(owner, n, lease); err != nil {
		return nil, fmt.Errorf("claim outbox: %w", err)
	}
	var items []OutboxItem
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		items = items[:0]
		rows, err := tx.QueryContext(ctx, `SELECT o.id, o.kind, o.document_id, o.payload, o.attempts, o.last_error, o.created_at
			FROM outbox o
			WHERE o.next_attempt_at <= UTC_TIMESTAMP(6)
			  AND NOT EXISTS (SELECT 1 FROM outbox p WHERE p.document_id = o.document_id AND p.id < o.id)
			ORDER BY o.id
			LIMIT ?
			FOR UPDATE SKIP LOCKED`, n)
		if err != nil {
			return fmt.Errorf("select due rows: %w", err)
		}
		for rows.Next() {
			var it OutboxItem
			var payload []byte
			var lastErr sql.NullString
			if err := rows.Scan(&it.ID, &it.Kind, &it.DocumentID, &payload, &it.Attempts, &lastErr, &it.CreatedAt); err != nil {
				rows.Close() //nolint:sqlclosecheck // closed before the next statement on this connection; a deferred Close would keep it busy
				return fmt.Errorf("scan outbox row: %w", err)
			}
			if payload != nil {
				it.Payload = json.RawMessage(payload)
			}
			it.LastError = lastErr.String
			items = append(items, it)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("select due rows: %w", err)
		}
		if len(items) == 0 {
			return nil
		}
		args := []any{owner, lease.Microseconds()}
		for _, it := range items {
			args = append(args, it.ID)
		}
		//nolint:gosec // G202: only placeholders are concatenated; the values are arguments
		if _, err := tx.ExecContext(ctx, `UPDATE outbox SET claimed_by = ?, attempts = attempts + 1,
			next_attempt_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND
			WHERE id IN (`+placeholders(len(items))+")", args...); err != nil {
			return fmt.Errorf("mark claimed: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("claim outbox: %w", err)
	}
	for i := range items {
		items[i].Attempts++
	}
	return items, nil
}

// AckOutbox deletes a delivered row. ErrLeaseLost when owner no longer holds it.
func (s *Store) AckOutbox(ctx context.Context, id int64, owner string) error {
	r, err := s.db.ExecContext(ctx, "DELETE FROM outbox WHERE id = ? AND claimed_by = ?", id, owner)
	if err != nil {
		return fmt.Errorf("ack outbox %d: %w", id, err)
	}
	if n, _ := r.RowsAffected(); n == 0 {
		return fmt.Errorf("ack outbox %d: %w", id, ErrLeaseLost)
	}
	return nil
}

// FailOutbox releases a row after a failed delivery, to be retried after the
// store's backoff for its attempt count; it returns when. ErrLeaseLost when owner
// no longer holds it.
func (s *Store) FailOutbox(ctx context.Context, id int64, owner string, cause error) (time.Time, error) {
	msg := "unknown error"
	if cause != nil {
		msg = cause.Error()
	}
	msg = truncate(msg, 2000)
	var next time.Time
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var attempts int
		err := tx.QueryRowContext(ctx, "SELECT attempts FROM outbox WHERE id = ? AND claimed_by = ? FOR UPDATE", id, owner).Scan(&attempts)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrLeaseLost
		}
		if err != nil {
			return err
		}
		delay := s.backoff(max(attempts, 1))
		if _, err := tx.ExecContext(ctx, `UPDATE outbox SET claimed_by = NULL, last_error = ?,
			next_attempt_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND WHERE id = ?`,
			msg, delay.Microseconds(), id); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, "SELECT next_attempt_at FROM outbox WHERE id = ?", id).Scan(&next)
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("fail outbox %d: %w", id, err)
	}
	return next, nil
}

// OutboxItems lists pending rows (due or not), oldest first, for status pages and tests.
func (s *Store) OutboxItems(ctx context.Context, limit int) ([]OutboxItem, error) {
	if limit < 1 || limit > 10000 {
		return nil, fmt.Errorf("list outbox: %w", invalid("limit", "%d is outside 1..10000", limit))
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, kind, document_id, payload, attempts, next_attempt_at, last_error, created_at
		FROM outbox ORDER BY id LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("list outbox: %w", err)
	}
	defer rows.Close()
	var out []OutboxItem
	for rows.Next() {
		var it OutboxItem
		var payload []byte
		var lastErr sql.NullString
		if err := rows.Scan(&it.ID, &it.Kind, &it.DocumentID, &payload, &it.Attempts, &it.NextAttemptAt, &lastErr, &it.CreatedAt); err != nil {
			return nil, fmt.Errorf("list outbox: %w", err)
		}
		if payload != nil {
			it.Payload = json.RawMessage(payload)
		}
		it.LastError = lastErr.String
		out = append(out, it)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list outbox: %w", err)
	}
	return out, nil
}

func checkClaim(owner string, n int, lease time.Duration) error {
	if strings.TrimSpace(owner) == "" || len(owner) > 128 {
		return invalid("owner", "%q must be 1..128 bytes", owner)
	}
	if n < 1 || n > 1000 {
		return invalid("n", "%d is outside 1..1000", n)
	}
	if lease < time.Millisecond || lease > 24*time.Hour {
		return invalid("lease", "%s is outside 1ms..24h", lease)
	}
	return nil
}
