package detect

import (
	"bufio"
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"html"
	"io"
	"math"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/reportd/reportd/internal/report"
)

// goCoverResults reads per-file statement coverage from the first Go
// coverage profile of the site (as `go tool cover -func` counts it:
// covered statements over statements, blocks listed twice merged).
func goCoverResults(files []string, open Opener, r *report.Results) {
	tried := 0
	for _, f := range files {
		if !isProfileName(f) || tried == siteProfiles {
			continue
		}
		tried++
		rc, ok := openLimited(open, f, resultsJSONLimit)
		if !ok {
			continue
		}
		got := profileFiles(rc)
		rc.Close()
		if len(got) > 0 {
			for _, fc := range got {
				r.AddFile(fc)
			}
			return
		}
	}
}

func profileFiles(rd io.Reader) []report.FileCoverage {
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	if !sc.Scan() || !strings.HasPrefix(sc.Text(), "mode: ") {
		return nil
	}
	type block struct{ stmts, count int64 }
	blocks := map[string]map[string]block{}
	for sc.Scan() {
		line := sc.Text()
		colon := strings.LastIndexByte(line, ':')
		if colon < 0 {
			continue
		}
		f := strings.Fields(line[colon+1:])
		if len(f) != 3 {
			return nil
		}
		stmts, err1 := strconv.ParseInt(f[1], 10, 64)
		count, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil || stmts < 0 {
			return nil
		}
		name := line[:colon]
		if blocks[name] == nil {
			blocks[name] = map[string]block{}
		}
		b := blocks[name][f[0]]
		b.stmts, b.count = stmts, max(b.count, count)
		blocks[name][f[0]] = b
	}
	names := make([]string, 0, len(blocks))
	for n := range blocks {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []report.FileCoverage
	for _, n := range names {
		var total, covered int64
		for _, b := range blocks[n] {
			total += b.stmts
			if b.count > 0 {
				covered += b.stmts
			}
		}
		if total > 0 {
			out = append(out, report.FileCoverage{Path: n, Lines: pct(covered, total)})
		}
	}
	return out
}

func pct(covered, total int64) float64 {
	return math.Round(float64(covered)/float64(total)*10000) / 100
}

// coveragePyResults reads htmlcov/status.json: files.*.index with
// relative_filename and nums [precision, n_files, n_statements,
// n_excluded, n_missing, …] (coverage.py 5 and later).
func coveragePyResults(files []string, open Opener, r *report.Results) {
	for _, f := range files {
		if path.Base(f) != "status.json" {
			continue
		}
		rc, ok := openLimited(open, f, resultsJSONLimit)
		if !ok {
			continue
		}
		var v struct {
			Files map[string]struct {
				Index struct {
					RelativeFilename string    `json:"relative_filename"`
					Nums             []float64 `json:"nums"`
				} `json:"index"`
			} `json:"files"`
		}
		// A large project's status.json is megabytes (~200 bytes a
		// file): the v2 decoder reads it in one pass, about twice as
		// fast as encoding/json's scan then decode.
		err := jsonv2.UnmarshalRead(rc, &v, lenientJSON)
		rc.Close()
		if err != nil || len(v.Files) == 0 {
			continue
		}
		var got []report.FileCoverage
		for _, e := range v.Files {
			n := e.Index.Nums
			if e.Index.RelativeFilename == "" || len(n) < 5 || n[2] <= 0 || n[4] < 0 || n[4] > n[2] {
				continue
			}
			got = append(got, report.FileCoverage{Path: e.Index.RelativeFilename, Lines: pct(int64(n[2]-n[4]), int64(n[2]))})
		}
		sort.Slice(got, func(i, j int) bool { return got[i].Path < got[j].Path })
		for _, fc := range got {
			r.AddFile(fc)
		}
		return
	}
}

// istanbul's html reporter (nyc, c8, jest) writes an index.html per
// folder whose rows are
//
//	<td class="file high" data-value="math.js"><a href="math.js.html">math.js</a></td>
//	… four <td data-value="66.66" class="pct medium"> (statements, branches, functions, lines)
//
// A row linking a folder's index.html is a folder; the others are files,
// whose path is the folder of the page + data-value. At most
// istanbulPages index pages are read.
var (
	istanbulRow = regexp.MustCompile(`(?s)<td class="file[^"]*" data-value="([^"]*)"><a href="([^"]*)">.*?</tr>`)
	istanbulPct = regexp.MustCompile(`<td data-value="([0-9.]+)" class="pct`)
)

const istanbulPages = 256

func istanbulResults(files []string, open Opener, r *report.Results) {
	var got []report.FileCoverage
	pages := 0
	for _, f := range files {
		if path.Base(f) != "index.html" || pages == istanbulPages {
			continue
		}
		pages++
		t, ok := readHead(open, f, Limit)
		if !ok || !isIstanbul(t) {
			continue
		}
		dir := path.Dir(f)
		for _, m := range istanbulRow.FindAllStringSubmatch(t, -1) {
			if strings.HasSuffix(m[2], "index.html") {
				continue
			}
			p := istanbulPct.FindAllStringSubmatch(m[0], -1)
			if len(p) < 4 {
				continue
			}
			lines, err := strconv.ParseFloat(p[3][1], 64)
			if err != nil || lines < 0 || lines > 100 {
				continue
			}
			name := html.UnescapeString(m[1])
			if dir != "." {
				name = dir + "/" + name
			}
			got = append(got, report.FileCoverage{Path: name, Lines: lines})
		}
	}
	sort.Slice(got, func(i, j int) bool { return got[i].Path < got[j].Path })
	for _, fc := range got {
		r.AddFile(fc)
	}
}

// lenientJSON reads generators' JSON as encoding/json would: invalid UTF-8
// replaced and a repeated name's last value kept, not refused.
var lenientJSON = jsonv2.JoinOptions(jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
