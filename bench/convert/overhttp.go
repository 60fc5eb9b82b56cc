package main

// The over-HTTP figure of issue 24 part 3: a real reportd (default settings,
// bbolt) gets small documents uploaded, then the first GET
// /api/reports/{id}/pdf of each, one after another, after 3 warm-ups; the
// same documents go to Gotenberg (built from source) through its HTML route
// and its Markdown route (an index.html wrapper), in interleaved rounds.
// reportd's debug log gives each job's stages: the wait for a page, the
// Markdown render child, the document's load and first layout ("load"), the
// print, the read of the PDF, and, for pages made meanwhile, the renderer
// start (context + target) and its warm document.
//
//	go build -o /tmp/reportd ./cmd/reportd
//	go run ./bench/convert -http /tmp/reportd [-gotenberg /tmp/gotenberg] [-rounds 3] [-n 15]

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/reportd/reportd/bench/internal/benchkit"
)

const warmups = 3

// server is one side of the comparison.
type server struct {
	name string
	url  string
	cmd  *exec.Cmd
	log  string // reportd's stderr (JSON lines), for the stages
}

func overHTTP(reportdBin, gotenbergBin, keepLog string, rounds, n int, settle, gap time.Duration, types []string) error {
	work, done, err := benchkit.WorkDir("", "reportd-pdfhttp-")
	if err != nil {
		return err
	}
	defer done()
	rd, err := startServer("reportd", reportdBin, []string{"serve"}, []string{
		"REPORTD_DATA_DIR=" + filepath.Join(work, "data"), "REPORTD_CONTENT_ADDR=127.0.0.1:0",
		"REPORTD_LOG_LEVEL=debug", "REPORTD_LOG_FORMAT=json",
	}, "REPORTD_ADDR=127.0.0.1:%s", work)
	if err != nil {
		return err
	}
	defer benchkit.Stop(rd.cmd)
	project, err := benchkit.CreateProject(context.Background(), rd.url, "pdfhttp")
	if err != nil {
		return err
	}
	var gb *server
	if gotenbergBin != "" {
		if gb, err = startGotenberg(gotenbergBin, work); err != nil {
			return err
		}
		defer benchkit.Stop(gb.cmd)
	}

	// A running server, not one starting: reportd warms its engines and
	// makes its spare pages after start-up, Gotenberg starts Chromium.
	benchkit.Logf("settling %s after start-up", settle)
	time.Sleep(settle)

	var rows []string
	stageAll := map[string][]time.Duration{}
	seq := 0
	for r := range rounds {
		res := map[string]time.Duration{}
		sides := []*server{rd}
		if gb != nil {
			sides = append(sides, gb)
			if r%2 == 1 {
				sides[0], sides[1] = sides[1], sides[0]
			}
		}
		for _, s := range sides {
			for _, typ := range types {
				docs := make([][]byte, warmups+n)
				for i := range docs {
					seq++
					docs[i] = smallDoc(typ, seq)
				}
				var lat []time.Duration
				var off int64
				if s == rd {
					lat, off, err = reportdBatch(rd, project, typ, docs, gap)
				} else {
					time.Sleep(gap)
					lat, err = gotenbergBatch(s, typ, docs)
				}
				if err != nil {
					return fmt.Errorf("%s %s: %w", s.name, typ, err)
				}
				slices.Sort(lat)
				res[s.name+" "+typ] = benchkit.Pct(lat, 50)
				benchkit.Logf("round %d %s %s: p50 %s p95 %s (load %s)", r+1, s.name, typ,
					ms(benchkit.Pct(lat, 50)), ms(benchkit.Pct(lat, 95)), loadavg())
				if s == rd {
					st, err := stages(rd.log, off)
					if err != nil {
						return err
					}
					for k, v := range st {
						stageAll[typ+" "+k] = append(stageAll[typ+" "+k], v...)
					}
				}
			}
		}
		row := fmt.Sprintf("| %d (%s) | %s | %s |", r+1, loadavg(), ms(res["reportd html"]), ms(res["reportd md"]))
		if gb != nil {
			row += fmt.Sprintf(" %s | %s | %.2fx | %.2fx |", ms(res["gotenberg html"]), ms(res["gotenberg md"]),
				float64(res["gotenberg html"])/float64(res["reportd html"]), float64(res["gotenberg md"])/float64(res["reportd md"]))
		}
		rows = append(rows, row)
	}
	fmt.Printf("\nFirst GET /pdf of %d fresh small documents per type, one after another after %d warm-ups, the servers settled %s after start-up and %s before each burst; p50 per round (1-min load at the round's end):\n\n", n, warmups, settle, gap)
	head := "| round (load) | reportd html | reportd md |"
	sep := "|---|---|---|"
	if gb != nil {
		head += " gotenberg html | gotenberg md | html ratio | md ratio |"
		sep += "---|---|---|---|"
	}
	fmt.Println(head)
	fmt.Println(sep)
	for _, r := range rows {
		fmt.Println(r)
	}
	if keepLog != "" {
		if b, err := os.ReadFile(rd.log); err == nil {
			os.WriteFile(keepLog, b, 0o644)
		}
	}
	fmt.Printf("\nreportd stages over all rounds, p50 / p90 (n = samples):\n\n| stage | html | md |\n|---|---|---|\n")
	for _, k := range stageNames {
		fmt.Printf("| %s | %s | %s |\n", k, stageCell(stageAll["html "+k]), stageCell(stageAll["md "+k]))
	}
	return nil
}

var stageNames = []string{"whole conversion (Manager.convert)", "wait for a page", "markdown render", "load (document in, first layout)", "print", "read", "page made meanwhile: context+target (renderer start)", "page made meanwhile: warm document"}

func stageCell(v []time.Duration) string {
	if len(v) == 0 {
		return "–"
	}
	slices.Sort(v)
	return fmt.Sprintf("%s / %s (n=%d)", ms(benchkit.Pct(v, 50)), ms(benchkit.Pct(v, 90)), len(v))
}

// stages reads reportd's JSON log from offset off on: the measured jobs'
// lines (the warm-ups' lines come before off).
func stages(path string, off int64) (map[string][]time.Duration, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return nil, err
	}
	out := map[string][]time.Duration{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l map[string]any
		if json.Unmarshal(sc.Bytes(), &l) != nil {
			continue
		}
		d := func(k string) time.Duration { v, _ := l[k].(float64); return time.Duration(v) }
		add := func(stage int, k string) { out[stageNames[stage]] = append(out[stageNames[stage]], d(k)) }
		switch l["msg"] {
		case "PDF converted":
			add(0, "took")
		case "chromium take":
			add(1, "wait")
		case "markdown render":
			add(2, "took")
		case "chromium print":
			add(3, "load")
			add(4, "print")
			add(5, "read")
		case "chromium page":
			add(6, "target")
			add(7, "load")
		}
	}
	return out, sc.Err()
}

// reportdBatch uploads docs, then GETs each one's PDF in turn; it returns
// the latencies after the warm-ups and the log offset where they start.
func reportdBatch(s *server, project, typ string, docs [][]byte, gap time.Duration) ([]time.Duration, int64, error) {
	ids := make([]string, len(docs))
	for i, d := range docs {
		id, err := upload(s.url, project, typ, d)
		if err != nil {
			return nil, 0, err
		}
		ids[i] = id
	}
	time.Sleep(gap)
	var lat []time.Duration
	var off int64
	for i, id := range ids {
		if i == warmups {
			time.Sleep(200 * time.Millisecond) // the warm-ups' log lines are written
			st, err := os.Stat(s.log)
			if err != nil {
				return nil, 0, err
			}
			off = st.Size()
		}
		t0 := time.Now()
		if err := fetchPDF(http.MethodGet, s.url+"/api/reports/"+id+"/pdf", nil, ""); err != nil {
			return nil, 0, err
		}
		if i >= warmups {
			lat = append(lat, time.Since(t0))
		}
	}
	return lat, off, nil
}

// gotenbergBatch converts docs one after another; Markdown goes through
// the markdown route with an index.html wrapper.
func gotenbergBatch(s *server, typ string, docs [][]byte) ([]time.Duration, error) {
	var lat []time.Duration
	for i, d := range docs {
		var b bytes.Buffer
		w := multipart.NewWriter(&b)
		route := "/forms/chromium/convert/html"
		if typ == "md" {
			route = "/forms/chromium/convert/markdown"
			fw, _ := w.CreateFormFile("files", "index.html")
			fw.Write([]byte(`<!doctype html><html><head><meta charset="utf-8"></head><body>{{ toHTML "report.md" }}</body></html>`))
			fw, _ = w.CreateFormFile("files", "report.md")
			fw.Write(d)
		} else {
			fw, _ := w.CreateFormFile("files", "index.html")
			fw.Write(d)
		}
		w.Close()
		t0 := time.Now()
		if err := fetchPDF(http.MethodPost, s.url+route, &b, w.FormDataContentType()); err != nil {
			return nil, err
		}
		if i >= warmups {
			lat = append(lat, time.Since(t0))
		}
	}
	return lat, nil
}

func fetchPDF(method, url string, body io.Reader, ct string) error {
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		return err
	}
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var head [5]byte
	n, _ := io.ReadFull(resp.Body, head[:])
	rest, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || string(head[:n]) != "%PDF-" {
		return fmt.Errorf("%s %s: %s %s", method, url, resp.Status, bytes.TrimSpace(append(head[:n], rest...)))
	}
	return nil
}

func upload(api, project, typ string, doc []byte) (string, error) {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	w.WriteField("projectId", project)
	w.WriteField("fileType", typ)
	fw, _ := w.CreateFormFile("file", "report."+typ)
	fw.Write(doc)
	w.Close()
	resp, err := http.Post(api+"/api/reports", w.FormDataContentType(), &b)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var r struct{ ID int64 }
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || resp.StatusCode != http.StatusCreated {
		return "", fmt.Errorf("upload: %s %v", resp.Status, err)
	}
	return strconv.FormatInt(r.ID, 10), nil
}

// smallDoc is document seq of a type: a one-page report (headings, text
// with accents and CJK, a table, for Markdown a code block), distinct per
// seq so each is a fresh conversion.
func smallDoc(typ string, seq int) []byte {
	if typ == "md" {
		return fmt.Appendf(nil, "# Build %d summary\n\nIntro paragraph with **bold text**, _emphasis_, ~~struck~~ words and a link to https://example.org.\nAccents: Café résumé; CJK: 你好世界.\n\n## Figures\n\n| Region | Revenue | Growth |\n|--------|--------:|:------:|\n| North  | %d |  +4 %%  |\n| South  |     980 |  -2 %%  |\n\n- [x] collect data\n- [ ] write conclusions\n\n```go\nfunc main() {\n\tfmt.Println(\"build %d\")\n}\n```\n\nA claim with a footnote.[^1]\n\n[^1]: The footnote text.\n", seq, 1000+seq, seq)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<!DOCTYPE html><html><head><meta charset="utf-8"><title>Build %d</title><style>
body{font-family:"Liberation Sans",sans-serif;margin:2em} h1{border-bottom:2px solid #333}
table{border-collapse:collapse} td,th{border:1px solid #999;padding:4px 8px}</style></head><body>
<h1>Build %d — Café 你好</h1><p>%s</p><table><tr><th>Suite</th><th>Passed</th><th>Failed</th></tr>`, seq, seq,
		strings.Repeat("Lorem ipsum dolor sit amet, résumé, 数据分析. ", 6))
	for i := range 8 {
		fmt.Fprintf(&b, "<tr><td>suite %d</td><td>%d</td><td>%d</td></tr>", i, seq*7+i, i%3)
	}
	b.WriteString("</table></body></html>")
	return []byte(b.String())
}

// startServer runs bin on a free loopback port (addrEnv formats it into the
// environment) and waits until it listens; stderr goes to a file in work.
func startServer(name, bin string, args, env []string, addrEnv, work string) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	if addrEnv != "" {
		cmd.Env = append(cmd.Env, fmt.Sprintf(addrEnv, port))
	} else {
		cmd.Args = append(cmd.Args, "--api-port", port)
	}
	logPath := filepath.Join(work, name+".log")
	lf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd.Stderr, cmd.Stdout = lf, lf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	lf.Close() // the server holds its own copy
	if err != nil {
		return nil, err
	}
	s := &server{name: name, url: "http://127.0.0.1:" + port, cmd: cmd, log: logPath}
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", "127.0.0.1:"+port); err == nil {
			c.Close()
			return s, nil
		}
		if time.Now().After(deadline) {
			benchkit.Stop(cmd)
			return nil, fmt.Errorf("%s did not listen on %s (log: %s)", name, port, logPath)
		}
	}
}

// startGotenberg runs Gotenberg with Debian's Chromium, its LibreOffice and
// PDF-engine routes off (their binaries are named only to pass its checks;
// the Chromium routes use none of them).
func startGotenberg(bin, work string) (*server, error) {
	shell, err := exec.LookPath("chromium-headless-shell")
	if err != nil {
		return nil, err
	}
	soffice, _ := exec.LookPath("soffice")
	hyph := filepath.Join(work, "hyphen")
	os.MkdirAll(hyph, 0o755)
	env := []string{"CHROMIUM_BIN_PATH=" + shell, "CHROMIUM_HYPHEN_DATA_DIR_PATH=" + hyph,
		"LIBREOFFICE_BIN_PATH=" + soffice, "UNOCONVERTER_BIN_PATH=/bin/true", "PDFTK_BIN_PATH=/bin/true",
		"QPDF_BIN_PATH=/bin/true", "PDFCPU_BIN_PATH=/bin/true", "EXIFTOOL_BIN_PATH=/bin/true"}
	return startServer("gotenberg", bin, []string{"--libreoffice-disable-routes", "--pdfengines-disable-routes",
		"--chromium-auto-start", "--log-level", "error"}, env, "", work)
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port), nil
}
