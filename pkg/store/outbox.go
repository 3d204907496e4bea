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
	// ParkedAt is when kg refused the row permanently (zero: not parked).
	// ParkedStatus is kg's HTTP status then (0: the crawler could not build the
	// request, e.g. an undecodable payload); ParkedReason kg's problem detail.
	ParkedAt     time.Time
	ParkedStatus int
	ParkedReason string
}

// MaxParkReason is the longest stored park reason, in bytes.
const MaxParkReason = 1000

// OutboxStats counts the outbox rows waiting for delivery (due or in backoff,
// claimed or not) and the parked ones.
type OutboxStats struct {
	Pending int64
	Parked  int64
}

// enqueueOutbox adds a row inside a document transaction. Rows of the same
// document that are not in flight are superseded, parked ones included: the newest
// state is what kg needs, and a refused older state no longer matters.
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
// Parked rows are never claimed and do not hold back a newer row of their document.
func (s *Store) ClaimOutbox(ctx context.Context, owner string, n int, lease time.Duration) ([]OutboxItem, error) {
	if err := checkClaim(owner, n, lease); err != nil {
		return nil, fmt.Errorf("claim outbox: %w", err)
	}
	var items []OutboxItem
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		items = items[:0]
		rows, err := tx.QueryContext(ctx, `SELECT o.id, o.kind, o.document_id, o.payload, o.attempts, o.last_error, o.created_at
			FROM outbox o
			WHERE o.parked_at IS NULL AND o.next_attempt_at <= UTC_TIMESTAMP(6)
			  AND NOT EXISTS (SELECT 1 FROM outbox p WHERE p.document_id = o.document_id AND p.id < o.id AND p.parked_at IS NULL)
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

// ParkOutbox parks a row that kg refused permanently: it is released and never
// claimed again until RequeueOutbox, with status (kg's HTTP status) and reason
// (truncated to MaxParkReason bytes) stored on it. A row that a newer row of the
// same document already supersedes is deleted instead (the newer state is what kg
// needs); parked then reports false. So a parked row is always the newest row of
// its document, and a later enqueue for the document removes it. ErrLeaseLost
// when owner no longer holds the row.
func (s *Store) ParkOutbox(ctx context.Context, id int64, owner string, status int, reason string) (parked bool, err error) {
	reason = truncate(strings.TrimSpace(reason), MaxParkReason)
	if reason == "" {
		reason = "no reason given"
	}
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		var docID string
		err := tx.QueryRowContext(ctx, "SELECT document_id FROM outbox WHERE id = ? AND claimed_by = ? FOR UPDATE", id, owner).Scan(&docID)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrLeaseLost
		}
		if err != nil {
			return err
		}
		var newer int
		if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM outbox WHERE document_id = ? AND id > ?", docID, id).Scan(&newer); err != nil {
			return err
		}
		if newer > 0 {
			parked = false
			_, err := tx.ExecContext(ctx, "DELETE FROM outbox WHERE id = ?", id)
			return err
		}
		parked = true
		_, err = tx.ExecContext(ctx, `UPDATE outbox SET claimed_by = NULL, parked_at = UTC_TIMESTAMP(6),
			parked_status = ?, parked_reason = ?, last_error = ? WHERE id = ?`, status, reason, reason, id)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("park outbox %d: %w", id, err)
	}
	return parked, nil
}

// RequeueOutbox makes every parked row due again with a fresh attempt count
// (after kg was fixed, e.g. a limit raised); it returns how many. A parked row
// that a newer row of its document supersedes is deleted, not requeued, so an
// old state is never delivered after a newer one.
func (s *Store) RequeueOutbox(ctx context.Context) (int64, error) {
	var n int64
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE o FROM outbox o JOIN outbox n ON n.document_id = o.document_id AND n.id > o.id
			WHERE o.parked_at IS NOT NULL`); err != nil {
			return fmt.Errorf("drop superseded parked rows: %w", err)
		}
		r, err := tx.ExecContext(ctx, `UPDATE outbox SET parked_at = NULL, parked_status = NULL, parked_reason = NULL,
			attempts = 0, next_attempt_at = UTC_TIMESTAMP(6) WHERE parked_at IS NOT NULL`)
		if err != nil {
			return err
		}
		n, err = r.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("requeue outbox: %w", err)
	}
	return n, nil
}

// OutboxStats counts pending and parked rows.
func (s *Store) OutboxStats(ctx context.Context) (OutboxStats, error) {
	var st OutboxStats
	var total int64
	if err := s.db.QueryRowContext(ctx, "SELECT COUNT(*), COUNT(parked_at) FROM outbox").Scan(&total, &st.Parked); err != nil {
		return OutboxStats{}, fmt.Errorf("outbox stats: %w", err)
	}
	st.Pending = total - st.Parked
	return st, nil
}

// OutboxItems lists the rows (pending and parked, due or not), oldest first, for
// status pages and tests.
func (s *Store) OutboxItems(ctx context.Context, limit int) ([]OutboxItem, error) {
	return s.listOutbox(ctx, false, limit)
}

// ParkedOutbox lists the parked rows, oldest first, without their payloads.
func (s *Store) ParkedOutbox(ctx context.Context, limit int) ([]OutboxItem, error) {
	return s.listOutbox(ctx, true, limit)
}

func (s *Store) listOutbox(ctx context.Context, parkedOnly bool, limit int) ([]OutboxItem, error) {
	if limit < 1 || limit > 10000 {
		return nil, fmt.Errorf("list outbox: %w", invalid("limit", "%d is outside 1..10000", limit))
	}
	q := `SELECT id, kind, document_id, payload, attempts, next_attempt_at, last_error, created_at,
		parked_at, parked_status, parked_reason FROM outbox ORDER BY id LIMIT ?`
	if parkedOnly {
		q = `SELECT id, kind, document_id, NULL, attempts, next_attempt_at, last_error, created_at,
		parked_at, parked_status, parked_reason FROM outbox WHERE parked_at IS NOT NULL ORDER BY id LIMIT ?`
	}
	rows, err := s.db.QueryContext(ctx, q, limit)
	if err != nil {
		return nil, fmt.Errorf("list outbox: %w", err)
	}
	defer rows.Close()
	var out []OutboxItem
	for rows.Next() {
		var it OutboxItem
		var payload []byte
		var lastErr, reason sql.NullString
		var parkedAt sql.NullTime
		var status sql.NullInt64
		if err := rows.Scan(&it.ID, &it.Kind, &it.DocumentID, &payload, &it.Attempts, &it.NextAttemptAt, &lastErr, &it.CreatedAt,
			&parkedAt, &status, &reason); err != nil {
			return nil, fmt.Errorf("list outbox: %w", err)
		}
		if payload != nil {
			it.Payload = json.RawMessage(payload)
		}
		it.LastError = lastErr.String
		it.ParkedAt = parkedAt.Time
		it.ParkedStatus = int(status.Int64)
		it.ParkedReason = reason.String
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
