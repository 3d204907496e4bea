-- 0001: documents, change feed, outbox, embedding model registry, crawl jobs,
-- persisted frontier and the domain blocklist. The chunks table is created when the
-- embedding model is first registered, because its VECTOR(d) width comes from the model.

CREATE TABLE IF NOT EXISTS documents (
  id            CHAR(32) CHARACTER SET ascii NOT NULL,
  url           VARCHAR(2048) NOT NULL,
  domain        VARCHAR(253) CHARACTER SET ascii NOT NULL,
  title         TEXT NOT NULL,
  lang          VARCHAR(16) CHARACTER SET ascii NOT NULL DEFAULT '',
  content_hash  VARCHAR(128) CHARACTER SET ascii NOT NULL DEFAULT '',
  etag          VARCHAR(512) NOT NULL DEFAULT '',
  last_modified VARCHAR(64) NOT NULL DEFAULT '',
  published_at  DATETIME(6) NULL,
  fetched_at    DATETIME(6) NULL,
  created_at    DATETIME(6) NOT NULL,
  updated_at    DATETIME(6) NOT NULL,
  tags          JSON NOT NULL,
  headings      JSON NOT NULL,
  chunk_count   INT NOT NULL DEFAULT 0,
  PRIMARY KEY (id),
  KEY documents_domain (domain),
  KEY documents_published (published_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- change_counter hands out change sequence numbers under a row lock held until
-- commit, so sequence order equals commit order and a tailer never skips a change
-- that commits late with a lower number (plain AUTO_INCREMENT cannot promise that).
CREATE TABLE IF NOT EXISTS change_counter (
  id  TINYINT NOT NULL,
  seq BIGINT NOT NULL,
  PRIMARY KEY (id)
) ENGINE=InnoDB;

INSERT IGNORE INTO change_counter (id, seq) VALUES (1, 0);

CREATE TABLE IF NOT EXISTS changes (
  seq         BIGINT NOT NULL,
  document_id CHAR(32) CHARACTER SET ascii NOT NULL,
  op          ENUM('insert','update','delete') NOT NULL,
  at          DATETIME(6) NOT NULL,
  PRIMARY KEY (seq),
  KEY changes_document (document_id)
) ENGINE=InnoDB;

CREATE TABLE IF NOT EXISTS outbox (
  id              BIGINT NOT NULL AUTO_INCREMENT,
  kind            VARCHAR(32) CHARACTER SET ascii NOT NULL,
  document_id     CHAR(32) CHARACTER SET ascii NOT NULL,
  payload         JSON NULL,
  attempts        INT NOT NULL DEFAULT 0,
  next_attempt_at DATETIME(6) NOT NULL,
  claimed_by      VARCHAR(128) NULL,
  last_error      TEXT NULL,
  created_at      DATETIME(6) NOT NULL,
  PRIMARY KEY (id),
  KEY outbox_due (next_attempt_at),
  KEY outbox_document (document_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS embedding_model (
  id         TINYINT NOT NULL,
  name       VARCHAR(255) NOT NULL,
  dims       INT NOT NULL,
  created_at DATETIME(6) NOT NULL,
  PRIMARY KEY (id),
  CONSTRAINT embedding_model_single CHECK (id = 1)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS crawl_jobs (
  id          CHAR(36) CHARACTER SET ascii NOT NULL,
  spec        JSON NOT NULL,
  status      ENUM('queued','running','done','failed','cancelled') NOT NULL,
  counters    JSON NOT NULL,
  last_errors JSON NOT NULL,
  owner       VARCHAR(128) NULL,
  lease_until DATETIME(6) NULL,
  created_at  DATETIME(6) NOT NULL,
  started_at  DATETIME(6) NULL,
  finished_at DATETIME(6) NULL,
  updated_at  DATETIME(6) NOT NULL,
  PRIMARY KEY (id),
  KEY crawl_jobs_status (status, created_at),
  KEY crawl_jobs_created (created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS crawl_frontier (
  seq         BIGINT NOT NULL AUTO_INCREMENT,
  job_id      CHAR(36) CHARACTER SET ascii NOT NULL,
  url_hash    CHAR(32) CHARACTER SET ascii NOT NULL,
  url         TEXT NOT NULL,
  depth       INT NOT NULL,
  state       ENUM('queued','claimed','done','failed','skipped') NOT NULL DEFAULT 'queued',
  attempts    INT NOT NULL DEFAULT 0,
  claimed_by  VARCHAR(128) NULL,
  lease_until DATETIME(6) NULL,
  reason      VARCHAR(512) NOT NULL DEFAULT '',
  created_at  DATETIME(6) NOT NULL,
  updated_at  DATETIME(6) NOT NULL,
  PRIMARY KEY (job_id, url_hash),
  UNIQUE KEY crawl_frontier_seq (seq),
  KEY crawl_frontier_claim (job_id, state, depth, seq),
  KEY crawl_frontier_lease (state, lease_until),
  CONSTRAINT crawl_frontier_job FOREIGN KEY (job_id) REFERENCES crawl_jobs (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS blocklist (
  domain     VARCHAR(253) CHARACTER SET ascii NOT NULL,
  reason     VARCHAR(512) NOT NULL DEFAULT '',
  created_at DATETIME(6) NOT NULL,
  PRIMARY KEY (domain)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
