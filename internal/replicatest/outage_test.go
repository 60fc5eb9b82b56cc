package replicatest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/testbin"
	"github.com/reportd/reportd/internal/testserver"
)

// answer is one response, body read.
type answer struct {
	status int
	header http.Header
	body   []byte
}

func (a answer) String() string { return fmt.Sprintf("%d %.300s", a.status, a.body) }

func call(t *testing.T, method, u, ctype string, body io.Reader) answer {
	t.Helper()
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, b}
}

// unavailable: the API's answer to an outage in the conventional mode.
func unavailable(a answer, what string) bool {
	return a.status == http.StatusServiceUnavailable && a.header.Get("Retry-After") != "" &&
		bytes.Contains(a.body, []byte(`"type":"ServiceUnavailableError"`)) && bytes.Contains(a.body, []byte(what))
}

type readyz struct {
	Status       string
	Type         string
	Dependencies []struct {
		Name, Kind string
		Up         bool
		Error      string
	}
}

// readiness reads d's /readyz (engines excluded: this is about storage).
func readiness(t *testing.T, d *testbin.Daemon) (int, readyz) {
	t.Helper()
	a := call(t, "GET", d.URL()+"/readyz?exclude=chromium,office", "", nil)
	var r readyz
	if err := json.Unmarshal(a.body, &r); err != nil {
		t.Fatalf("readyz: %v %s", err, a)
	}
	return a.status, r
}

func depUp(r readyz, name string) bool {
	for _, d := range r.Dependencies {
		if d.Name == name {
			return d.Up
		}
	}
	return false
}

// TestOutagesUnderReplicas stops PostgreSQL, then the S3 server, under two
// replicas: while each is down /readyz names it (503), the API answers
// ServiceUnavailableError with 503 and Retry-After, /livez stays 200 and
// reportd_dependency_up drops to 0; no replica exits; after each comes
// back the replicas serve again and nothing stored before is lost.
func TestOutagesUnderReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own PostgreSQL and versitygw and two replicas")
	}
	pg, dsn := testserver.OwnPG(t)
	s3, err := testserver.StartS3()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s3.Stop() })
	b, err := s3.CreateBucket(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{t: t, bucketName: b.Bucket, env: []string{
		"REPORTD_STORAGE=postgres+s3",
		"REPORTD_POSTGRES_DSN=" + dsn,
		"REPORTD_S3_ENDPOINT=" + b.Endpoint,
		"REPORTD_S3_BUCKET=" + b.Bucket,
		"REPORTD_S3_ACCESS_KEY=" + b.AccessKey,
		"REPORTD_S3_SECRET_KEY=" + b.SecretKey,
		"REPORTD_S3_TLS=false",
		"REPORTD_DASHBOARD=false",
		"REPORTD_ERROR_STATUS=conventional",
	}}
	r1, r2 := c.start(""), c.start("")
	lb := proxy(t, r1, r2)
	p := createProject(t, lb.URL, "outages")
	before := htmlReport("before", 4<<10)
	rep, err := upload(lb.URL, p.ID, "before.html", before)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []*testbin.Daemon{r1, r2} {
		if st, r := readiness(t, d); st != 200 || r.Status != "ready" || !depUp(r, "store") || !depUp(r, "bucket") {
			t.Fatalf("readyz before the outages: %d %+v", st, r)
		}
	}

	for _, o := range []struct {
		dep, kind, what string
		down            func()
		up              func() error
		probe           func() answer // an API call the outage fails
	}{
		{"store", "postgres", "PostgreSQL", pg.Down, pg.Up, func() answer {
			return call(t, "GET", lb.URL+"/api/projects", "", nil)
		}},
		{"bucket", "s3", "S3 bucket", s3.Down, s3.Up, func() answer {
			return call(t, "GET", fmt.Sprintf("%s/api/reports/%d/download", lb.URL, rep.ID), "", nil)
		}},
	} {
		o.down()
		for _, d := range []*testbin.Daemon{r1, r2} {
			eventually(t, o.dep+" down in /readyz of "+d.Addr, func() bool {
				st, r := readiness(t, d)
				return st == 503 && r.Status == "unavailable" && r.Type == "ServiceUnavailableError" && !depUp(r, o.dep)
			})
			if v := counter(t, d, "reportd_dependency_up", `dependency="`+o.dep+`"`); v != 0 {
				t.Errorf("reportd_dependency_up{%s} = %v during the outage", o.dep, v)
			}
			if a := call(t, "GET", d.URL()+"/livez", "", nil); a.status != 200 {
				t.Errorf("livez during the %s outage: %s", o.what, a)
			}
		}
		if a := o.probe(); !unavailable(a, o.what) {
			t.Errorf("%s down: the API answered %s, want 503 ServiceUnavailableError naming %s", o.what, a, o.what)
		}
		ct, body := uploadBody(p.ID, "during.html", htmlReport("during", 1<<10))
		if a := call(t, "POST", lb.URL+"/api/reports", ct, body); !unavailable(a, o.what) {
			t.Errorf("%s down: upload answered %s", o.what, a)
		}
		for _, d := range []*testbin.Daemon{r1, r2} {
			select {
			case <-d.Done():
				t.Fatalf("replica %s exited during the %s outage:\n%s", d.Addr, o.what, d.Log())
			default:
			}
		}

		if err := o.up(); err != nil {
			t.Fatal(err)
		}
		for _, d := range []*testbin.Daemon{r1, r2} {
			eventually(t, o.dep+" up again in /readyz of "+d.Addr, func() bool {
				st, r := readiness(t, d)
				return st == 200 && depUp(r, o.dep)
			})
			if v := counter(t, d, "reportd_dependency_up", `dependency="`+o.dep+`"`); v != 1 {
				t.Errorf("reportd_dependency_up{%s} = %v after recovery", o.dep, v)
			}
		}
		// Served again: the file from before byte-exact, a new upload taken.
		eventually(t, "the API serves after the "+o.what+" outage", func() bool {
			a := call(t, "GET", fmt.Sprintf("%s/api/reports/%d/download", lb.URL, rep.ID), "", nil)
			return a.status == 200 && bytes.Equal(a.body, before)
		})
		if _, err := upload(lb.URL, p.ID, "after-"+o.dep+".html", htmlReport("after", 1<<10)); err != nil {
			t.Errorf("upload after the %s outage: %v", o.what, err)
		}
	}
	var list []reportJSON
	if err := json.Unmarshal(get(t, fmt.Sprintf("%s/api/reports?projectId=%d", lb.URL, p.ID)), &list); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range list {
		names = append(names, r.FileName)
	}
	if got := strings.Join(names, ","); got != "before.html,after-store.html,after-bucket.html" {
		t.Errorf("reports after both outages: %s (nothing refused may be stored, nothing acknowledged lost)", got)
	}
}
