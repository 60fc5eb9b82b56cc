-- reportd metadata, version 1: projects, reports, per-day upload counts.
-- Ids come from sequences: reserved before a row is written (the file's
-- path carries its id), never reused; gaps are fine.

CREATE SEQUENCE project_ids AS bigint;
CREATE SEQUENCE report_ids AS bigint;

CREATE TABLE projects (
    id           bigint PRIMARY KEY,
    name         text NOT NULL,
    description  text,
    cover_image  text,
    created_at   timestamptz NOT NULL,
    -- kept exact in the transaction that adds or removes a report
    report_count bigint NOT NULL DEFAULT 0
);

CREATE TABLE reports (
    id          bigint PRIMARY KEY,
    project_id  bigint NOT NULL REFERENCES projects (id),
    file_name   text NOT NULL,
    file_type   text NOT NULL,
    file_path   text NOT NULL,
    upload_time timestamptz NOT NULL,
    size        bigint NOT NULL,
    sha256      text NOT NULL,
    -- build metadata: name is always set (derived from the file name when
    -- the upload gave none); branch is '' when unset so that Latest's
    -- (project, name, branch) lookup is one index range; the others are
    -- NULL when unset.
    name        text NOT NULL,
    branch      text NOT NULL DEFAULT '',
    commit      text,
    build_url   text,
    build_id    text
);

-- One project's reports in id order (Reports, DeleteProject).
CREATE INDEX reports_project ON reports (project_id, id);
-- Latest: the first entry under (project, name, branch) is the newest.
CREATE INDEX reports_latest ON reports (project_id, name, branch, id DESC);

-- Uploads per project and day; the day is the upload's date in the
-- daemon's time zone, computed by the daemon.
CREATE TABLE project_days (
    project_id bigint NOT NULL REFERENCES projects (id),
    day        date NOT NULL,
    count      bigint NOT NULL,
    PRIMARY KEY (project_id, day)
);
