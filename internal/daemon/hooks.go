package daemon

import (
	"context"
	"errors"

	"github.com/reportd/reportd/internal/boltstore"
	"github.com/reportd/reportd/internal/content"
	"github.com/reportd/reportd/internal/httpapi"
	"github.com/reportd/reportd/internal/ops"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/service"
)

// Hooks let an in-process test (internal/apitest) adjust what Open wires
// from Config; reportd itself leaves them zero.
type Hooks struct {
	// Service and HTTP edit the settings mapped from Config, for what no
	// configuration key reaches (a dial filter, a JSON body limit).
	Service func(*service.Config)
	HTTP    func(*httpapi.Config)
	// NoEngines leaves Chromium and LibreOffice out: PDFs pass through and
	// other types answer ConversionError.
	NoEngines bool
	// Sites, if set, is what the content origin serves instead of the
	// service (a test's sites over a real store).
	Sites content.Sites
}

// Service is the service Open wired (nil before Open).
func (m *Server) Service() *service.Service { return m.svc }

// Store is the bbolt store Open opened (nil before Open, and with
// storage: postgres; see MetaStore).
func (m *Server) Store() *boltstore.Store {
	s, _ := m.store.(*boltstore.Store)
	return s
}

// MetaStore is the metadata store Open opened, bbolt or PostgreSQL (nil
// before Open).
func (m *Server) MetaStore() report.MetaStore { return m.store }

// CheckIdle runs `reportd check`'s comparison (rows vs files, orphans,
// counter and index drift) on the open stores, without repair. Only for
// tests, while no request is in flight: an upload between its rename
// and its commit would look like an orphan.
func (m *Server) CheckIdle(ctx context.Context) (CheckReport, error) {
	meta := metaBackendOf(&m.Config)
	if meta.shared { // others may write: ops.Check would leave young orphans out
		return CheckReport{}, errors.New("CheckIdle: storage: bolt only (reportd check itself works on postgres too)")
	}
	return ops.Check(ctx, checkStores(meta, m.store, m.blobs, m.files), false)
}
