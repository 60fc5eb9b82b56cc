package report

import "math"

// Compare builds the comparison of head (with its per-test results
// headRes, nil when none) against base (nil: no base). Flaky is left
// empty: the caller fills it by FlakyTests, which needs other runs.
func Compare(head *Report, headRes *Results, base *Report, baseRes *Results) Comparison {
	c := Comparison{
		Head:         Point(head),
		NewFailures:  []TestRef{},
		Fixed:        []TestRef{},
		StillFailing: []TestRef{},
		Flaky:        []TestRef{},
		Files:        []FileDelta{},
	}
	if base != nil {
		p := Point(base)
		c.Base = &p
		c.Delta = SummaryDelta(head.Summary, base.Summary)
	}
	before := map[string]string{}
	if baseRes != nil {
		for _, t := range baseRes.Tests {
			before[t.ID] = t.Status
		}
	}
	if headRes != nil {
		for _, t := range headRes.Tests {
			ref := TestRef{ID: t.ID, Title: t.Title}
			was, known := before[t.ID]
			switch {
			case t.Status == TestFailed && known && was == TestFailed:
				c.StillFailing = append(c.StillFailing, ref)
			case t.Status == TestFailed:
				c.NewFailures = append(c.NewFailures, ref)
			case t.Status == TestPassed && known && was == TestFailed:
				c.Fixed = append(c.Fixed, ref)
			}
		}
	}
	if baseRes != nil && headRes != nil {
		after := make(map[string]float64, len(headRes.Files))
		for _, f := range headRes.Files {
			after[f.Path] = f.Lines
		}
		for _, f := range baseRes.Files {
			if a, ok := after[f.Path]; ok && a < f.Lines {
				c.Files = append(c.Files, FileDelta{Path: f.Path, Before: f.Lines, After: a})
			}
		}
	}
	return c
}

// Point is r as a history point.
func Point(r *Report) HistoryPoint {
	return HistoryPoint{ReportID: r.ID, UploadTime: r.UploadTime, Branch: r.Branch, Commit: r.Commit, BuildURL: r.BuildURL, Summary: r.Summary}
}

// SummaryDelta is head − base for each field known on both sides; nil
// when no field is.
func SummaryDelta(head, base *Summary) *Summary {
	if head == nil || base == nil {
		return nil
	}
	d := &Summary{}
	if head.Lines != nil && base.Lines != nil {
		v := math.Round((*head.Lines-*base.Lines)*100) / 100
		d.Lines = &v
	}
	sub := func(a, b *int64) *int64 {
		if a == nil || b == nil {
			return nil
		}
		v := *a - *b
		return &v
	}
	d.Passed, d.Failed, d.Skipped, d.Flaky = sub(head.Passed, base.Passed), sub(head.Failed, base.Failed), sub(head.Skipped, base.Skipped), sub(head.Flaky, base.Flaky)
	if d.Empty() {
		return nil
	}
	return d
}
