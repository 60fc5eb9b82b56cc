package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/reportd/reportd/internal/exitcode"
	"github.com/reportd/reportd/internal/prfeedback"
	"github.com/reportd/reportd/internal/report"
)

type uploadOptions struct {
	f             *Factory
	patterns      []string
	projectID     int64
	projectName   string
	createProject bool
	fileType      report.FileType
	jobs          int
	dryRun        bool
	allowEmpty    bool
	json          bool
	metaFlags     metaFlags
	meta          report.BuildMeta
	ciSystem      string
	summary       string
	entry         string
	strict        bool
	feedback      feedbackFlags
}

func newUploadCmd(f *Factory) *cobra.Command {
	o := &uploadOptions{f: f}
	var project, fileType string
	cmd := &cobra.Command{
		Use:   "upload FILE|DIR|GLOB... (--project ID | --project-name NAME)",
		Short: "Upload report files and folders (sites) into a project",
		Long: `Upload report files into a project and print each report's preview,
download and PDF addresses.

A folder (DIR) is uploaded as one site: a multi-file HTML report such as
coverage.py's htmlcov/, Playwright's playwright-report/ or an Allure
report, served with its scripts running from the content origin. reportctl
streams a tar.zst of the folder's files while sending it (no temporary
file), named after the folder (htmlcov), with the folder as the site's root;
the site's URL is printed. Every regular file goes in, hidden ones too; a
symbolic link is followed only when it names a file inside the folder, and
any other link or special file is refused with its path. --entry names the
entry page (default: index.html, then well-known report names, then the
only .html file, else a generated file list).

Other arguments are files or glob patterns. Patterns are expanded by reportctl
itself, so quote them; '**' matches any number of directories
('build/**/*.html'). Glob matches keep only supported extensions
(` + report.TypeExts(" ", " ") + `); the report type comes from the extension unless
--type is given. A pattern that matches no file is an error (exit status 4) before
anything is uploaded, unless --allow-empty is given. A glob that picks HTML
pages of a report site (an index.html next to data/, static/, assets/ or
scripts, or a generator reportd recognises) gets a warning naming the
folder to upload instead, since the pages do not work apart from the rest
of the site; with --strict that is an error (exit status 2) and nothing is
uploaded.

Each report carries build metadata: --name (default: the file name without
its extension), --branch, --commit, --build-url and --build-id. Unless
--no-ci-metadata is given, branch, commit, build URL and build number come
from the CI environment (GitHub Actions, GitLab CI, Jenkins, Buildkite,
CircleCI, Azure Pipelines, Woodpecker, Drone) when not given; REPORTCTL_NAME,
REPORTCTL_BRANCH, ... override it and flags override both (see 'reportctl
help environment'). Each upload prints the report's dashboard link;
--summary FILE appends a Markdown table of them (for $GITHUB_STEP_SUMMARY or
a merge-request note).

In GitHub Actions and GitLab CI, --comment posts the figures, the change
against the request's target branch and the new failures as one comment on
the pull or merge request per report name, edited by every later upload
(found by a hidden <!-- reportd:PROJECT:NAME --> line); --status sets a
commit status. The forge's errors are warnings unless --comment=required.
Quality gates (--fail-under coverage=80, --fail-on failures|new-failures)
are checked after publishing; a failed gate exits with status 7.

Uploads are retried after connection errors and transient server errors,
re-sending each file from its start. Up to -j N files (default 32) upload at
once; results are printed in argument order. When some uploads fail the
others still complete, and the exit status is that of the first failure.`,
		Example: `  reportctl upload report.html --project 3
  reportctl upload htmlcov --project-name web --name coverage
  reportctl upload playwright-report --project 3 --entry index.html --json
  reportctl upload build/reports/allure-report build/reports/htmlcov --project-name nightly --create-project
  reportctl upload 'docs/*.md' --project-name nightly --strict -j 4
  reportctl upload 'out/**/*.pdf' --project 3 --dry-run --json
  reportctl upload coverage.html --project-name web --name coverage --summary "$GITHUB_STEP_SUMMARY"
  reportctl upload htmlcov --project-name web --name coverage --comment --status --fail-under coverage=80`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.patterns, o.json = args, wantJSON(cmd)
			fl := cmd.Flags()
			switch {
			case fl.Changed("project") && fl.Changed("project-name"):
				return usageErrorf("give --project or --project-name, not both")
			case fl.Changed("project"):
				id, err := parseID("project", project)
				if err != nil {
					return err
				}
				o.projectID = id
			case fl.Changed("project-name"):
				if strings.TrimSpace(o.projectName) == "" {
					return usageErrorf("--project-name must not be empty")
				}
			default:
				return usageErrorf("give --project ID or --project-name NAME")
			}
			if o.createProject && o.projectName == "" {
				return usageErrorf("--create-project needs --project-name")
			}
			if fileType != "" {
				t, err := report.ParseFileType(fileType)
				if err != nil {
					return usageErrorf("--type: %s", report.MessageOf(err))
				}
				o.fileType = t
			}
			if o.jobs < 1 {
				return usageErrorf("-j must be at least 1 (got %d)", o.jobs)
			}
			if err := o.feedback.parse(); err != nil {
				return err
			}
			o.meta, o.ciSystem = o.metaFlags.resolve(fl, osEnv)
			return uploadRun(cmd.Context(), o)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&project, "project", "p", "", "upload into project `ID`")
	fl.StringVar(&o.projectName, "project-name", "", "upload into the project called `NAME` (or whose slug that is, as links show it)")
	fl.BoolVar(&o.createProject, "create-project", false, "create the --project-name project when it does not exist")
	fl.StringVarP(&fileType, "type", "t", "", "report type for every file: "+report.TypeNames(", ", " or ")+" (default: from the extension)")
	fl.IntVarP(&o.jobs, "jobs", "j", 32, "upload up to `N` files in parallel (1: one after another)")
	fl.BoolVarP(&o.dryRun, "dry-run", "n", false, "show what would be uploaded; change nothing")
	fl.BoolVar(&o.allowEmpty, "allow-empty", false, "succeed when a pattern matches no file")
	fl.StringVar(&o.entry, "entry", "", "entry `PAGE` of the folders uploaded as sites, relative to the folder (default: chosen by the server: index.html, ...)")
	fl.BoolVar(&o.strict, "strict", false, "fail (exit status 2) instead of warning when a glob picks pages of a report site")
	fl.StringVar(&o.summary, "summary", "", "append a Markdown summary of the uploads to `FILE` (e.g. $GITHUB_STEP_SUMMARY)")
	o.metaFlags.register(fl)
	o.feedback.register(fl)
	o.feedback.completions(cmd)
	cmd.RegisterFlagCompletionFunc("project", completeProjectFlag(f))
	cmd.RegisterFlagCompletionFunc("type", cobra.FixedCompletions(fileTypeNames(), cobra.ShellCompDirectiveNoFileComp))
	cmd.RegisterFlagCompletionFunc("project-name", completeProjectNames(f))
	return cmd
}

func uploadRun(ctx context.Context, o *uploadOptions) error {
	ex, err := expandPatterns(o.patterns, o.fileType)
	if err != nil {
		return err
	}
	if o.entry != "" {
		if err := checkEntry(o.entry, ex.files); err != nil {
			return err
		}
	}
	if sites := globbedSites(o.patterns, ex.files); len(sites) > 0 {
		if o.strict {
			return usageErrorf("--strict: %s", sites[0])
		}
		for _, s := range sites {
			fmt.Fprintf(o.f.IO.ErrOut, "warning: %s\n", s)
		}
	}
	if ex.skipped > 0 && !o.json {
		fmt.Fprintf(o.f.IO.ErrOut, "note: skipped %d matched file(s) whose extension is not a report type\n", ex.skipped)
	}
	if len(ex.unmatched) > 0 {
		msg := fmt.Sprintf("no file matched %s", quoteList(ex.unmatched))
		if !o.allowEmpty {
			return exitcode.With(exitcode.NoMatch, errors.New(msg+" (use --allow-empty to accept this)"))
		}
		fmt.Fprintf(o.f.IO.ErrOut, "warning: %s\n", msg)
	}

	// A dry run by id needs no server at all; by name it only reads.
	var project report.Project
	if o.dryRun && o.projectID != 0 {
		project.ID = o.projectID
	} else if len(ex.files) > 0 || !o.allowEmpty {
		c, err := o.f.Client()
		if err != nil {
			return err
		}
		if project, err = resolveProject(ctx, c, o); err != nil {
			return err
		}
	}

	if o.dryRun {
		return printUploadPlan(o, ex.files, project)
	}
	if o.ciSystem != "" && !o.json {
		fmt.Fprintf(o.f.IO.ErrOut, "note: build metadata from %s%s\n", o.ciSystem, describeMeta(o.meta))
	}
	results, err := uploadFiles(ctx, o, ex.files, project)
	var unchecked []prfeedback.GateResult
	gatesPassed := true
	if o.feedback.active() && len(ex.files) > 0 {
		c, ferr := o.f.Client()
		if ferr == nil {
			unchecked, gatesPassed, ferr = giveFeedback(ctx, o, c, results)
		}
		if ferr != nil && err == nil {
			err = ferr
		}
	}
	if perr := printUploadResults(o, results); perr != nil && err == nil {
		err = perr
	}
	if o.summary != "" {
		if serr := appendSummary(o.summary, project, results, gatesMarkdown(results, unchecked)); serr != nil && err == nil {
			err = serr
		}
	}
	if err == nil && !gatesPassed {
		err = gateError(results, unchecked)
	}
	return err
}

func quoteList(ps []string) string {
	q := make([]string, len(ps))
	for i, p := range ps {
		q[i] = fmt.Sprintf("%q", p)
	}
	return strings.Join(q, ", ")
}
