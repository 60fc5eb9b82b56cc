-- reportd metadata, version 14: a report's per-test results and per-file
-- coverage (report.Results), stored compactly as report.EncodeResults
-- writes them (gzip'd JSON), one row per report that has any. Written
-- with the report in its transaction, or later by
-- `reportd backfill-results`; deleted with the report (ON DELETE CASCADE:
-- report delete, retention, project delete).
--
-- History (GET /api/projects/{id}/history) reads reports through the
-- indexes of migrations 1 and 2 (reports_latest, reports_latest_name).

CREATE TABLE IF NOT EXISTS report_results (
    report_id bigint PRIMARY KEY REFERENCES reports (id) ON DELETE CASCADE,
    data      bytea  NOT NULL
);
