-- reportd metadata, version 3: what an upload was recognised as. generator
-- is '' when unknown ("coverage.py", "jacoco", ...); the summary's figures
-- are NULL when unknown, the line coverage in hundredths of a percent (as
-- the bbolt store keeps it, so both round alike). Set at upload, kept by
-- updates.

ALTER TABLE reports
    ADD COLUMN generator       text NOT NULL DEFAULT '',
    ADD COLUMN summary_lines   bigint,
    ADD COLUMN summary_passed  bigint,
    ADD COLUMN summary_failed  bigint,
    ADD COLUMN summary_skipped bigint;
