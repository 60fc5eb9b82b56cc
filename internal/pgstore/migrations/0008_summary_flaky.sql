-- reportd metadata, version 8: the summary's flaky count (report.Summary
-- Flaky): how many tests the generator marked flaky (Playwright: failed,
-- then passed on a retry; Allure 3: flaky by its history). They are also
-- counted in summary_passed or summary_failed. NULL when unknown, as for
-- every figure; rows written before keep NULL.

ALTER TABLE reports
    ADD COLUMN summary_flaky bigint;
