package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// FrontierState is the state of a URL in a job's frontier.
type FrontierState string

// Frontier states.
const (
	FrontierQueued  FrontierState = "queued"
	FrontierClaimed FrontierState = "claimed"
	FrontierDone    FrontierState = "done"
	FrontierFailed  FrontierState = "failed"
	FrontierSkipped FrontierState = "skipped"
)

// FrontierURL is a URL to enqueue. URL must be canonical: it is deduplicated by URLHash.
type FrontierURL struct {
	URL   string
	Depth int
}

// FrontierItem is a claimed frontier row.
type FrontierItem struct {
	JobID      string
	URLHash    string
	URL        string
	Depth      int
	Attempts   int // claims so far, including this one
	LeaseUntil time.Time
}

// ClaimRequest asks for the next URLs of a job.
type ClaimRequest struct {
	JobID string
	Owner string
	N     int           // at most this many URLs (1..1000)
	Lease time.Duration // claim expiry; RequeueExpired returns expired claims to the queue
	// Budget, when > 0, caps the job's URLs in state claimed or done at Budget, across
	// all workers (claims for one job are serialised), which makes a page limit exact:
	// failed and skipped URLs do not use the budget, and released claims return it.
	Budget int
}

// FrontierCounts counts a job's URLs per state.
type FrontierCounts struct {
	Queued, Claimed, Done, Failed, Skipped int64
}

// Total is the number of distinct URLs discovered.
func (c FrontierCounts) Total() int64 { return c.Queued + c.Claimed + c.Done + c.Failed + c.Skipped }

const frontierBatch = 500

// EnqueueURLs adds URLs to a job's frontier in state queued, ignoring URLs the job
// has seen before (in any state). It returns how many were new. Unknown jobs give
// ErrNotFound.
func (s *Store) EnqueueURLs(ctx context.Context, jobID string, urls []FrontierURL) (int, error) {
	added := 0
	for start := 0; start < len(urls); start += frontierBatch {
		batch := urls[start:min(start+frontierBatch, len(urls))]
		var q strings.Builder
		q.WriteString("INSERT INTO crawl_frontier (job_id, url_hash, url, depth, created_at, updated_at) VALUES ")
		args := make([]any, 0, 4*len(batch))
		for i, u := range batch {
			if u.URL == "" || len(u.URL) > 8192 {
				return added, fmt.Errorf("enqueue urls for job %s: %w", jobID, invalid("url", "%d bytes; want 1..8192", len(u.URL)))
			}
			if u.Depth < 0 {
				return added, fmt.Errorf("enqueue urls for job %s: %w", jobID, invalid("depth", "%d is negative", u.Depth))
			}
			if i > 0 {
				q.WriteByte(',')
			}
			q.WriteString("(?, ?, ?, ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))")
			args = append(args, jobID, URLHash(u.URL), u.URL, u.Depth)
		}
		// Not INSERT IGNORE: that would also swallow the foreign key error of an
		// unknown job. A no-op update counts 0 affected rows, an insert 1.
		q.WriteString(" ON DUPLICATE KEY UPDATE url_hash = url_hash")
		r, err := s.execRetry(ctx, q.String(), args...)
		if err != nil {
			var me *mysql.MySQLError
			if errors.As(err, &me) && me.Number == erNoReferencedRow { // foreign key: no such job
				return added, fmt.Errorf("enqueue urls for job %s: %w", jobID, ErrNotFound)
			}
			return added, fmt.Errorf("enqueue urls for job %s: %w", jobID, err)
		}
		n, _ := r.RowsAffected()
		added += int(n)
	}
	return added, nil
}

// ClaimURLs claims the job's next queued URLs for the owner, lowest depth first,
// then in discovery order. Two workers never receive the same URL.
func (s *Store) ClaimURLs(ctx context.Context, req ClaimRequest) ([]FrontierItem, error) {
	if err := checkClaim(req.Owner, req.N, req.Lease); err != nil {
		return nil, fmt.Errorf("claim urls for job %s: %w", req.JobID, err)
	}
	if req.Budget < 0 {
		return nil, fmt.Errorf("claim urls for job %s: %w", req.JobID, invalid("budget", "%d is negative", req.Budget))
	}
	var items []FrontierItem
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		items = items[:0]
		n := req.N
		if req.Budget > 0 {
			// Serialise this job's claims on its row so the budget count is exact.
			var one int
			err := tx.QueryRowContext(ctx, "SELECT 1 FROM crawl_jobs WHERE id = ? FOR UPDATE", req.JobID).Scan(&one)
			if errors.Is(err, sql.ErrNoRows) {
				return ErrNotFound
			}
			if err != nil {
				return fmt.Errorf("lock job: %w", err)
			}
			var used int
			if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM crawl_frontier WHERE job_id = ? AND state IN ('claimed','done')",
				req.JobID).Scan(&used); err != nil {
				return fmt.Errorf("count budget: %w", err)
			}
			n = min(n, req.Budget-used)
			if n <= 0 {
				return nil
			}
		}
		rows, err := tx.QueryContext(ctx, `SELECT url_hash, url, depth, attempts FROM crawl_frontier
			WHERE job_id = ? AND state = 'queued'
			ORDER BY depth, seq LIMIT ?
			FOR UPDATE SKIP LOCKED`, req.JobID, n)
		if err != nil {
			return fmt.Errorf("select queued: %w", err)
		}
		for rows.Next() {
			it := FrontierItem{JobID: req.JobID}
			if err := rows.Scan(&it.URLHash, &it.URL, &it.Depth, &it.Attempts); err != nil {
				rows.Close() //nolint:sqlclosecheck // closed before the next statement on this connection; a deferred Close would keep it busy
				return fmt.Errorf("scan frontier row: %w", err)
			}
			it.Attempts++
			items = append(items, it)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("select queued: %w", err)
		}
		if len(items) == 0 {
			return nil
		}
		args := []any{req.Owner, req.Lease.Microseconds(), req.JobID}
		for _, it := range items {
			args = append(args, it.URLHash)
		}
		//nolint:gosec // G202: only placeholders are concatenated; the values are arguments
		if _, err := tx.ExecContext(ctx, `UPDATE crawl_frontier SET state = 'claimed', claimed_by = ?,
			lease_until = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, attempts = attempts + 1, updated_at = UTC_TIMESTAMP(6)
			WHERE job_id = ? AND url_hash IN (`+placeholders(len(items))+")", args...); err != nil {
			return fmt.Errorf("mark claimed: %w", err)
		}
		var lease time.Time
		if err := tx.QueryRowContext(ctx, "SELECT lease_until FROM crawl_frontier WHERE job_id = ? AND url_hash = ?",
			req.JobID, items[0].URLHash).Scan(&lease); err != nil {
			return fmt.Errorf("read lease: %w", err)
		}
		for i := range items {
			items[i].LeaseUntil = lease
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("claim urls for job %s: %w", req.JobID, err)
	}
	return items, nil
}

// CompleteURL moves a URL the owner has claimed to done, failed or skipped, or back
// to queued (to retry later); reason is kept for failed and skipped URLs.
// ErrLeaseLost when the owner no longer holds the claim.
func (s *Store) CompleteURL(ctx context.Context, jobID, urlHash, owner string, state FrontierState, reason string) error {
	switch state {
	case FrontierDone, FrontierFailed, FrontierSkipped, FrontierQueued:
	default:
		return fmt.Errorf("complete url %s: %w", urlHash, invalid("state", "%q; want done, failed, skipped or queued", state))
	}
	reason = truncate(reason, 512)
	r, err := s.db.ExecContext(ctx, `UPDATE crawl_frontier SET state = ?, reason = ?,
		claimed_by = NULL, lease_until = NULL, updated_at = UTC_TIMESTAMP(6)
		WHERE job_id = ? AND url_hash = ? AND state = 'claimed' AND claimed_by = ?`,
		string(state), reason, jobID, urlHash, owner)
	if err != nil {
		return fmt.Errorf("complete url %s: %w", urlHash, err)
	}
	if n, _ := r.RowsAffected(); n == 0 {
		return fmt.Errorf("complete url %s of job %s: %w", urlHash, jobID, ErrLeaseLost)
	}
	return nil
}

// FrontierCounts counts a job's URLs per state.
func (s *Store) FrontierCounts(ctx context.Context, jobID string) (FrontierCounts, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT state, COUNT(*) FROM crawl_frontier WHERE job_id = ? GROUP BY state", jobID)
	if err != nil {
		return FrontierCounts{}, fmt.Errorf("frontier counts of job %s: %w", jobID, err)
	}
	defer rows.Close()
	var c FrontierCounts
	for rows.Next() {
		var state string
		var n int64
		if err := rows.Scan(&state, &n); err != nil {
			return FrontierCounts{}, fmt.Errorf("frontier counts of job %s: %w", jobID, err)
		}
		switch FrontierState(state) {
		case FrontierQueued:
			c.Queued = n
		case FrontierClaimed:
			c.Claimed = n
		case FrontierDone:
			c.Done = n
		case FrontierFailed:
			c.Failed = n
		case FrontierSkipped:
			c.Skipped = n
		}
	}
	if err := rows.Err(); err != nil {
		return FrontierCounts{}, fmt.Errorf("frontier counts of job %s: %w", jobID, err)
	}
	return c, nil
}

// FrontierReasons counts a job's URLs by state and reason (the reason of a
// done, failed or skipped URL: stored, http_404, robots …).
func (s *Store) FrontierReasons(ctx context.Context, jobID string) (map[FrontierState]map[string]int64, error) {
	rows, err := s.db.QueryContext(ctx,
		"SELECT state, reason, COUNT(*) FROM crawl_frontier WHERE job_id = ? GROUP BY state, reason", jobID)
	if err != nil {
		return nil, fmt.Errorf("count frontier reasons of job %s: %w", jobID, err)
	}
	defer rows.Close()
	out := map[FrontierState]map[string]int64{}
	for rows.Next() {
		var state, reason string
		var n int64
		if err := rows.Scan(&state, &reason, &n); err != nil {
			return nil, fmt.Errorf("count frontier reasons of job %s: %w", jobID, err)
		}
		st := FrontierState(state)
		if out[st] == nil {
			out[st] = map[string]int64{}
		}
		out[st][reason] += n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count frontier reasons of job %s: %w", jobID, err)
	}
	return out, nil
}

// FrontierMissing returns the canonical URLs of urls that the job's frontier
// does not hold (in any state), in the order given.
func (s *Store) FrontierMissing(ctx context.Context, jobID string, urls []string) ([]string, error) {
	var missing []string
	for start := 0; start < len(urls); start += frontierBatch {
		batch := urls[start:min(start+frontierBatch, len(urls))]
		have, err := s.frontierHashes(ctx, jobID, batch)
		if err != nil {
			return nil, fmt.Errorf("frontier of job %s: %w", jobID, err)
		}
		for _, u := range batch {
			if !have[URLHash(u)] {
				missing = append(missing, u)
			}
		}
	}
	return missing, nil
}

// frontierHashes returns which of the URLs' hashes the job's frontier holds.
func (s *Store) frontierHashes(ctx context.Context, jobID string, urls []string) (map[string]bool, error) {
	args := make([]any, 0, len(urls)+1)
	args = append(args, jobID)
	for _, u := range urls {
		args = append(args, URLHash(u))
	}
	q := "SELECT url_hash FROM crawl_frontier WHERE job_id = ? AND url_hash IN (" + placeholders(len(urls)) + ")" //nolint:gosec // G202: only "?" placeholders are joined in; the values are bound
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	have := map[string]bool{}
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			return nil, err
		}
		have[h] = true
	}
	return have, rows.Err()
}

// FrontierStartURLs returns the job's distinct done URLs at depth 0: its
// start URL, or the URLs that URL redirected to (a redirect target is queued
// at the redirect's depth). URLs the job reached through a link are not among
// them.
func (s *Store) FrontierStartURLs(ctx context.Context, jobID string) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT DISTINCT url FROM crawl_frontier WHERE job_id = ? AND state = 'done' AND depth = 0", jobID)
	if err != nil {
		return nil, fmt.Errorf("frontier start URLs of job %s: %w", jobID, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var o string
		if err := rows.Scan(&o); err != nil {
			return nil, fmt.Errorf("frontier start URLs of job %s: %w", jobID, err)
		}
		out = append(out, o)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("frontier start URLs of job %s: %w", jobID, err)
	}
	return out, nil
}

// RequeueExpired returns claims whose lease expired to the queue (resume after a
// crashed worker); jobID "" covers every job. It returns how many were requeued.
func (s *Store) RequeueExpired(ctx context.Context, jobID string) (int64, error) {
	q := `UPDATE crawl_frontier SET state = 'queued', claimed_by = NULL, lease_until = NULL, updated_at = UTC_TIMESTAMP(6)
		WHERE state = 'claimed' AND lease_until < UTC_TIMESTAMP(6)`
	var args []any
	if jobID != "" {
		q += " AND job_id = ?"
		args = append(args, jobID)
	}
	r, err := s.db.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, fmt.Errorf("requeue expired claims: %w", err)
	}
	n, _ := r.RowsAffected()
	return n, nil
}

// ReleaseClaimsExcept returns the owner's claims on the job to the queue,
// except the URLs in keep (those its workers still hold): a claim whose
// completion was lost (MariaDB went away between the work and the update, or
// the claim committed but its answer never arrived) is queued again by its own
// owner without waiting for the lease to expire.
func (s *Store) ReleaseClaimsExcept(ctx context.Context, jobID, owner string, keep []string) (int64, error) {
	q := `UPDATE crawl_frontier SET state = 'queued', claimed_by = NULL, lease_until = NULL,
		updated_at = UTC_TIMESTAMP(6) WHERE job_id = ? AND state = 'claimed' AND claimed_by = ?`
	args := []any{jobID, owner}
	if len(keep) > 0 {
		q += " AND url_hash NOT IN (" + placeholders(len(keep)) + ")" //nolint:gosec // G202: only placeholders are concatenated; the values are arguments
		for _, h := range keep {
			args = append(args, h)
		}
	}
	r, err := s.db.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, fmt.Errorf("release lost claims of %s on job %s: %w", owner, jobID, err)
	}
	n, _ := r.RowsAffected()
	return n, nil
}

// ReleaseClaims returns every claim the owner holds on the job to the queue (a
// worker shutting down, or restarting under the same owner name).
func (s *Store) ReleaseClaims(ctx context.Context, jobID, owner string) (int64, error) {
	r, err := s.db.ExecContext(ctx, `UPDATE crawl_frontier SET state = 'queued', claimed_by = NULL, lease_until = NULL,
		updated_at = UTC_TIMESTAMP(6) WHERE job_id = ? AND state = 'claimed' AND claimed_by = ?`, jobID, owner)
	if err != nil {
		return 0, fmt.Errorf("release claims of %s on job %s: %w", owner, jobID, err)
	}
	n, _ := r.RowsAffected()
	return n, nil
}

// truncate cuts s to at most n bytes and drops invalid UTF-8 (including a
// sequence split by the cut), so the result fits a utf8mb4 column.
func truncate(s string, n int) string {
	if len(s) > n {
		s = s[:n]
	}
	return strings.ToValidUTF8(s, "")
}
