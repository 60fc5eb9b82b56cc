package watch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/exitcode"
)

func TestSiteOf(t *testing.T) {
	root := "/w"
	flat := &options{sites: true}
	byProject := &options{sites: true, projectFromDir: true}
	for _, c := range []struct {
		o    *options
		path string
		want string
	}{
		{flat, "/w", ""},
		{flat, "/w/loose.html", "/w/loose.html"}, // the caller checks it is a folder
		{flat, "/w/cov", "/w/cov"},
		{flat, "/w/cov/index.html", "/w/cov"},
		{flat, "/w/cov/a/b/c.js", "/w/cov"},
		{flat, "/elsewhere/cov", ""},
		{byProject, "/w/web", ""},
		{byProject, "/w/web/cov", "/w/web/cov"},
		{byProject, "/w/web/cov/x/index.html", "/w/web/cov"},
	} {
		got, ok := c.o.siteOf(root, c.path)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("siteOf(%s, projectFromDir=%v) = %q %v, want %q", c.path, c.o.projectFromDir, got, ok, c.want)
		}
	}
}

func TestSiteStatSeesEveryChange(t *testing.T) {
	dir := t.TempDir()
	site := filepath.Join(dir, "cov")
	write(t, filepath.Join(site, "index.html"), "<h1>x</h1>")
	write(t, filepath.Join(site, "sub", "a.css"), "a{}")
	fi, err := siteStat(site)
	if err != nil || !fi.IsDir() || fi.Size() != int64(len("<h1>x</h1>")+len("a{}")) {
		t.Fatalf("siteStat: %+v %v", fi, err)
	}
	old := time.Now().Add(-time.Hour)
	setAll := func() {
		filepath.WalkDir(site, func(p string, _ os.DirEntry, _ error) error { return os.Chtimes(p, old, old) })
	}
	setAll()
	base, _ := siteStat(site)
	for name, change := range map[string]func(){
		"write":  func() { write(t, filepath.Join(site, "sub", "a.css"), "b{}") },
		"add":    func() { write(t, filepath.Join(site, "sub", "deep", "new.js"), "") },
		"remove": func() { os.Remove(filepath.Join(site, "sub", "a.css")) },
		"rename": func() { os.Rename(filepath.Join(site, "sub", "a.css"), filepath.Join(site, "sub", "b.css")) },
	} {
		t.Run(name, func(t *testing.T) {
			os.RemoveAll(site)
			write(t, filepath.Join(site, "index.html"), "<h1>x</h1>")
			write(t, filepath.Join(site, "sub", "a.css"), "a{}")
			setAll()
			before, _ := siteStat(site)
			if statOf(before) != statOf(base) {
				t.Fatal("the same tree has another fingerprint")
			}
			change()
			after, err := siteStat(site)
			if err != nil || statOf(after) == statOf(before) {
				t.Fatalf("%s went unnoticed: %v", name, err)
			}
		})
	}
}

func TestSiteFlags(t *testing.T) {
	dir := t.TempDir()
	parse := func(args ...string) (*options, error) {
		cmd := NewCommand(Deps{})
		if err := cmd.ParseFlags(args); err != nil {
			return nil, err
		}
		var f flags
		f.project, f.settle, f.maxWait, f.initialScan, f.jobs, f.maxAttempts = "1", time.Second, time.Minute, "publish", 1, 1
		f.retryMin, f.retryMax, f.state = time.Second, time.Minute, filepath.Join(dir, "s.db")
		f.sites, _ = cmd.Flags().GetBool("sites")
		f.marker, _ = cmd.Flags().GetString("marker")
		return f.parse([]string{dir}, false)
	}
	o, err := parse("--marker", ".done")
	if err != nil || !o.sites || !o.recursive || o.marker != ".done" {
		t.Fatalf("--marker implies --sites and watching below: %+v %v", o, err)
	}
	for _, bad := range []string{"a/.done", "..", `x\y`} {
		if _, err := parse("--marker", bad); err == nil || !strings.Contains(err.Error(), "--marker") {
			t.Errorf("--marker %q: %v", bad, err)
		}
	}
}

// A folder the zip refuses (a link leading outside) is a rejection, set
// aside after --max-attempts, with the path in the error; nothing is sent.
func TestSiteWithOutsideLinkIsRefused(t *testing.T) {
	t.Parallel()
	svc := newClient(t, shared.URL())
	project := newProject(t, svc)
	dir, state := t.TempDir(), filepath.Join(t.TempDir(), "state.db")
	write(t, filepath.Join(dir, "cov", "index.html"), "<h1>x</h1>")
	link := filepath.Join(dir, "cov", "secret.html")
	if err := os.Symlink("/etc/hostname", link); err != nil {
		t.Fatal(err)
	}
	err, ev := runOnce(t, shared.URL(), watchArgs(dir, state, project, "--sites", "--max-attempts", "1")...)
	if exitcode.Of(err) != exitcode.Failed || ev.count(evFailed) != 1 {
		t.Fatalf("exit %d (%v), want %d\n%s", exitcode.Of(err), err, exitcode.Failed, ev)
	}
	for _, e := range ev.all() {
		if e.Event == evFailed && (!strings.Contains(e.Error, link) || !strings.Contains(e.Error, "leads outside")) {
			t.Errorf("the failure does not name the link: %+v", e)
		}
	}
	if got := reports(t, svc, project); len(got) != 0 {
		t.Fatalf("something was published: %v", got)
	}
	// Given up on: the next run leaves the unchanged folder alone.
	if err, ev := runOnce(t, shared.URL(), watchArgs(dir, state, project, "--sites", "--max-attempts", "1")...); err != nil || ev.count(evFailed) != 0 {
		t.Fatalf("second run: %v\n%s", err, ev)
	}
}
