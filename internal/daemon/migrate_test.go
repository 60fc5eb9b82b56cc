package daemon

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/files"
	"github.com/reportd/reportd/internal/testfixture"
	"github.com/reportd/reportd/internal/tokens"
)

// boltDeployment is a bbolt deployment made through a real daemon's API:
// two projects (one with a cover, a description and a retention policy),
// reports of several types with build metadata and recognised generators,
// one deleted report, tokens, and report-site objects (cas/, sites/) in
// its file store. It returns what a client saw, and the token secrets.
type boltDeployment struct {
	dir     string
	answers map[string][]byte // API path -> body (JSON with the base URL replaced)
	paths   []string
	secrets map[string]string // token name -> secret
	lastID  int64             // the deleted report: the highest id handed out
	objects map[string][]byte // the site objects put into the store
}

func makeBoltDeployment(t *testing.T) *boltDeployment {
	t.Helper()
	d := &boltDeployment{dir: t.TempDir(), answers: map[string][]byte{}, secrets: map[string]string{}, objects: map[string][]byte{}}
	s, stop := startServer(t, testConfig(t, d.dir))
	base := "http://" + s.Addr()
	send := func(method, path, ct string, body io.Reader) []byte {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, body)
		req.Header.Set("Content-Type", ct)
		resp, err := httpClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode/100 != 2 {
			t.Fatalf("%s %s: %s %s", method, path, resp.Status, b)
		}
		return b
	}
	coverBody := fmt.Sprintf(`{"name":"with cover","description":"the first","coverImage":"data:image/png;base64,%s"}`,
		base64.StdEncoding.EncodeToString(testfixture.PNG()))
	send("POST", "/api/projects", "application/json", strings.NewReader(coverBody))
	p2 := createProject(t, base, "plain")
	send("PUT", "/api/projects/1/retention", "application/json", strings.NewReader(`{"keepLast":5,"maxAgeDays":90,"keepNewestPerBranch":true}`))

	fixture := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("..", "detect", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	up := func(project int64, typ, name string, content []byte, meta map[string]string) apiReport {
		ct, buf := testfixture.UploadBody(project, typ, name, content, meta)
		var r apiReport
		b := send("POST", "/api/reports", ct, buf)
		if err := jsonUnmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	up(1, "html", "index.html", fixture("coveragepy-6.5.0-index.html"), map[string]string{"name": "coverage", "branch": "main", "commit": "abc123", "buildUrl": "https://ci.example/1", "buildId": "1"})
	up(1, "html", "tests.html", fixture("pytest-html-4.html"), map[string]string{"name": "tests", "branch": "feature/x"})
	up(1, "md", "notes.md", markdown("notes", 3000), nil)
	up(p2.ID, "pdf", "doc.pdf", testfixture.MinimalPDF(), map[string]string{"commit": "def456"})
	up(p2.ID, "pptx", "deck.pptx", testfixture.FakePPTX(), nil)
	gone := up(p2.ID, "md", "gone.md", markdown("gone", 500), nil)
	send("DELETE", fmt.Sprintf("/api/reports/%d", gone.ID), "", nil)
	d.lastID = gone.ID
	send("PUT", fmt.Sprintf("/api/reports/%d", gone.ID-1), "application/json", strings.NewReader(`{"name":"renamed deck"}`))

	for name, sp := range map[string]tokens.Spec{
		"admin":  {Name: "admin", Scope: tokens.Admin},
		"upload": {Name: "upload", Scope: tokens.Upload, Projects: []int64{p2.ID}},
		"gone":   {Name: "gone", Scope: tokens.Read},
	} {
		tok, secret, err := s.Tokens().Create(sp)
		if err != nil {
			t.Fatal(err)
		}
		d.secrets[name] = secret
		if name == "gone" {
			if _, err := s.Tokens().Revoke(tok.ID); err != nil {
				t.Fatal(err)
			}
		}
	}

	d.paths = []string{"/api/projects", "/api/reports", "/api/projects/1", fmt.Sprintf("/api/projects/%d", p2.ID),
		"/api/projects/1/retention", fmt.Sprintf("/api/projects/%d/retention", p2.ID)}
	var reps []apiReport
	getJSONAuth(t, base+"/api/reports", d.secrets["admin"], &reps)
	for _, r := range reps {
		d.paths = append(d.paths, fmt.Sprintf("/api/reports/%d", r.ID), fmt.Sprintf("/api/reports/%d/download", r.ID), r.FilePath)
	}
	var p1 apiProject
	getJSONAuth(t, base+"/api/projects/1", d.secrets["admin"], &p1)
	if p1.CoverImage == nil {
		t.Fatal("no cover")
	}
	d.paths = append(d.paths, *p1.CoverImage)
	d.answers = answers(t, base, d.secrets["admin"], d.paths)
	stop()

	// Report-site objects, as internal/site stores them (not wired into
	// the API yet): whatever lives in the store must be copied.
	dir, err := files.Open(d.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	d.objects["cas/ab/abcdef0123"] = bytes.Repeat([]byte("site object "), 1000)
	d.objects["sites/1/manifest.json"] = []byte(`{"files":{"index.html":"abcdef0123"}}`)
	// Larger than a 16 MiB part: a multipart upload into the bucket.
	d.objects["cas/cd/large"] = bytes.Repeat([]byte("0123456789abcdef"), 40<<20/16)
	for k, v := range d.objects {
		if _, err := dir.Blobs().Put(context.Background(), k, bytes.NewReader(v), blob.PutOptions{Size: int64(len(v))}); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// answers GETs each path with a bearer token; base URLs in bodies are
// replaced so that two daemons' answers compare.
func answers(t *testing.T, base, token string, paths []string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, p := range paths {
		req, _ := http.NewRequest("GET", base+p, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := httpClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s %s", p, resp.Status, b)
		}
		// A siteUrl names the daemon's content port and is signed with
		// its key: only its presence is compared.
		out[p] = siteURLs.ReplaceAll(bytes.ReplaceAll(b, []byte(base), []byte("BASE")), []byte(`"siteUrl":"SITE"`))
	}
	return out
}

var siteURLs = regexp.MustCompile(`"siteUrl":"[^"]*"`)

func getJSONAuth(t *testing.T, url, token string, v any) {
	t.Helper()
	b := answers(t, strings.TrimSuffix(url, url[strings.Index(url[7:], "/")+7:]), token, []string{url[strings.Index(url[7:], "/")+7:]})
	for _, body := range b {
		if err := jsonUnmarshal(body, v); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMigrateBoltToPostgresS3: a bbolt deployment made through the API is
// migrated into PostgreSQL + versitygw; a daemon on the target answers
// every GET as the bbolt daemon did (JSON and bytes), its tokens work,
// new ids continue past every id bbolt handed out, the site objects are in
// the bucket, and `reportd check` finds the target clean. A second run
// into the now non-empty target is refused (exit 2).
func TestMigrateBoltToPostgresS3(t *testing.T) {
	src := makeBoltDeployment(t)
	c, bucket := s3Config(t, t.TempDir())
	var progress bytes.Buffer
	sum, err := Migrate(context.Background(), c, MigrateOptions{From: src.dir, Progress: &progress})
	if err != nil {
		t.Fatalf("migrate: %v\n%s", err, progress.String())
	}
	if sum.Projects != 2 || sum.Reports != 5 || sum.Tokens != 3 || sum.ObjectsCopied != sum.Objects || sum.VerifiedObject != sum.Objects ||
		sum.Objects != 5+1+3 || sum.LastReportID != src.lastID {
		t.Errorf("summary: %+v", sum)
	}
	if !strings.Contains(progress.String(), "migrate: copying 9 objects") || !strings.Contains(progress.String(), "migrate: verifying") {
		t.Errorf("progress:\n%s", progress.String())
	}
	for k, v := range src.objects {
		_, got := readObject(t, bucket, k)
		if !bytes.Equal(got, v) {
			t.Errorf("site object %s: %d bytes in the bucket", k, len(got))
		}
	}

	s, stop := startServer(t, c)
	base := "http://" + s.Addr()
	got := answers(t, base, src.secrets["admin"], src.paths)
	for _, p := range src.paths {
		if !bytes.Equal(got[p], src.answers[p]) {
			t.Errorf("GET %s differs after migrating:\n bolt     %.400s\n postgres %.400s", p, src.answers[p], got[p])
		}
	}
	// Tokens came along: an anonymous upload is refused, the upload
	// token's works, into its project only, with an id past bbolt's last.
	tokenUpload := func(token string) (int, apiReport, apiError) {
		ct, body := multipartUpload(2, "md", "new.md", markdown("new", 200))
		req, _ := http.NewRequest("POST", base+"/api/reports", body)
		req.Header.Set("Content-Type", ct)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := httpClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var r apiReport
		var e apiError
		jsonUnmarshal(b, &r)
		jsonUnmarshal(b, &e)
		return resp.StatusCode, r, e
	}
	if _, _, e := tokenUpload(""); e.Type != "UnauthorizedError" {
		t.Errorf("anonymous upload after migrating: %+v", e)
	}
	if _, _, e := tokenUpload(src.secrets["gone"]); e.Type != "UnauthorizedError" || !strings.Contains(e.Error, "revoked") {
		t.Errorf("upload with the revoked token after migrating: %+v", e)
	}
	if st, r, e := tokenUpload(src.secrets["upload"]); st != http.StatusCreated || r.ID <= src.lastID {
		t.Errorf("upload with the migrated token: %d %+v %+v (bbolt's last id %d)", st, r, e, src.lastID)
	}
	stop()

	rep, err := Check(context.Background(), c, false)
	if err != nil || !rep.Clean(false) {
		t.Errorf("check after migrating: %+v %v", rep, err)
	}
	setEnv(t, c)
	out := runCLI(t, 2, "migrate", "--from", src.dir)
	if !strings.Contains(out, "not empty") || !strings.Contains(out, "--resume") {
		t.Errorf("second migrate: %s", out)
	}
}

// TestMigrateResume: a run interrupted after the objects and projects are
// copied leaves a non-empty target; without --resume it is refused, with
// it the rest is copied, what is there is kept (an object changed in the
// meantime is copied again) and everything verifies.
func TestMigrateResume(t *testing.T) {
	src := makeBoltDeployment(t)
	c, bucket := s3Config(t, t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := Migrate(ctx, c, MigrateOptions{From: src.dir, Progress: cancelOn{"copying 5 reports", cancel}})
	if err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Fatalf("interrupted run: %v", err)
	}
	if _, err := Migrate(context.Background(), c, MigrateOptions{From: src.dir}); !errors.Is(err, errMigrateNotEmpty) {
		t.Fatalf("second run without --resume: %v", err)
	}
	// One object differs from the source now (same size): --resume must
	// not keep it.
	key := "cas/ab/abcdef0123"
	v := bytes.ToUpper(src.objects[key])
	if _, err := bucket.Put(context.Background(), key, bytes.NewReader(v), blob.PutOptions{Size: int64(len(v))}); err != nil {
		t.Fatal(err)
	}
	var progress bytes.Buffer
	sum, err := Migrate(context.Background(), c, MigrateOptions{From: src.dir, Resume: true, Progress: &progress})
	if err != nil {
		t.Fatalf("--resume: %v\n%s", err, progress.String())
	}
	if sum.ObjectsCopied != 1 || sum.ObjectsKept != sum.Objects-1 || sum.RowsKept != 2 || sum.Reports != 5 || sum.VerifiedObject != sum.Objects {
		t.Errorf("--resume summary: %+v", sum)
	}
	if _, got := readObject(t, bucket, key); !bytes.Equal(got, src.objects[key]) {
		t.Error("the changed object was kept")
	}
	// A run with everything in place copies nothing and verifies.
	sum, err = Migrate(context.Background(), c, MigrateOptions{From: src.dir, Resume: true})
	if err != nil || sum.ObjectsCopied != 0 || sum.RowsKept != 7 {
		t.Errorf("--resume on a complete target: %+v %v", sum, err)
	}
	s, _ := startServer(t, c)
	got := answers(t, "http://"+s.Addr(), src.secrets["admin"], src.paths)
	for _, p := range src.paths {
		if !bytes.Equal(got[p], src.answers[p]) {
			t.Errorf("GET %s differs after resuming:\n bolt     %.400s\n postgres %.400s", p, src.answers[p], got[p])
		}
	}
}

// cancelOn cancels when a progress line contains its text.
type cancelOn struct {
	text   string
	cancel func()
}

func (c cancelOn) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(c.text)) {
		c.cancel()
	}
	return len(p), nil
}

func readObject(t *testing.T, s blob.Store, key string) (blob.Info, []byte) {
	t.Helper()
	o, err := s.Open(context.Background(), key)
	if err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	defer o.Close()
	b, err := io.ReadAll(o)
	if err != nil {
		t.Fatal(err)
	}
	return o.Info(), b
}

// setEnv gives c's target storage to commands through the environment,
// as a unit file would.
func setEnv(t *testing.T, c config.Config) {
	for k, v := range map[string]string{
		"REPORTD_DATA_DIR": c.DataDir, "REPORTD_STORAGE": c.Storage, "REPORTD_POSTGRES_DSN": c.Postgres.DSN,
		"REPORTD_S3_ENDPOINT": c.S3.Endpoint, "REPORTD_S3_BUCKET": c.S3.Bucket, "REPORTD_S3_ACCESS_KEY": c.S3.AccessKey,
		"REPORTD_S3_SECRET_KEY": c.S3.SecretKey, "REPORTD_S3_PREFIX": c.S3.Prefix, "REPORTD_S3_TLS": fmt.Sprint(c.S3.TLS),
	} {
		t.Setenv(k, v)
	}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// TestMigrateInPlaceToPostgres: storage: postgres on the bbolt
// deployment's own data directory: the rows move to PostgreSQL, the files
// stay where they are (hashed and checked, not copied), and a daemon on
// the result answers as the bbolt daemon did.
func TestMigrateInPlaceToPostgres(t *testing.T) {
	src := makeBoltDeployment(t)
	c := postgresConfig(t, src.dir)
	setEnv(t, c)
	out := runCLI(t, 0, "migrate", "--from", src.dir)
	for _, want := range []string{"migrated into storage: postgres", "projects:   2", "reports:    5", "tokens:     3",
		"objects:    9 (", "0 copied, 9 already there; 9 verified by sha256 from the target", "migrate: verifying"} {
		if !strings.Contains(out, want) {
			t.Errorf("migrate output lacks %q:\n%s", want, out)
		}
	}
	s, _ := startServer(t, c)
	got := answers(t, "http://"+s.Addr(), src.secrets["admin"], src.paths)
	for _, p := range src.paths {
		if !bytes.Equal(got[p], src.answers[p]) {
			t.Errorf("GET %s differs after migrating in place:\n bolt     %.400s\n postgres %.400s", p, src.answers[p], got[p])
		}
	}
}

// TestMigrateRefusals: exit status 2 and nothing written when the source's
// daemon still runs, the target is not PostgreSQL, or --from is missing.
func TestMigrateRefusals(t *testing.T) {
	dir := t.TempDir()
	startServer(t, testConfig(t, dir)) // holds reportd.db
	c := postgresConfig(t, t.TempDir())
	setEnv(t, c)
	if out := runCLI(t, 2, "migrate", "--from", dir); !strings.Contains(out, "stop the bbolt daemon") {
		t.Errorf("source in use: %s", out)
	}
	if out := runCLI(t, 2, "migrate", "--from", t.TempDir()); !strings.Contains(out, "no bbolt store") {
		t.Errorf("no source: %s", out)
	}
	if out := runCLI(t, 2, "migrate"); !strings.Contains(out, "--from DATA_DIR") {
		t.Errorf("no --from: %s", out)
	}
	t.Setenv("REPORTD_STORAGE", "bolt")
	t.Setenv("REPORTD_POSTGRES_DSN", "")
	if out := runCLI(t, 2, "migrate", "--from", dir); !strings.Contains(out, "copies into storage: postgres or postgres+s3") {
		t.Errorf("bolt target: %s", out)
	}
}
