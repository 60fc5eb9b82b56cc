package testserver

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

// Each DSN is its own empty database on one loopback server.
func TestFreshDatabases(t *testing.T) {
	ctx := context.Background()
	a, b := DSN(t), DSN(t)
	if a == b {
		t.Fatalf("the same database twice: %s", a)
	}
	s, _ := PG()
	t.Logf("PostgreSQL %s on 127.0.0.1:%d, started in %v", s.Version, s.Port, s.Startup)
	ca, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer ca.Close(ctx)
	if _, err := ca.Exec(ctx, "CREATE TABLE x (id int)"); err != nil {
		t.Fatal(err)
	}
	cb, err := pgx.Connect(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close(ctx)
	var n int
	if err := cb.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE tablename = 'x'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("the second database sees the first's table: %d %v", n, err)
	}
	var addr string
	if err := ca.QueryRow(ctx, "SELECT current_setting('listen_addresses')").Scan(&addr); err != nil || addr != "127.0.0.1" {
		t.Fatalf("listen_addresses = %q %v", addr, err)
	}
}
