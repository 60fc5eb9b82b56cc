-- reportd metadata, version 5: site reports (report.KindSite). A site's
-- files live in the blob store (cas/ objects and a manifest at
-- sites/<id>.json); the row keeps what lists show: its entry page, number
-- of files and total bytes. Rows of single files keep kind 'file'.

ALTER TABLE reports
    ADD COLUMN kind        text   NOT NULL DEFAULT 'file' CHECK (kind IN ('file', 'site')),
    ADD COLUMN site_entry  text   NOT NULL DEFAULT '',
    ADD COLUMN site_files  bigint NOT NULL DEFAULT 0,
    ADD COLUMN site_bytes  bigint NOT NULL DEFAULT 0;
