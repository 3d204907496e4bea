package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/google/uuid"
)

// JobStatus is a crawl job's state.
type JobStatus string

// Job states. done, failed and cancelled are terminal.
const (
	JobQueued    JobStatus = "queued"
	JobRunning   JobStatus = "running"
	JobDone      JobStatus = "done"
	JobFailed    JobStatus = "failed"
	JobCancelled JobStatus = "cancelled"
)

// Terminal reports whether the status is final.
func (s JobStatus) Terminal() bool { return s == JobDone || s == JobFailed || s == JobCancelled }

func (s JobStatus) valid() bool {
	switch s {
	case JobQueued, JobRunning, JobDone, JobFailed, JobCancelled:
		return true
	}
	return false
}

// Job is a crawl job. Spec and Counters are owned by the crawler (JSON objects).
type Job struct {
	ID         string
	Spec       json.RawMessage
	Status     JobStatus
	Counters   json.RawMessage
	LastErrors []string
	Owner      string    // worker holding the job while running
	LeaseUntil time.Time // the owner's claim expires then
	CreatedAt  time.Time
	StartedAt  time.Time
	FinishedAt time.Time
	UpdatedAt  time.Time
}

// JobProgress is what a running job's owner saves. Nil fields keep stored values.
type JobProgress struct {
	Counters   json.RawMessage // replaces the counters object
	LastErrors []string        // replaces the list (the newest maxJobErrors are kept)
}

const (
	maxJobErrors   = 50
	maxJobErrorLen = 1000
)

const jobColumns = "id, spec, status, counters, last_errors, owner, lease_until, created_at, started_at, finished_at, updated_at"

func scanJob(r scanner) (Job, error) {
	var j Job
	var spec, counters, errs []byte
	var status string
	var owner sql.NullString
	var lease, started, finished sql.NullTime
	if err := r.Scan(&j.ID, &spec, &status, &counters, &errs, &owner, &lease, &j.CreatedAt, &started, &finished, &j.UpdatedAt); err != nil {
		return j, err
	}
	j.Spec, j.Counters, j.Status = json.RawMessage(spec), json.RawMessage(counters), JobStatus(status)
	j.Owner, j.LeaseUntil, j.StartedAt, j.FinishedAt = owner.String, lease.Time, started.Time, finished.Time
	if err := json.Unmarshal(errs, &j.LastErrors); err != nil {
		return j, fmt.Errorf("job %s last errors: %w", j.ID, err)
	}
	return j, nil
}

// CreateJob stores a queued job with a new UUID and the spec (a JSON object).
// key, when not empty, identifies what the job would do (the crawler hashes
// its normalised spec): while one job with the key is queued or running,
// creating another gives a *DuplicateJobError naming it. The database's
// unique index on active jobs' keys (crawl_jobs.active_key, cleared by
// FinishJob and CancelJob) decides, so of two identical jobs created
// at once, by one process or several, exactly one is stored. Jobs that are
// done, failed or cancelled never hold their key.
func (s *Store) CreateJob(ctx context.Context, spec json.RawMessage, key string) (Job, error) {
	if len(spec) == 0 || !json.Valid(spec) {
		return Job{}, fmt.Errorf("create job: %w", invalid("spec", "not valid JSON"))
	}
	if len(key) > 64 || !isASCII(key) {
		return Job{}, fmt.Errorf("create job: %w", invalid("key", "want at most 64 ASCII characters"))
	}
	var specKey any
	if key != "" {
		specKey = key
	}
	// The job holding the key may end between the refused insert and the
	// look-up: then the insert is tried again.
	for attempt := 0; ; attempt++ {
		id := uuid.NewString()
		_, err := s.db.ExecContext(ctx, `INSERT INTO crawl_jobs (id, spec, active_key, status, counters, last_errors, created_at, updated_at)
			VALUES (?, ?, ?, 'queued', '{}', '[]', UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))`, id, string(spec), specKey)
		if err == nil {
			return s.GetJob(ctx, id)
		}
		var me *mysql.MySQLError
		if key == "" || !errors.As(err, &me) || me.Number != erDupEntry || attempt == 2 {
			return Job{}, fmt.Errorf("create job: %w", err)
		}
		var dup DuplicateJobError
		var status string
		err = s.db.QueryRowContext(ctx, "SELECT id, status FROM crawl_jobs WHERE active_key = ?", key).Scan(&dup.ID, &status)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return Job{}, fmt.Errorf("create job: find the active job with key %s: %w", key, err)
		}
		dup.Status = JobStatus(status)
		return Job{}, fmt.Errorf("create job: %w", &dup)
	}
}

// DuplicateJobError is the answer of CreateJob when a queued or running job
// has the key asked for.
type DuplicateJobError struct {
	ID     string    // the active job
	Status JobStatus // queued or running
}

func (e *DuplicateJobError) Error() string {
	return fmt.Sprintf("an identical job is %s: %s", e.Status, e.ID)
}

// Is makes errors.Is(err, ErrDuplicateJob) true.
func (e *DuplicateJobError) Is(target error) bool { return target == ErrDuplicateJob }

// GetJob returns a job or ErrNotFound.
func (s *Store) GetJob(ctx context.Context, id string) (Job, error) {
	if !isASCII(id) {
		return Job{}, fmt.Errorf("get job %s: %w", id, ErrNotFound)
	}
	j, err := scanJob(s.db.QueryRowContext(ctx, "SELECT "+jobColumns+" FROM crawl_jobs WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return Job{}, fmt.Errorf("get job %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Job{}, fmt.Errorf("get job %s: %w", id, err)
	}
	return j, nil
}

// ListJobs returns up to limit jobs, newest first, optionally of one status.
func (s *Store) ListJobs(ctx context.Context, status JobStatus, limit int) ([]Job, error) {
	if limit < 1 || limit > 1000 {
		return nil, fmt.Errorf("list jobs: %w", invalid("limit", "%d is outside 1..1000", limit))
	}
	q, args := "SELECT "+jobColumns+" FROM crawl_jobs", []any{}
	if status != "" {
		if !status.valid() {
			return nil, fmt.Errorf("list jobs: %w", invalid("status", "%q is not a job status", status))
		}
		q += " WHERE status = ?"
		args = append(args, string(status))
	}
	q += " ORDER BY created_at DESC, id LIMIT ?"
	args = append(args, limit)
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	defer rows.Close()
	var out []Job
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, fmt.Errorf("list jobs: %w", err)
		}
		out = append(out, j)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	return out, nil
}

// ClaimJob gives owner the oldest runnable job: a queued one, or a running one whose
// owner's lease expired (its crawler died; the new owner resumes it from the
// frontier). ok is false when there is none.
func (s *Store) ClaimJob(ctx context.Context, owner string, lease time.Duration) (job Job, ok bool, err error) {
	if err := checkClaim(owner, 1, lease); err != nil {
		return Job{}, false, fmt.Errorf("claim job: %w", err)
	}
	var id string
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		id = ""
		err := tx.QueryRowContext(ctx, `SELECT id FROM crawl_jobs
			WHERE status = 'queued' OR (status = 'running' AND lease_until < UTC_TIMESTAMP(6))
			ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED`).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE crawl_jobs SET status = 'running', owner = ?,
			lease_until = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND,
			started_at = COALESCE(started_at, UTC_TIMESTAMP(6)), updated_at = UTC_TIMESTAMP(6)
			WHERE id = ?`, owner, lease.Microseconds(), id)
		return err
	})
	if err != nil {
		return Job{}, false, fmt.Errorf("claim job: %w", err)
	}
	if id == "" {
		return Job{}, false, nil
	}
	job, err = s.GetJob(ctx, id)
	return job, err == nil, err
}

// HeartbeatJob extends owner's lease on a running job and saves its progress. It
// returns the job's status: JobCancelled tells the owner to stop (then FinishJob).
// ErrLeaseLost when owner no longer holds the job.
func (s *Store) HeartbeatJob(ctx context.Context, id, owner string, lease time.Duration, p JobProgress) (JobStatus, error) {
	if err := checkClaim(owner, 1, lease); err != nil {
		return "", fmt.Errorf("heartbeat job %s: %w", id, err)
	}
	counters, errs, err := progressArgs(p)
	if err != nil {
		return "", fmt.Errorf("heartbeat job %s: %w", id, err)
	}
	var status string
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, "SELECT status FROM crawl_jobs WHERE id = ? AND owner = ? AND status IN ('running','cancelled') FOR UPDATE",
			id, owner).Scan(&status)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrLeaseLost
		}
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE crawl_jobs SET lease_until = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND,
			counters = COALESCE(?, counters), last_errors = COALESCE(?, last_errors), updated_at = UTC_TIMESTAMP(6)
			WHERE id = ?`, lease.Microseconds(), counters, errs, id)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("heartbeat job %s: %w", id, err)
	}
	return JobStatus(status), nil
}

// FinishJob ends owner's job with status done or failed (a job cancelled meanwhile
// stays cancelled) and saves the final progress. ErrLeaseLost when owner no longer
// holds the job.
func (s *Store) FinishJob(ctx context.Context, id, owner string, status JobStatus, p JobProgress) (Job, error) {
	if status != JobDone && status != JobFailed {
		return Job{}, fmt.Errorf("finish job %s: %w", id, invalid("status", "%q; want done or failed", status))
	}
	counters, errs, err := progressArgs(p)
	if err != nil {
		return Job{}, fmt.Errorf("finish job %s: %w", id, err)
	}
	r, err := s.db.ExecContext(ctx, `UPDATE crawl_jobs SET status = IF(status = 'cancelled', 'cancelled', ?),
		counters = COALESCE(?, counters), last_errors = COALESCE(?, last_errors),
		owner = NULL, lease_until = NULL, active_key = NULL, finished_at = UTC_TIMESTAMP(6), updated_at = UTC_TIMESTAMP(6)
		WHERE id = ? AND owner = ? AND status IN ('running','cancelled')`, string(status), counters, errs, id, owner)
	if err != nil {
		return Job{}, fmt.Errorf("finish job %s: %w", id, err)
	}
	if n, _ := r.RowsAffected(); n == 0 {
		return Job{}, fmt.Errorf("finish job %s: %w", id, ErrLeaseLost)
	}
	return s.GetJob(ctx, id)
}

// CancelJob marks a queued or running job cancelled (a running job's owner sees it
// at its next heartbeat and stops). Terminal jobs are returned unchanged.
func (s *Store) CancelJob(ctx context.Context, id string) (Job, error) {
	if !isASCII(id) {
		return Job{}, fmt.Errorf("cancel job %s: %w", id, ErrNotFound)
	}
	// MariaDB applies SET assignments left to right: finished_at must read the old status.
	if _, err := s.db.ExecContext(ctx, `UPDATE crawl_jobs SET
		finished_at = IF(status = 'queued' OR lease_until < UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), finished_at),
		status = 'cancelled', active_key = NULL, updated_at = UTC_TIMESTAMP(6)
		WHERE id = ? AND status IN ('queued','running')`, id); err != nil {
		return Job{}, fmt.Errorf("cancel job %s: %w", id, err)
	}
	j, err := s.GetJob(ctx, id)
	if err != nil {
		return Job{}, fmt.Errorf("cancel job: %w", err)
	}
	return j, nil
}

func progressArgs(p JobProgress) (counters, errs any, err error) {
	if p.Counters != nil {
		if !json.Valid(p.Counters) {
			return nil, nil, invalid("counters", "not valid JSON")
		}
		counters = string(p.Counters)
	}
	if p.LastErrors != nil {
		list := p.LastErrors
		if len(list) > maxJobErrors {
			list = list[len(list)-maxJobErrors:]
		}
		trimmed := make([]string, len(list))
		for i, e := range list {
			trimmed[i] = truncate(e, maxJobErrorLen)
		}
		b, _ := json.Marshal(trimmed)
		errs = string(b)
	}
	return counters, errs, nil
}
