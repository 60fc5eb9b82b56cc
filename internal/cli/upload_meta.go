package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/reportd/reportd/internal/report"
)

// metaSetting is one build metadata field of upload: its flag, its
// REPORTCTL_* variable, and what the CI environment gives for it.
type metaSetting struct {
	flag, usage string
	field       func(*report.BuildMeta) **string
	fromCI      func(ciMeta) string
}

// metaSettings is the order of flags, help and precedence: the flag wins
// over REPORTCTL_<FLAG>, which wins over the CI environment.
var metaSettings = []metaSetting{
	{"name", "stable report `NAME` such as coverage or e2e (default: from the file name)",
		func(m *report.BuildMeta) **string { return &m.Name }, func(ciMeta) string { return "" }},
	{"branch", "`BRANCH` the report was built from (default: from the CI environment)",
		func(m *report.BuildMeta) **string { return &m.Branch }, func(c ciMeta) string { return c.branch }},
	{"commit", "`COMMIT` the report was built from (default: from the CI environment)",
		func(m *report.BuildMeta) **string { return &m.Commit }, func(c ciMeta) string { return c.commit }},
	{"build-url", "http(s) `URL` of the CI build (default: from the CI environment)",
		func(m *report.BuildMeta) **string { return &m.BuildURL }, func(c ciMeta) string { return c.buildURL }},
	{"build-id", "CI build or run `NUMBER` (default: from the CI environment)",
		func(m *report.BuildMeta) **string { return &m.BuildID }, func(c ciMeta) string { return c.buildID }},
}

// metaFlags holds upload's metadata flags.
type metaFlags struct {
	values [5]string
	noCI   bool
}

func (mf *metaFlags) register(fl *pflag.FlagSet) {
	for i, s := range metaSettings {
		fl.StringVar(&mf.values[i], s.flag, "", s.usage)
	}
	fl.BoolVar(&mf.noCI, "no-ci-metadata", false, "do not read branch, commit and build from the CI environment")
}

// resolve applies flag > REPORTCTL_* > CI environment and returns the
// metadata with the name of the CI system it read ("" when none).
func (mf *metaFlags) resolve(fl *pflag.FlagSet, env func(string) string) (report.BuildMeta, string) {
	var m report.BuildMeta
	ci, inCI := ciMeta{}, false
	if !mf.noCI && !isTrue(env(EnvName("no-ci-metadata"))) {
		ci, inCI = detectCI(env)
	}
	for i, s := range metaSettings {
		v := ""
		switch {
		case fl.Changed(s.flag):
			v = mf.values[i]
		case strings.TrimSpace(env(EnvName(s.flag))) != "":
			v = env(EnvName(s.flag))
		case inCI:
			v = s.fromCI(ci)
		}
		if v = strings.TrimSpace(v); v != "" {
			*s.field(&m) = &v
		}
	}
	return m, ci.system
}

func isTrue(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// writeCIHelp lists the metadata variables for `reportctl help environment`.
func writeCIHelp(b io.Writer) {
	fmt.Fprint(b, "\nBuild metadata of `reportctl upload` and `reportctl watch` (flag > variable > CI environment):\n\n")
	for _, s := range metaSettings {
		fmt.Fprintf(b, "%s\n    Same as upload --%s.\n\n", EnvName(s.flag), s.flag)
	}
	fmt.Fprintf(b, "%s\n    1 or true: same as upload --no-ci-metadata.\n\n", EnvName("no-ci-metadata"))
	fmt.Fprint(b, "Unless disabled, upload reads branch, commit, build URL and build number\nfrom the first CI system it recognises:\n\n")
	for _, s := range ciSystems {
		fmt.Fprintf(b, "%s\n    branch %s; commit %s; build number %s.\n\n", s.name,
			strings.Join(s.branch, " or "), strings.Join(s.commit, " or "), strings.Join(s.buildID, " or "))
	}
	fmt.Fprint(b, ciURLHelp)
}

const ciURLHelp = `Build URLs: GitHub Actions $GITHUB_SERVER_URL/$GITHUB_REPOSITORY/actions/runs/$GITHUB_RUN_ID;
GitLab CI_JOB_URL or CI_PIPELINE_URL; Jenkins BUILD_URL; Buildkite BUILDKITE_BUILD_URL;
CircleCI CIRCLE_BUILD_URL; Azure $SYSTEM_COLLECTIONURI$SYSTEM_TEAMPROJECT/_build/results?buildId=$BUILD_BUILDID;
Woodpecker CI_PIPELINE_URL; Drone DRONE_BUILD_LINK. Detection: GITHUB_ACTIONS=true, GITLAB_CI=true,
JENKINS_URL set, BUILDKITE=true, CIRCLECI=true, TF_BUILD=True, CI=woodpecker, DRONE=true.

`

// watchMeta gives `reportctl watch` upload's metadata flags, variables and
// CI detection (watch.MetaFlags).
type watchMeta struct{ mf metaFlags }

func (w *watchMeta) Register(fl *pflag.FlagSet) { w.mf.register(fl) }

func (w *watchMeta) Resolve(fl *pflag.FlagSet) (report.BuildMeta, string) {
	return w.mf.resolve(fl, osEnv)
}
