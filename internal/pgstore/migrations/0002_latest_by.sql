-- reportd metadata, version 2: Latest by name alone and by branch alone is
-- one index probe too, like Latest by both (reports_latest). The newest
-- report of a whole project is a backward walk of reports_project
-- (project_id, id): a B-tree reads as well backwards as forwards, so no
-- (project_id, id DESC) copy of it is kept.
--
-- Plain CREATE INDEX (migrations run in a transaction) blocks writes to
-- reports while it builds; on a large table, run this step in a quiet
-- moment or create the indexes CONCURRENTLY beforehand under these names.

CREATE INDEX IF NOT EXISTS reports_latest_name ON reports (project_id, name, id DESC);
CREATE INDEX IF NOT EXISTS reports_latest_branch ON reports (project_id, branch, id DESC);
