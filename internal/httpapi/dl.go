package httpapi

import (
	_ "embed"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/reportd/reportd/internal/report"
)

// reportctl from the server it talks to (issue 23), like Concourse's fly:
//
//	GET /dl/reportctl/{os}-{arch}       the bare binary (windows-amd64.exe)
//	GET /dl/checksums.txt               SHA-256 of those binaries
//	GET /dl/install.sh                  a script that fetches, verifies and installs one
//
// The files come from clients.dir (Config.ClientsDir), built with the
// server by scripts/dist.sh (the .deb puts them in /usr/share/reportd/clients)
// or scripts/run.sh (./bin/clients), so their version is the server's.

// ClientTargets are the platforms reportctl is built for, as named in
// /dl/reportctl/{target}; the file in clients.dir is "reportctl-" + target.
var ClientTargets = []string{"linux-amd64", "linux-arm64", "darwin-amd64", "darwin-arm64", "windows-amd64.exe"}

//go:embed dl/install.sh
var installScript string

// dlNotFound is a /dl answer for a file that is not there: 404 in either
// status mode (these are downloads, not the API; `curl -f` must stop).
func dlNotFound(format string, args ...any) error {
	return fixedStatus{report.Errorf(report.NotFound, format, args...), http.StatusNotFound}
}

// fixedStatus gives an error its status in both status modes.
type fixedStatus struct {
	error
	status int
}

func (e fixedStatus) Unwrap() error { return e.error }

// clientsDir opens clients.dir, or says how to provide it.
func (s *Server) clientsDir() (*os.Root, error) {
	const how = "reportctl downloads are not set up on this server: set clients.dir (REPORTD_CLIENTS_DIR) to a folder of reportctl-<os>-<arch> binaries and their checksums.txt (the reportd .deb installs them in /usr/share/reportd/clients; scripts/dist.sh builds them into dist/clients)"
	if s.cfg.ClientsDir == "" {
		return nil, dlNotFound("%s", how)
	}
	root, err := os.OpenRoot(s.cfg.ClientsDir)
	if err != nil {
		return nil, dlNotFound("%s; %s is missing", how, s.cfg.ClientsDir)
	}
	return root, nil
}

// serveClientFile sends one file of clients.dir.
func (s *Server) serveClientFile(w http.ResponseWriter, r *http.Request, name, contentType, disposition string) error {
	root, err := s.clientsDir()
	if err != nil {
		return err
	}
	defer root.Close()
	f, err := root.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return dlNotFound("%s is not in clients.dir (%s) on this server", name, s.cfg.ClientsDir)
	}
	if err != nil {
		return report.Wrap(report.Storage, err, "opening a client download")
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return dlNotFound("%s is not in clients.dir (%s) on this server", name, s.cfg.ClientsDir)
	}
	w.Header().Set("Content-Type", contentType)
	if disposition != "" {
		w.Header().Set("Content-Disposition", disposition)
	}
	w.Header().Set("Cache-Control", "no-cache") // a new server version brings new files under the same names
	http.ServeContent(w, r, "", st.ModTime(), f)
	return nil
}

func (s *Server) dlClient(w http.ResponseWriter, r *http.Request) error {
	target := r.PathValue("target")
	for _, t := range ClientTargets {
		if t == target {
			file := "reportctl"
			if strings.HasSuffix(t, ".exe") {
				file += ".exe"
			}
			return s.serveClientFile(w, r, "reportctl-"+t, "application/octet-stream", `attachment; filename="`+file+`"`)
		}
	}
	return dlNotFound("no reportctl for %q: there are %s", target, strings.Join(ClientTargets, ", "))
}

func (s *Server) dlChecksums(w http.ResponseWriter, r *http.Request) error {
	return s.serveClientFile(w, r, "checksums.txt", "text/plain; charset=utf-8", "")
}

// dlInstall serves install.sh with this server's URL filled in. It needs
// no clients.dir of its own: the script reports a missing binary itself.
func (s *Server) dlInstall(w http.ResponseWriter, r *http.Request) error {
	body := strings.Replace(installScript, "@SERVER@", shellQuote(s.dashboardBase(r)), 1)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, "", time.Time{}, strings.NewReader(body))
	return nil
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
