package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/reportd/reportd/internal/testbin"
	"github.com/reportd/reportd/internal/testserver"
)

type bench struct {
	bin, work string
	sz        sizes
	pg        *testserver.PGServer
	s3        *testserver.S3Server
	daemons   []*testbin.Daemon
	client    *http.Client
	res       results
}

// start runs `reportd serve` with env (storage and its keys), an empty
// config file and a warn-level log, and waits for it to answer.
func (b *bench) start(dataDir string, env ...string) (*testbin.Daemon, error) {
	logFile, err := os.OpenFile(filepath.Join(b.work, "reportd.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	d, err := testbin.Start(b.bin, testbin.Options{DataDir: dataDir, Env: append([]string{"REPORTD_LOG_LEVEL=warn", "REPORTD_DASHBOARD=false"}, env...),
		Log: logFile, Wait: 2 * time.Minute})
	if err != nil {
		return nil, err
	}
	b.daemons = append(b.daemons, d)
	if b.client == nil {
		b.client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 128, DisableCompression: true,
			WriteBufferSize: 256 << 10, ReadBufferSize: 64 << 10}}
	}
	return d, nil
}

func (b *bench) stopAll() {
	for _, d := range b.daemons {
		d.Stop()
	}
	b.daemons = nil
}

func pgEnv(dsn string) []string {
	return []string{"REPORTD_STORAGE=postgres", "REPORTD_POSTGRES_DSN=" + dsn}
}

func (b *bench) s3Env(ctx context.Context, dsn string) ([]string, error) {
	c, err := b.s3.CreateBucket(ctx)
	if err != nil {
		return nil, err
	}
	return []string{"REPORTD_STORAGE=postgres+s3", "REPORTD_POSTGRES_DSN=" + dsn,
		"REPORTD_S3_ENDPOINT=" + c.Endpoint, "REPORTD_S3_BUCKET=" + c.Bucket, "REPORTD_S3_ACCESS_KEY=" + c.AccessKey,
		"REPORTD_S3_SECRET_KEY=" + c.SecretKey, "REPORTD_S3_TLS=false"}, nil
}
