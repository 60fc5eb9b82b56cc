-- reportd metadata, step 12: Idempotency-Key of uploads (internal/idempotency),
-- shared by replicas: a retry that lands on another replica still gets the
-- first answer. A row is claimed (done false) before the upload commits
-- and holds the answer once it has; rows older than 24 h are swept.

CREATE TABLE idempotency_keys (
    key         text PRIMARY KEY,
    fingerprint text NOT NULL,
    done        boolean NOT NULL DEFAULT false,
    status      integer NOT NULL DEFAULT 0,
    body        bytea,
    created_at  timestamptz NOT NULL
);

CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
