package ci_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// action is the part of action.yml a runner reads.
type action struct {
	Inputs map[string]struct {
		Default  string `yaml:"default"`
		Required bool   `yaml:"required"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Value string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string `yaml:"using"`
		Steps []struct {
			Name  string            `yaml:"name"`
			ID    string            `yaml:"id"`
			Shell string            `yaml:"shell"`
			Run   string            `yaml:"run"`
			Env   map[string]string `yaml:"env"`
		} `yaml:"steps"`
	} `yaml:"runs"`
}

var expr = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// TestGitHubAction runs action.yml's steps as the runner does: each run:
// script under `bash --noprofile --norc -eo pipefail`, its env: with the
// inputs filled in, GitHub's variables set, GITHUB_PATH applied between
// steps, outputs read from GITHUB_OUTPUT. The server requires a token for
// reads too, so the install goes through --token.
func TestGitHubAction(t *testing.T) {
	const token = "ci-secret-token-0123456789"
	e := startServer(t, token)
	ws := workspace(t)

	data, err := os.ReadFile("../../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	var a action
	if err := yaml.Unmarshal(data, &a); err != nil {
		t.Fatal(err)
	}
	if a.Runs.Using != "composite" {
		t.Fatalf("runs.using %q, want composite", a.Runs.Using)
	}
	github := map[string]string{"github.repository": "acme/web", "github.token": ""}
	given := map[string]string{"server": e.URL, "token": token, "path": "htmlcov\n  docs/*.md\n"}
	inputs := map[string]string{}
	for name, in := range a.Inputs {
		v, ok := given[name]
		if !ok {
			if in.Required {
				t.Fatalf("test gives no value for required input %s", name)
			}
			v = eval(t, in.Default, nil, github)
		}
		inputs[name] = v
	}

	runner := t.TempDir()
	summary := filepath.Join(runner, "step_summary.md")
	pathFile := filepath.Join(runner, "path")
	os.WriteFile(summary, nil, 0o644)
	os.WriteFile(pathFile, nil, 0o644)
	gh := []string{
		"CI=true", "GITHUB_ACTIONS=true", "GITHUB_REPOSITORY=acme/web", "GITHUB_SHA=0123456789abcdef0123456789abcdef01234567",
		"GITHUB_REF_NAME=feature/login", "GITHUB_REF=refs/heads/feature/login", "GITHUB_SERVER_URL=https://github.com",
		"GITHUB_RUN_ID=4242", "GITHUB_RUN_NUMBER=17", "GITHUB_WORKSPACE=" + ws, "RUNNER_TEMP=" + runner,
		"GITHUB_STEP_SUMMARY=" + summary, "GITHUB_PATH=" + pathFile,
	}
	outputs := map[string]map[string]string{}
	for i, step := range a.Runs.Steps {
		if step.Shell != "bash" {
			t.Fatalf("step %q: shell %q (the runners of every OS have bash)", step.Name, step.Shell)
		}
		if expr.MatchString(step.Run) {
			t.Fatalf("step %q: ${{ }} inside run: (script injection); pass values through env", step.Name)
		}
		out := filepath.Join(runner, "output"+string(rune('0'+i)))
		os.WriteFile(out, nil, 0o644)
		env := append(baseEnv(t), gh...)
		env = append(env, "GITHUB_OUTPUT="+out)
		for k, v := range step.Env {
			env = append(env, k+"="+eval(t, v, inputs, github))
		}
		// GITHUB_PATH lines written by earlier steps come first on PATH.
		added, _ := os.ReadFile(pathFile)
		for _, p := range strings.Fields(string(added)) {
			env[0] = "PATH=" + p + ":" + strings.TrimPrefix(env[0], "PATH=")
		}
		if err := runScript(t, ws, env, step.Run, "bash", "--noprofile", "--norc", "-eo", "pipefail"); err != nil {
			t.Fatalf("step %q: %v", step.Name, err)
		}
		if step.ID != "" {
			outputs[step.ID] = readKV(t, out)
		}
	}

	got := map[string]string{}
	for name, o := range a.Outputs {
		m := expr.FindStringSubmatch(o.Value)
		parts := strings.Split(m[1], ".") // steps.<id>.outputs.<name>
		if len(parts) != 4 || parts[0] != "steps" || parts[2] != "outputs" {
			t.Fatalf("output %s: %q", name, o.Value)
		}
		got[name] = outputs[parts[1]][parts[3]]
	}
	reps := reportsOf(t, e, token, 1)
	checkPublished(t, reps, got["report-ids"], "feature/login", "0123456789abcdef0123456789abcdef01234567", "https://github.com/acme/web/actions/runs/4242")
	if want := e.URL + "/#/projects/1"; got["dashboard-url"] != want {
		t.Errorf("dashboard-url %q, want %q", got["dashboard-url"], want)
	}
	if _, err := os.Stat(filepath.Join(runner, "reportctl-bin", "reportctl")); err != nil {
		t.Errorf("reportctl not installed into RUNNER_TEMP: %v", err)
	}
	sum, _ := os.ReadFile(summary)
	for _, r := range reps {
		if !strings.Contains(string(sum), r.DashboardURL) && !strings.Contains(string(sum), "/#/reports/"+strconv.FormatInt(r.ID, 10)) {
			t.Errorf("job summary lacks report %d:\n%s", r.ID, sum)
		}
	}
}

// eval fills in the ${{ }} expressions the action uses: inputs.NAME and
// the github context; any other expression fails the test.
func eval(t *testing.T, s string, inputs, github map[string]string) string {
	t.Helper()
	return expr.ReplaceAllStringFunc(s, func(m string) string {
		name := expr.FindStringSubmatch(m)[1]
		if in, ok := strings.CutPrefix(name, "inputs."); ok && inputs != nil {
			if v, ok := inputs[in]; ok {
				return v
			}
		}
		if v, ok := github[name]; ok {
			return v
		}
		t.Fatalf("expression %q is not known to this test", m)
		return ""
	})
}
