package report

import "sort"

// DayCount is one stored per-day upload counter: the reports uploaded into
// Project on Day (YYYYMMDD, in the store's zone) that still exist. Both
// stores expose theirs so `reportd migrate` and `reportd check` can compare.
type DayCount struct {
	Project int64  `json:"project"`
	Day     string `json:"day"`
	Count   int64  `json:"count"`
}

// DayDrift lists the days on which stored and real counts differ, by
// project and day: what CounterDrift reports as "dayCount", and what
// migrate compares between two stores.
func DayDrift(stored, real []DayCount) []Drift {
	type key struct {
		p int64
		d string
	}
	m := map[key][2]int64{}
	for _, c := range stored {
		v := m[key{c.Project, c.Day}]
		v[0] = c.Count
		m[key{c.Project, c.Day}] = v
	}
	for _, c := range real {
		v := m[key{c.Project, c.Day}]
		v[1] = c.Count
		m[key{c.Project, c.Day}] = v
	}
	var out []Drift
	for k, v := range m {
		if v[0] != v[1] {
			out = append(out, Drift{What: "dayCount", Project: k.p, Day: k.d, Stored: v[0], Actual: v[1]})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Project != out[j].Project {
			return out[i].Project < out[j].Project
		}
		return out[i].Day < out[j].Day
	})
	return out
}
