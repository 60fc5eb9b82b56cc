package main

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// cliRounds is how many times reportctl publishes the site folder, each
// next to tar xzf of the same files' .tar.gz.
const cliRounds = 3

// cliRound is one `reportctl upload DIR`: wall time end to end (client and
// server on this machine) and the client's CPU time (user + system).
type cliRound struct {
	TarX, Publish, ClientCPU time.Duration
}

type cliResult struct {
	Files, SmallFiles int
	Rounds            []cliRound
	Small             []cliRound // the 200-file report
	// Changed are rounds publishing a copy of the site with every file
	// changed (no file is stored already), beside tar xzf of its own
	// .tar.gz: the same-site rounds let the daemon skip the files it holds.
	Changed []cliRound
	// Background is the daemon's work after the reply to one more
	// publish of a changed copy, kept (its precompressed variants): wall
	// time until its CPU time stops growing, and that CPU time.
	Background, BackgroundCPU time.Duration
}

// publishCLI measures `reportctl upload DIR` of the site folder against
// `tar xzf` of its archive into an empty folder on the same disk, on a
// store that already holds one earlier site (the report the sites phase
// left), and the publish of a 200-file report made of the same site's
// assets and first pages. Each new report is deleted after its round.
func (b *bench) publishCLI(ctx context.Context, ctl, tree, archive string, project int64) (*cliResult, error) {
	files, _, err := treeSize(tree)
	if err != nil {
		return nil, err
	}
	small := filepath.Join(b.work, "small-report")
	n, err := copySubset(tree, small, 200)
	if err != nil {
		return nil, err
	}
	res := &cliResult{Files: files, SmallFiles: n}
	for round := range cliRounds {
		r, err := b.pairedRound(ctx, ctl, archive, tree, project, fmt.Sprintf("round %d", round+1))
		if err != nil {
			return nil, err
		}
		res.Rounds = append(res.Rounds, r)
		s, err := b.reportctlUpload(ctx, ctl, small, project)
		if err != nil {
			return nil, err
		}
		logf("reportctl upload of a %d-file report round %d: %v (client CPU %v)", n, round+1, s.Publish.Round(time.Millisecond), s.ClientCPU.Round(time.Millisecond))
		res.Small = append(res.Small, s)
	}
	for round := range cliRounds {
		changed := filepath.Join(b.work, "changed", "htmlcov")
		tgz := filepath.Join(b.work, "changed.tar.gz")
		if err := changedCopy(tree, changed, round); err != nil {
			return nil, err
		}
		if out, err := exec.CommandContext(ctx, "tar", "czf", tgz, "-C", filepath.Dir(changed), "htmlcov").CombinedOutput(); err != nil {
			return nil, fmt.Errorf("tar czf: %v: %s", err, out)
		}
		r, err := b.pairedRound(ctx, ctl, tgz, changed, project, fmt.Sprintf("every file changed, round %d", round+1))
		if err != nil {
			return nil, err
		}
		res.Changed = append(res.Changed, r)
	}
	res.Background, res.BackgroundCPU, err = b.backgroundAfter(ctx, ctl, tree, project)
	return res, err
}

// pairedRound waits for the daemon to settle, then times tar xzf of
// archive and reportctl upload of dir (the same files) one after the other.
func (b *bench) pairedRound(ctx context.Context, ctl, archive, dir string, project int64, label string) (cliRound, error) {
	if _, err := settled(filepath.Join(b.dataDir, "uploads")); err != nil {
		return cliRound{}, err
	}
	x, _, err := tarX(ctx, archive, filepath.Join(b.work, "untar"))
	if err != nil {
		return cliRound{}, err
	}
	r, err := b.reportctlUpload(ctx, ctl, dir, project)
	if err != nil {
		return cliRound{}, err
	}
	r.TarX = x
	logf("reportctl upload DIR, %s: tar xzf %v, publish %v (client CPU %v): %.2fx", label,
		x.Round(time.Millisecond), r.Publish.Round(time.Millisecond), r.ClientCPU.Round(time.Millisecond), float64(r.Publish)/float64(x))
	return r, nil
}

// backgroundAfter publishes a changed copy of tree, keeps it, and measures
// the daemon's work after the reply (the site's precompressed variants):
// the time until its CPU time stops growing for a second, and that CPU.
func (b *bench) backgroundAfter(ctx context.Context, ctl, tree string, project int64) (wall, cpu time.Duration, err error) {
	changed := filepath.Join(b.work, "changed", "htmlcov")
	if err := changedCopy(tree, changed, cliRounds); err != nil {
		return 0, 0, err
	}
	if _, err := settled(filepath.Join(b.dataDir, "uploads")); err != nil {
		return 0, 0, err
	}
	cmd := exec.CommandContext(ctx, ctl, "upload", changed, "--project", strconv.FormatInt(project, 10),
		"--server", b.base, "--no-ci-metadata", "--json")
	if out, err := cmd.CombinedOutput(); err != nil {
		return 0, 0, fmt.Errorf("reportctl upload %s: %v: %s", changed, err, out)
	}
	t0 := time.Now()
	c0, err := procCPU(b.cmd.Process.Pid)
	if err != nil {
		return 0, 0, err
	}
	last, lastAt := c0, t0
	for deadline := t0.Add(5 * time.Minute); time.Now().Before(deadline); {
		time.Sleep(250 * time.Millisecond)
		c, err := procCPU(b.cmd.Process.Pid)
		if err != nil {
			return 0, 0, err
		}
		if c != last {
			last, lastAt = c, time.Now()
		} else if time.Since(lastAt) >= time.Second {
			break
		}
	}
	logf("after the reply to a changed copy, kept: the daemon worked %v (%v of CPU)", lastAt.Sub(t0).Round(time.Millisecond), (last - c0).Round(time.Millisecond))
	return lastAt.Sub(t0), last - c0, nil
}

// procCPU is process pid's user + system time (/proc/<pid>/stat).
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The fields after the command (in parentheses): utime and stime
	// are the 12th and 13th, in clock ticks (100 a second on Linux).
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %q", pid, b)
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %q", pid, b)
	}
	return time.Duration(u+s) * 10 * time.Millisecond, nil
}

// changedCopy copies tree to dst with every file changed (a comment line
// naming the round appended; JSON left as it is, so it still parses).
func changedCopy(tree, dst string, round int) error {
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	return filepath.WalkDir(tree, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(tree, p)
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if !strings.HasSuffix(p, ".json") {
			data = fmt.Appendf(data, "\n<!-- changed in round %d -->\n", round+1)
		}
		return os.WriteFile(out, data, 0o644)
	})
}

// reportctlUpload publishes dir with reportctl, deletes the report it made
// and returns the timings.
func (b *bench) reportctlUpload(ctx context.Context, ctl, dir string, project int64) (cliRound, error) {
	cmd := exec.CommandContext(ctx, ctl, "upload", dir, "--project", strconv.FormatInt(project, 10),
		"--server", b.base, "--no-ci-metadata", "--json")
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	t0 := time.Now()
	out, err := cmd.Output()
	took := time.Since(t0)
	if err != nil {
		return cliRound{}, fmt.Errorf("reportctl upload %s: %v: %s", dir, err, out)
	}
	r := cliRound{Publish: took, ClientCPU: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}
	id := jsonID(out)
	if id == "" {
		return r, fmt.Errorf("reportctl upload %s: no id in %s", dir, out)
	}
	return r, b.delete(ctx, "/api/reports/"+id)
}

// jsonID finds the first "id": value in reportctl's --json output.
func jsonID(out []byte) string {
	s := string(out)
	i := strings.Index(s, `"id":`)
	if i < 0 {
		return ""
	}
	s = strings.TrimLeft(s[i+5:], " ")
	j := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	if j <= 0 {
		return ""
	}
	return s[:j]
}

// copySubset copies the site's shared files (everything that is not a
// per-module page) and its first module pages into dst, n files in all.
func copySubset(tree, dst string, n int) (int, error) {
	if err := os.RemoveAll(dst); err != nil {
		return 0, err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return 0, err
	}
	entries, err := os.ReadDir(tree)
	if err != nil {
		return 0, err
	}
	var pages, shared []string
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		if strings.HasSuffix(e.Name(), "_py.html") {
			pages = append(pages, e.Name())
		} else {
			shared = append(shared, e.Name())
		}
	}
	sort.Strings(pages)
	names := append(shared, pages[:max(0, min(len(pages), n-len(shared)))]...)
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(tree, name))
		if err != nil {
			return 0, err
		}
		if err := os.WriteFile(filepath.Join(dst, name), data, 0o644); err != nil {
			return 0, err
		}
	}
	return len(names), nil
}

func (r *results) publishTable(b *strings.Builder, verdict func(bool, string, ...any)) {
	c := r.CLI
	if c == nil || len(c.Rounds) == 0 {
		return
	}
	fmt.Fprintf(b, "### reportctl upload DIR (the same coverage.py site)\n\n`reportctl upload htmlcov --project ID` end to end (client and server on this machine, the store already holding one earlier site), "+
		"next to `tar xzf` of the same files' .tar.gz into an empty folder on the same disk; client CPU is reportctl's user + system time. "+
		"Each round's report is deleted before the next.\n\n")
	b.WriteString("| Round | tar xzf | reportctl upload DIR | ratio | client CPU | 200-file report | its client CPU |\n|---|---|---|---|---|---|---|\n")
	var worstCPU time.Duration
	var ratios []float64
	var smalls []time.Duration
	for i, rd := range c.Rounds {
		s := c.Small[i]
		ratio := float64(rd.Publish) / float64(rd.TarX)
		ratios = append(ratios, ratio)
		smalls = append(smalls, s.Publish)
		worstCPU = max(worstCPU, rd.ClientCPU)
		fmt.Fprintf(b, "| %d | %s ms | %s ms | %.2fx | %s ms | %s ms | %s ms |\n", i+1, ms(rd.TarX), ms(rd.Publish), ratio, ms(rd.ClientCPU), ms(s.Publish), ms(s.ClientCPU))
	}
	b.WriteString("\n")
	var changed []float64
	if len(c.Changed) > 0 {
		b.WriteString("Every file changed (a copy of the site with a line appended to each file, so the daemon holds none of them), next to `tar xzf` of that copy's own .tar.gz:\n\n")
		b.WriteString("| Round | tar xzf | reportctl upload DIR | ratio | client CPU |\n|---|---|---|---|---|\n")
		for i, rd := range c.Changed {
			ratio := float64(rd.Publish) / float64(rd.TarX)
			changed = append(changed, ratio)
			worstCPU = max(worstCPU, rd.ClientCPU)
			fmt.Fprintf(b, "| %d | %s ms | %s ms | %.2fx | %s ms |\n", i+1, ms(rd.TarX), ms(rd.Publish), ratio, ms(rd.ClientCPU))
		}
		b.WriteString("\n")
	}
	if c.Background > 0 {
		fmt.Fprintf(b, "After the reply to one more changed copy, kept: the daemon worked %s ms more (%s ms of CPU: the site's precompressed variants).\n\n", ms(c.Background), ms(c.BackgroundCPU))
	}
	sort.Float64s(ratios)
	sort.Slice(smalls, func(i, j int) bool { return smalls[i] < smalls[j] })
	med := ratios[len(ratios)/2]
	verdict(med <= 2, "reportctl upload DIR of %s files <= 2x tar xzf (median of rounds %.2fx)", thousands(c.Files), med)
	if len(changed) > 0 {
		sort.Float64s(changed)
		verdict(changed[len(changed)/2] <= 2, "the same with every file changed <= 2x tar xzf (median of rounds %.2fx)", changed[len(changed)/2])
	}
	verdict(worstCPU <= 1500*time.Millisecond, "reportctl CPU <= 1.5 s for the site (worst round %s ms)", ms(worstCPU))
	verdict(smalls[len(smalls)/2] <= 500*time.Millisecond, "publishing a %d-file report <= 0.5 s (median %s ms)", c.SmallFiles, ms(smalls[len(smalls)/2]))
}
