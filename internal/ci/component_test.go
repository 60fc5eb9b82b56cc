package ci_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

var inputRef = regexp.MustCompile(`\$\[\[\s*inputs\.([a-z0-9_-]+)\s*\]\]`)

// TestGitLabComponent runs templates/publish.yml's job as GitLab would:
// the spec's inputs interpolated into the job, its variables expanded with
// GitLab's predefined ones, its script under sh -e; the dotenv report is
// read back. The token comes from a CI/CD variable, never an input.
func TestGitLabComponent(t *testing.T) {
	const token = "gitlab-ci-token-0123456789"
	e := startServer(t, token)
	ws := workspace(t)

	raw, err := os.ReadFile("../../templates/publish.yml")
	if err != nil {
		t.Fatal(err)
	}
	header, body, ok := bytes.Cut(raw, []byte("\n---\n"))
	if !ok {
		t.Fatal("templates/publish.yml: no spec header followed by ---")
	}
	var spec struct {
		Spec struct {
			Inputs map[string]struct {
				Default any    `yaml:"default"`
				Type    string `yaml:"type"`
			} `yaml:"inputs"`
		} `yaml:"spec"`
	}
	if err := yaml.Unmarshal(header, &spec); err != nil {
		t.Fatal(err)
	}
	given := map[string]string{"server": e.URL, "path": "htmlcov docs/*.md"}
	values := map[string]string{}
	for name, in := range spec.Spec.Inputs {
		if v, ok := given[name]; ok {
			values[name] = v
			continue
		}
		if in.Default == nil {
			t.Fatalf("test gives no value for input %s, which has no default", name)
		}
		switch d := in.Default.(type) {
		case []any:
			if len(d) != 0 {
				t.Fatalf("input %s: array default %v", name, d)
			}
			values[name] = "[]"
		default:
			values[name] = fmt.Sprint(d)
		}
	}
	text := inputRef.ReplaceAllStringFunc(string(body), func(m string) string {
		name := inputRef.FindStringSubmatch(m)[1]
		v, ok := values[name]
		if !ok {
			t.Fatalf("%s names no input of the spec", m)
		}
		return v
	})
	var jobs map[string]struct {
		Variables    map[string]string `yaml:"variables"`
		BeforeScript []string          `yaml:"before_script"`
		Script       []string          `yaml:"script"`
		Artifacts    struct {
			Reports struct {
				Dotenv string `yaml:"dotenv"`
			} `yaml:"reports"`
		} `yaml:"artifacts"`
	}
	if err := yaml.Unmarshal([]byte(text), &jobs); err != nil {
		t.Fatalf("the interpolated job is not YAML: %v\n%s", err, text)
	}
	job, ok := jobs["publish-reports"]
	if !ok || len(jobs) != 1 {
		t.Fatalf("want one job publish-reports, got %v", jobs)
	}

	gitlab := map[string]string{
		"CI": "true", "GITLAB_CI": "true", "CI_PROJECT_PATH": "acme/web", "CI_PROJECT_DIR": ws,
		"CI_COMMIT_SHA": "89abcdef0123456789abcdef0123456789abcdef", "CI_COMMIT_REF_NAME": "main",
		"CI_COMMIT_BRANCH": "main", "CI_PIPELINE_ID": "777", "CI_JOB_ID": "9001",
		"CI_PIPELINE_URL": "https://gitlab.example.com/acme/web/-/pipelines/777",
		"CI_JOB_URL":      "https://gitlab.example.com/acme/web/-/jobs/9001",
		"REPORTCTL_TOKEN": token, // the masked CI/CD variable
	}
	env := baseEnv(t)
	for k, v := range gitlab {
		env = append(env, k+"="+v)
	}
	for k, v := range job.Variables {
		env = append(env, k+"="+os.Expand(v, func(n string) string { return gitlab[n] }))
	}
	script := strings.Join(append(job.BeforeScript, job.Script...), "\n")
	if err := runScript(t, ws, env, script, "sh", "-e"); err != nil {
		t.Fatalf("job script: %v", err)
	}

	kv := readKV(t, filepath.Join(ws, job.Artifacts.Reports.Dotenv))
	reps := reportsOf(t, e, token, 1)
	checkPublished(t, reps, kv["REPORTD_REPORT_IDS"], "main", gitlab["CI_COMMIT_SHA"], gitlab["CI_JOB_URL"])
	if want := e.URL + "/#/projects/1"; kv["REPORTD_DASHBOARD_URL"] != want {
		t.Errorf("REPORTD_DASHBOARD_URL %q, want %q", kv["REPORTD_DASHBOARD_URL"], want)
	}
}
