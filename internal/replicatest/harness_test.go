package replicatest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/blob/s3store"
	"github.com/reportd/reportd/internal/testbin"
	"github.com/reportd/reportd/internal/testfixture"
	"github.com/reportd/reportd/internal/testserver"
)

// waitLong bounds every poll: generous for a loaded 2-core machine, never
// asserted as a duration.
const waitLong = 120 * time.Second

var bins = testbin.NewLazy("reportd-replicas-", "reportd")

func TestMain(m *testing.M) {
	code := testserver.Run(m)
	bins.Remove()
	os.Exit(code)
}

// cluster is one database and one bucket that replicas share.
type cluster struct {
	t          *testing.T
	env        []string       // storage: postgres+s3 on them
	bucket     *s3store.Store // the same bucket and prefix, for the test's own looks
	bucketName string
}

const prefix = "rd/"

func newCluster(t *testing.T) *cluster {
	t.Helper()
	b := testserver.Bucket(t)
	st, err := s3store.New(s3store.Config{Endpoint: b.Endpoint, Bucket: b.Bucket, AccessKey: b.AccessKey,
		SecretKey: b.SecretKey, Region: "us-east-1", Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	return &cluster{t: t, bucket: st, bucketName: b.Bucket, env: []string{
		"REPORTD_STORAGE=postgres+s3",
		"REPORTD_POSTGRES_DSN=" + testserver.DSN(t),
		"REPORTD_S3_ENDPOINT=" + b.Endpoint,
		"REPORTD_S3_BUCKET=" + b.Bucket,
		"REPORTD_S3_ACCESS_KEY=" + b.AccessKey,
		"REPORTD_S3_SECRET_KEY=" + b.SecretKey,
		"REPORTD_S3_TLS=false",
		"REPORTD_S3_PREFIX=" + prefix,
		"REPORTD_DASHBOARD=false",
	}}
}

// start runs a replica with its own data directory (dir, or a new one);
// env adds to the cluster's settings.
func (c *cluster) start(dir string, env ...string) *testbin.Daemon {
	c.t.Helper()
	if dir == "" {
		dir = c.t.TempDir()
	}
	return testbin.StartT(c.t, bins.Path(c.t, "reportd"), testbin.Options{DataDir: dir,
		Env: append(append([]string{}, c.env...), env...), Wait: waitLong})
}

// keys lists the bucket's objects under p (without the store's prefix).
func (c *cluster) keys(p string) map[string]blob.Info {
	c.t.Helper()
	out := map[string]blob.Info{}
	err := c.bucket.Walk(context.Background(), p, func(i blob.Info) error { out[i.Key] = i; return nil })
	if err != nil {
		c.t.Fatal(err)
	}
	return out
}

// proxy is a round-robin reverse proxy on loopback in front of backends,
// as a load balancer would be.
func proxy(t *testing.T, backends ...*testbin.Daemon) *httptest.Server {
	var n atomic.Uint64
	var rps []*httputil.ReverseProxy
	for _, b := range backends {
		u, err := url.Parse(b.URL())
		if err != nil {
			t.Fatal(err)
		}
		rps = append(rps, &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(u) // the backend's own Host, which its allow-list takes
			r.SetXForwarded()
		}})
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rps[n.Add(1)%uint64(len(rps))].ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

var client = &http.Client{Timeout: waitLong}

type project struct {
	ID              int64  `json:"id"`
	Name            string `json:"name"`
	ReportCount     int    `json:"reportCount"`
	TodayNewReports int    `json:"todayNewReports"`
}

type reportJSON struct {
	ID       int64  `json:"id"`
	FilePath string `json:"filePath"`
	FileName string `json:"fileName"`
}

func createProject(t *testing.T, base, name string) project {
	t.Helper()
	resp, err := client.Post(base+"/api/projects", "application/json", strings.NewReader(`{"name":"`+name+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p project
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("create project: %s %v", resp.Status, err)
	}
	return p
}

func uploadBody(projectID int64, name string, content []byte) (string, *bytes.Buffer) {
	return testfixture.UploadBody(projectID, "html", name, content, nil)
}

// upload posts an html report; errors are returned, not fatal (goroutines).
func upload(base string, projectID int64, name string, content []byte) (reportJSON, error) {
	ct, body := uploadBody(projectID, name, content)
	resp, err := client.Post(base+"/api/reports", ct, body)
	if err != nil {
		return reportJSON{}, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated {
		return reportJSON{}, fmt.Errorf("upload %s: %s %s", name, resp.Status, b)
	}
	var r reportJSON
	return r, json.Unmarshal(b, &r)
}

func get(t *testing.T, u string) []byte {
	t.Helper()
	resp, err := client.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %v %.300s", u, resp.Status, err, b)
	}
	return b
}

func projectsOf(t *testing.T, base string) map[int64]project {
	t.Helper()
	var ps []project
	if err := json.Unmarshal(get(t, base+"/api/projects"), &ps); err != nil {
		t.Fatal(err)
	}
	out := map[int64]project{}
	for _, p := range ps {
		out[p.ID] = p
	}
	return out
}

// counter sums the samples of metric whose labels contain every one of
// labels in the /metrics text of d.
func counter(t *testing.T, d *testbin.Daemon, metric string, labels ...string) float64 {
	t.Helper()
	var sum float64
	for line := range strings.SplitSeq(string(get(t, d.URL()+"/metrics")), "\n") {
		name, rest, ok := strings.Cut(line, "{")
		if !ok || name != metric {
			continue
		}
		lbls, val, _ := strings.Cut(rest, "} ")
		match := true
		for _, l := range labels {
			match = match && strings.Contains(lbls, l)
		}
		if !match {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil {
			t.Fatalf("metric line %q: %v", line, err)
		}
		sum += v
	}
	return sum
}

// eventually polls cond every 100ms until it holds or waitLong passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLong)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
