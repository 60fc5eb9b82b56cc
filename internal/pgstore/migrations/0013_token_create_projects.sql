-- reportd metadata, version 13: upload tokens that may create projects
-- (reportd token create --allow-create-projects [--project-prefix P]).
-- Each project such a token creates is appended to its projects array
-- (one UPDATE, so concurrent creations never lose one). Existing tokens
-- get false and '': what they were.

ALTER TABLE tokens
    ADD COLUMN create_projects boolean NOT NULL DEFAULT false,
    ADD COLUMN project_prefix  text    NOT NULL DEFAULT '';
