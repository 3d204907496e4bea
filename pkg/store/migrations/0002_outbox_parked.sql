-- 0002: parked outbox rows. A row that kg refuses permanently (a 400, 413 or 422
-- about the document itself) is parked instead of being retried forever: parked_at
-- says when, parked_status and parked_reason what kg answered. Parked rows are
-- never claimed; an operator requeues them (kgregraph -requeue-parked) once kg is
-- fixed. Claims look for parked_at IS NULL and a due next_attempt_at, which the
-- outbox_claim index serves (it replaces outbox_due). Every statement can run
-- again on a database that already has it (MariaDB commits DDL one by one).

ALTER TABLE outbox
  ADD COLUMN IF NOT EXISTS parked_at DATETIME(6) NULL,
  ADD COLUMN IF NOT EXISTS parked_status SMALLINT NULL,
  ADD COLUMN IF NOT EXISTS parked_reason VARCHAR(1024) NULL;

ALTER TABLE outbox ADD INDEX IF NOT EXISTS outbox_claim (parked_at, next_attempt_at);

ALTER TABLE outbox DROP INDEX IF EXISTS outbox_due;
