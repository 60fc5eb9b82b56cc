-- reportd metadata, version 5: scoped API tokens (internal/tokens), as the
-- bbolt store's tokens bucket keeps them. hash is the SHA-256 of the
-- token's secret, never the secret. projects is empty for a global token.
-- last_used is not written per request (each replica keeps it in memory).

CREATE TABLE tokens (
    id         text PRIMARY KEY,
    name       text NOT NULL,
    scope      smallint NOT NULL,
    projects   bigint[] NOT NULL DEFAULT '{}',
    hash       bytea NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz,
    revoked_at timestamptz,
    last_used  timestamptz
);
