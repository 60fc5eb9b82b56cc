-- reportd metadata, step 11: the content signing key (internal/content),
-- one per database so every replica signs and checks content URLs alike.
-- The first replica to need it inserts it (ON CONFLICT DO NOTHING: the
-- others read the winner's); made_at dates the switch away from keys
-- derived from auth.token, whose links are accepted for one content.url_ttl
-- after it.

CREATE TABLE content_keys (
    name    text PRIMARY KEY,
    secret  text NOT NULL,
    made_at timestamptz NOT NULL
);
