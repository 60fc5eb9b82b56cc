-- reportd metadata, version 10: projects get a slug, the name of a
-- project in stable links (/p/{slug}/latest): unique, set at creation,
-- kept on rename. Existing projects get one here, in id order, exactly as
-- report.Slugify and report.UniqueSlug give it to a new project: A-Z
-- lowered, each run of other characters outside a-z0-9 one '-', trimmed,
-- cut at 88 characters; "project" when nothing is left, "project-" before
-- a slug of digits only; "-2", "-3"… after one that is taken.

ALTER TABLE projects ADD COLUMN slug text;
-- Before the back-fill, so that its probes are index lookups.
CREATE UNIQUE INDEX projects_slug ON projects (slug);

DO $$
DECLARE
    p    record;
    base text;
    cand text;
    n    int;
BEGIN
    FOR p IN SELECT id, name FROM projects ORDER BY id LOOP
        base := regexp_replace(
            translate(p.name, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz'),
            '[^a-z0-9]+', '-', 'g');
        base := rtrim(left(btrim(base, '-'), 88), '-');
        IF base = '' THEN
            base := 'project';
        ELSIF base ~ '^[0-9]+$' THEN
            base := 'project-' || base;
        END IF;
        cand := base;
        n := 1;
        WHILE EXISTS (SELECT 1 FROM projects WHERE slug = cand) LOOP
            n := n + 1;
            cand := base || '-' || n;
        END LOOP;
        UPDATE projects SET slug = cand WHERE id = p.id;
    END LOOP;
END
$$;

ALTER TABLE projects ALTER COLUMN slug SET NOT NULL;
