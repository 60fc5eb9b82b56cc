-- reportd metadata, version 4: a project's own retention policy
-- (report.Retention). Each column is NULL when the field is unset (it then
-- inherits the server's default); all NULL is no policy of its own.

ALTER TABLE projects
    ADD COLUMN retention_keep_last              bigint,
    ADD COLUMN retention_max_age_days           bigint,
    ADD COLUMN retention_keep_newest_per_branch boolean;
