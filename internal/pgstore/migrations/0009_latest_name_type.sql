-- reportd metadata, version 9: a report's identity is its name and file
-- type (deck.pdf and deck.pptx are both named "deck"), so the newest of a
-- name and type, on any branch or on one, is one index probe like the
-- other forms of Latest (reports_latest*, migrations 1 and 2).
--
-- Plain CREATE INDEX (migrations run in a transaction) blocks writes to
-- reports while it builds; on a large table, run this step in a quiet
-- moment or create the indexes CONCURRENTLY beforehand under these names.

CREATE INDEX IF NOT EXISTS reports_latest_name_type ON reports (project_id, name, file_type, id DESC);
CREATE INDEX IF NOT EXISTS reports_latest_name_type_branch ON reports (project_id, name, file_type, branch, id DESC);
