-- 0003: one active crawl per spec. active_key is the crawler's hash of a
-- queued or running job's normalised spec; the store sets it when it creates
-- the job and clears it (NULL) in the statements that end the job (finish,
-- cancel). Its unique index lets at most one queued or running job hold a key,
-- so of two identical crawls created at once, by one process or several
-- sharing the database, exactly one is stored. MariaDB keeps any number of
-- NULLs in a unique index. (A generated column cannot be used: MariaDB refuses
-- an index on an expression that compares the status ENUM.) Every statement
-- can run again (MariaDB commits DDL one by one).

ALTER TABLE crawl_jobs ADD COLUMN IF NOT EXISTS active_key CHAR(64) CHARACTER SET ascii NULL;

ALTER TABLE crawl_jobs ADD UNIQUE INDEX IF NOT EXISTS crawl_jobs_active_key (active_key);
