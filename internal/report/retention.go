package report

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Retention is a project's stored retention policy. Each field that is
// nil inherits the server's default (config retention.*); a project with
// no field set has no policy of its own (its JSON retention is null).
type Retention struct {
	// KeepLast keeps the newest N reports of each name, type and branch; 0 keeps
	// any number.
	KeepLast *int `json:"keepLast"`
	// MaxAgeDays removes reports uploaded more than D days ago; 0 never
	// removes by age.
	MaxAgeDays *int `json:"maxAgeDays"`
	// KeepNewestPerBranch keeps the newest report of each name and type
	// on each branch whatever the other rules say (what "latest" serves).
	KeepNewestPerBranch *bool `json:"keepNewestPerBranch"`
}

// Limits of a policy's fields.
const (
	MaxKeepLast   = 1_000_000
	MaxMaxAgeDays = 36_500
)

// IsZero says no field is set.
func (r Retention) IsZero() bool {
	return r.KeepLast == nil && r.MaxAgeDays == nil && r.KeepNewestPerBranch == nil
}

// Check validates the set fields.
func (r Retention) Check() error {
	if r.KeepLast != nil && (*r.KeepLast < 0 || *r.KeepLast > MaxKeepLast) {
		return Errorf(Validation, "keepLast must be 0 (no limit) to %d, not %d", MaxKeepLast, *r.KeepLast)
	}
	if r.MaxAgeDays != nil && (*r.MaxAgeDays < 0 || *r.MaxAgeDays > MaxMaxAgeDays) {
		return Errorf(Validation, "maxAgeDays must be 0 (no limit) to %d, not %d", MaxMaxAgeDays, *r.MaxAgeDays)
	}
	return nil
}

// Over fills the fields r leaves unset from base.
func (r Retention) Over(base Policy) Policy {
	if r.KeepLast != nil {
		base.KeepLast = *r.KeepLast
	}
	if r.MaxAgeDays != nil {
		base.MaxAgeDays = *r.MaxAgeDays
	}
	if r.KeepNewestPerBranch != nil {
		base.KeepNewestPerBranch = *r.KeepNewestPerBranch
	}
	return base
}

// Policy is a retention policy with every field decided: the server
// default, overridden by the project's Retention and then by a prune
// request's.
type Policy struct {
	KeepLast            int  `json:"keepLast"`
	MaxAgeDays          int  `json:"maxAgeDays"`
	KeepNewestPerBranch bool `json:"keepNewestPerBranch"`
}

// Removes says whether the policy can remove anything at all.
func (p Policy) Removes() bool { return p.KeepLast > 0 || p.MaxAgeDays > 0 }

// Reasons a report is removed (the reason field of a prune item).
const (
	ReasonKeepLast = "keepLast" // beyond the newest keepLast of its name, type and branch
	ReasonMaxAge   = "maxAge"   // uploaded more than maxAgeDays ago
)

// PruneItem is one report a prune removes or would remove.
type PruneItem struct {
	ID         int64     `json:"id"`
	ProjectID  int64     `json:"projectId"`
	Name       string    `json:"name"`
	FileType   FileType  `json:"fileType"`
	Branch     *string   `json:"branch"`
	FileName   string    `json:"fileName"`
	UploadTime LocalTime `json:"uploadTime"`
	Size       int64     `json:"size"`
	Reason     string    `json:"reason"`
}

// PruneResult is what a prune removed (or, dry, would remove).
type PruneResult struct {
	DryRun   bool        `json:"dryRun"`
	Projects int         `json:"projects"` // projects looked at
	Reports  []PruneItem `json:"reports"`
	Bytes    int64       `json:"bytes"`
}

// PlanRetention returns the reports of one project that policy p removes
// at now, by id ascending. Reports are grouped by name, file type and
// branch (a report's identity: deck.pdf and deck.pptx are both named
// "deck" but never compete; no branch is a group of its own); within a
// group the highest id is the
// newest, as in the latest index. A report goes when it is beyond the
// newest KeepLast of its group or uploaded more than MaxAgeDays before
// now — unless KeepNewestPerBranch and it is its group's newest.
func PlanRetention(reps []ReportRecord, p Policy, now time.Time) []PruneItem {
	if !p.Removes() || len(reps) == 0 {
		return nil
	}
	order := make([]int, len(reps))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(reps[b].ID, reps[a].ID) })
	var cutoff time.Time
	if p.MaxAgeDays > 0 {
		cutoff = now.AddDate(0, 0, -p.MaxAgeDays)
	}
	rank := map[string]int{}
	var out []PruneItem
	for _, i := range order {
		r := &reps[i]
		name, branch := groupOf(r)
		key := name + "\x00" + string(r.FileType) + "\x00" + branch
		n := rank[key]
		rank[key] = n + 1
		reason := ""
		switch {
		case n == 0 && p.KeepNewestPerBranch:
		case p.KeepLast > 0 && n >= p.KeepLast:
			reason = ReasonKeepLast
		case p.MaxAgeDays > 0 && r.UploadTime.Before(cutoff):
			reason = ReasonMaxAge
		}
		if reason != "" {
			out = append(out, PruneItem{ID: r.ID, ProjectID: r.ProjectID, Name: name, FileType: r.FileType, Branch: r.Branch,
				FileName: r.FileName, UploadTime: r.UploadTime, Size: r.Size, Reason: reason})
		}
	}
	slices.SortFunc(out, func(a, b PruneItem) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// groupOf is a report's name (derived from the file name when it has
// none, as the latest index does) and branch ("" for none).
func groupOf(r *ReportRecord) (name, branch string) {
	name = r.Name
	if name == "" {
		name = NameFromFile(r.FileName)
	}
	if r.Branch != nil {
		branch = *r.Branch
	}
	return name, branch
}

// ParseAgeDays reads a maximum age as whole days: "0", "90d", "12w", or
// a Go duration that is a whole number of days ("720h").
func ParseAgeDays(s string) (int, error) {
	t := strings.TrimSpace(strings.ToLower(s))
	bad := Errorf(Validation, "bad age %q: want whole days such as 90d, 12w or 720h, or 0 for no limit", s)
	mul := 0
	switch {
	case t == "0":
		return 0, nil
	case strings.HasSuffix(t, "d"):
		mul = 1
	case strings.HasSuffix(t, "w"):
		mul = 7
	}
	var days int
	if mul > 0 {
		n, err := strconv.Atoi(t[:len(t)-1])
		if err != nil || n < 0 || n > MaxMaxAgeDays {
			return 0, bad
		}
		days = n * mul
	} else {
		d, err := time.ParseDuration(t)
		if err != nil || d < 0 || d%(24*time.Hour) != 0 {
			return 0, bad
		}
		days = int(d / (24 * time.Hour))
	}
	if days > MaxMaxAgeDays {
		return 0, Errorf(Validation, "age %q is more than %d days", s, MaxMaxAgeDays)
	}
	return days, nil
}

// FormatAgeDays writes days as ParseAgeDays reads them ("0" or "90d").
func FormatAgeDays(days int) string {
	if days == 0 {
		return "0"
	}
	return strconv.Itoa(days) + "d"
}

// RetentionView is a project's retention as GET and PUT
// /api/projects/{id}/retention answer it: the stored fields (null:
// inherited) and the policy that applies after inheritance.
type RetentionView struct {
	Retention
	Effective Policy `json:"effective"`
}
