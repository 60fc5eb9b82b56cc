package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/reportd/reportd/internal/boltstore"
	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/ops"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/tokens"
)

// TokenOps manages tokens for `reportd token`: in the store directly when
// no daemon holds it, else through the running daemon's /admin/tokens
// (bbolt lets one process open the file), the way `reportd backup` does.
// With storage: postgres the tokens table is shared: the command writes it
// directly and running daemons pick the change up (tokenReloadInterval).
type TokenOps struct {
	Config config.Config
	Server string // "": the address the daemon recorded, else the configured one
}

// offline runs fn on the store if no daemon holds it; ok is false when one
// does. It never creates a store (existingStore says why).
func (o TokenOps) offline(ctx context.Context, fn func(report.MetaStore, *tokens.Set) error) (ok bool, err error) {
	if o.Server != "" {
		return false, nil
	}
	if o.Config.OnPostgres() {
		return true, o.onPostgres(ctx, fn)
	}
	dbPath, err := existingStore(o.Config)
	if err != nil {
		return true, err
	}
	loc, err := o.Config.Location()
	if err != nil {
		return true, err
	}
	store, err := boltstore.OpenWait(dbPath, report.Clock{Location: loc}, 300*time.Millisecond)
	if errors.Is(err, boltstore.ErrLocked) {
		return false, nil
	}
	if err != nil {
		return true, err
	}
	defer store.Close()
	set, err := tokens.Load(store)
	if err != nil {
		return true, err
	}
	return true, fn(store, set)
}

// onPostgres runs fn on the tokens table of storage: postgres.
func (o TokenOps) onPostgres(ctx context.Context, fn func(report.MetaStore, *tokens.Set) error) error {
	if err := o.Config.ValidateStorage(); err != nil {
		return err
	}
	loc, err := o.Config.Location()
	if err != nil {
		return err
	}
	store, err := openPostgres(ctx, o.Config, report.Clock{Location: loc})
	if err != nil {
		return err
	}
	defer store.Close()
	set, err := tokens.Load(store)
	if err != nil {
		return err
	}
	return fn(store, set)
}

// online sends one request to the running daemon's admin routes with the
// admin key from the serve file and auth.token, and decodes the answer.
func (o TokenOps) online(ctx context.Context, method, path string, body, out any) error {
	server := o.Server
	if server == "" {
		server = "http://" + loopbackAddr(o.Config.Addr)
		if si, ok := readServeInfo(o.Config.DataDir); ok {
			server = si.URL
		}
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, server+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if o.Config.Auth.Token != "" {
		req.Header.Set("Authorization", "Bearer "+o.Config.Auth.Token)
	}
	if si, ok := readServeInfo(o.Config.DataDir); ok && si.AdminKey != "" {
		req.Header.Set(adminKeyHeader, si.AdminKey)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("the store is locked by a running daemon, and asking it failed: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		var e struct{ Error string }
		if json.Unmarshal(b, &e) == nil && e.Error != "" {
			return fmt.Errorf("%s%s: %s", server, path, e.Error)
		}
		return fmt.Errorf("%s%s answered %s", server, path, resp.Status)
	}
	return json.Unmarshal(b, out)
}

// Create creates a token (see tokenRequest).
func (o TokenOps) Create(ctx context.Context, req TokenRequest) (c createdToken, err error) {
	ok, err := o.offline(ctx, func(st report.MetaStore, set *tokens.Set) error {
		c, err = ops.CreateToken(ctx, st, set, req)
		return err
	})
	if !ok {
		err = o.online(ctx, http.MethodPost, adminPrefix+"tokens", req, &c)
	}
	return c, err
}

// List lists every token.
func (o TokenOps) List(ctx context.Context) (ts []tokens.Token, err error) {
	ok, err := o.offline(ctx, func(_ report.MetaStore, set *tokens.Set) error {
		ts = set.List()
		return nil
	})
	if !ok {
		err = o.online(ctx, http.MethodGet, adminPrefix+"tokens", nil, &ts)
	}
	return ts, err
}

// Revoke revokes one token. Offline, the daemon's exposure is not known,
// so the last token may be revoked; the command warns.
func (o TokenOps) Revoke(ctx context.Context, id string) (t tokens.Token, err error) {
	if !tokens.ValidID(id) {
		return t, fmt.Errorf("%q is not a token id (tok_ and 16 hex digits; reportd token list shows them)", id)
	}
	ok, err := o.offline(ctx, func(_ report.MetaStore, set *tokens.Set) error {
		t, err = ops.RevokeToken(set, id, false)
		return err
	})
	if !ok {
		err = o.online(ctx, http.MethodDelete, adminPrefix+"tokens/"+id, nil, &t)
	}
	return t, err
}
