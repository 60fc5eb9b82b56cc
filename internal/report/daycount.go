package report

// DayCount is one stored per-day upload counter: the reports uploaded into
// Project on Day (YYYYMMDD, in the store's zone) that still exist. Both
// stores expose theirs so `reportd migrate` and `reportd check` can compare.
type DayCount struct {
	Project int64  `json:"project"`
	Day     string `json:"day"`
	Count   int64  `json:"count"`
}
