package cli

import (
	"os"
	"strings"
)

// ciSystem is one CI service: how to tell that reportctl runs inside it
// and where it keeps the build metadata. Each field lists variables in
// order of preference; the first non-empty one wins.
type ciSystem struct {
	name    string
	detect  func(env func(string) string) bool
	branch  []string
	commit  []string
	buildID []string
	url     func(env func(string) string) string
}

// ciSystems is every CI service reportctl recognises, each by its own
// variables (the names their documentation gives). Woodpecker comes
// before Drone: older Woodpecker releases also set DRONE_* variables.
var ciSystems = []ciSystem{
	{
		name:    "GitHub Actions",
		detect:  is("GITHUB_ACTIONS", "true"),
		branch:  []string{"GITHUB_HEAD_REF", "GITHUB_REF_NAME"}, // GITHUB_HEAD_REF: a pull request's source branch
		commit:  []string{"GITHUB_SHA"},
		buildID: []string{"GITHUB_RUN_NUMBER"},
		url: func(env func(string) string) string {
			if env("GITHUB_SERVER_URL") == "" || env("GITHUB_REPOSITORY") == "" || env("GITHUB_RUN_ID") == "" {
				return ""
			}
			return env("GITHUB_SERVER_URL") + "/" + env("GITHUB_REPOSITORY") + "/actions/runs/" + env("GITHUB_RUN_ID")
		},
	},
	{
		name:    "GitLab CI",
		detect:  is("GITLAB_CI", "true"),
		branch:  []string{"CI_MERGE_REQUEST_SOURCE_BRANCH_NAME", "CI_COMMIT_REF_NAME"},
		commit:  []string{"CI_COMMIT_SHA"},
		buildID: []string{"CI_PIPELINE_ID"},
		url:     first("CI_JOB_URL", "CI_PIPELINE_URL"),
	},
	{
		name:    "Jenkins",
		detect:  set("JENKINS_URL"),
		branch:  []string{"CHANGE_BRANCH", "BRANCH_NAME", "GIT_BRANCH"},
		commit:  []string{"GIT_COMMIT"},
		buildID: []string{"BUILD_NUMBER"},
		url:     first("BUILD_URL"),
	},
	{
		name:    "Buildkite",
		detect:  is("BUILDKITE", "true"),
		branch:  []string{"BUILDKITE_BRANCH"},
		commit:  []string{"BUILDKITE_COMMIT"},
		buildID: []string{"BUILDKITE_BUILD_NUMBER"},
		url:     first("BUILDKITE_BUILD_URL"),
	},
	{
		name:    "CircleCI",
		detect:  is("CIRCLECI", "true"),
		branch:  []string{"CIRCLE_BRANCH"},
		commit:  []string{"CIRCLE_SHA1"},
		buildID: []string{"CIRCLE_BUILD_NUM"},
		url:     first("CIRCLE_BUILD_URL"),
	},
	{
		name:   "Azure Pipelines",
		detect: is("TF_BUILD", "true"),
		// BUILD_SOURCEBRANCH is refs/heads/feature/x; BUILD_SOURCEBRANCHNAME
		// keeps only its last segment ("x"), so it is the fallback.
		branch:  []string{"SYSTEM_PULLREQUEST_SOURCEBRANCH", "BUILD_SOURCEBRANCH", "BUILD_SOURCEBRANCHNAME"},
		commit:  []string{"BUILD_SOURCEVERSION"},
		buildID: []string{"BUILD_BUILDNUMBER"},
		url: func(env func(string) string) string {
			base, proj, id := env("SYSTEM_COLLECTIONURI"), env("SYSTEM_TEAMPROJECT"), env("BUILD_BUILDID")
			if base == "" || proj == "" || id == "" {
				return ""
			}
			return strings.TrimRight(base, "/") + "/" + proj + "/_build/results?buildId=" + id
		},
	},
	{
		name:    "Woodpecker",
		detect:  is("CI", "woodpecker"),
		branch:  []string{"CI_COMMIT_SOURCE_BRANCH", "CI_COMMIT_BRANCH"},
		commit:  []string{"CI_COMMIT_SHA"},
		buildID: []string{"CI_PIPELINE_NUMBER"},
		url:     first("CI_PIPELINE_URL"),
	},
	{
		name:    "Drone",
		detect:  is("DRONE", "true"),
		branch:  []string{"DRONE_SOURCE_BRANCH", "DRONE_BRANCH"},
		commit:  []string{"DRONE_COMMIT_SHA"},
		buildID: []string{"DRONE_BUILD_NUMBER"},
		url:     first("DRONE_BUILD_LINK"),
	},
}

// ciMeta is what the CI environment says about the build.
type ciMeta struct {
	system                            string
	branch, commit, buildURL, buildID string
}

// detectCI returns the metadata of the first CI system whose variables
// are present in env; ok is false outside CI.
func detectCI(env func(string) string) (m ciMeta, ok bool) {
	for _, s := range ciSystems {
		if !s.detect(env) {
			continue
		}
		return ciMeta{
			system:   s.name,
			branch:   cleanBranch(firstOf(env, s.branch)),
			commit:   firstOf(env, s.commit),
			buildURL: s.url(env),
			buildID:  firstOf(env, s.buildID),
		}, true
	}
	return ciMeta{}, false
}

// cleanBranch turns a ref into a branch name: refs/heads/main and
// Jenkins' origin/main are main. Tags and pull-request refs stay as given.
func cleanBranch(b string) string {
	if r, ok := strings.CutPrefix(b, "refs/heads/"); ok {
		return r
	}
	if r, ok := strings.CutPrefix(b, "origin/"); ok {
		return r
	}
	return b
}

func osEnv(k string) string { return os.Getenv(k) }

func firstOf(env func(string) string, keys []string) string {
	for _, k := range keys {
		if v := strings.TrimSpace(env(k)); v != "" {
			return v
		}
	}
	return ""
}

func first(keys ...string) func(func(string) string) string {
	return func(env func(string) string) string { return firstOf(env, keys) }
}

// is matches a variable's value case-insensitively (Azure sets TF_BUILD=True).
func is(key, want string) func(func(string) string) bool {
	return func(env func(string) string) bool { return strings.EqualFold(strings.TrimSpace(env(key)), want) }
}

func set(key string) func(func(string) string) bool {
	return func(env func(string) string) bool { return env(key) != "" }
}
