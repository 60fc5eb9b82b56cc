package daemon

import (
	"fmt"
	"log/slog"
	"net"

	"github.com/coreos/go-systemd/v22/activation"
)

// listen returns the socket systemd passed (socket activation, LISTEN_FDS)
// or else binds addr. The LISTEN_* variables are cleared so that converter
// child processes do not think the socket is theirs.
func listen(addr string, log *slog.Logger) (net.Listener, error) {
	lns, err := activation.Listeners()
	if err != nil {
		return nil, fmt.Errorf("socket activation: %w", err)
	}
	if len(lns) == 0 {
		return net.Listen("tcp", addr)
	}
	for _, extra := range lns[1:] {
		if extra != nil {
			log.Warn("socket activation passed more than one socket; using the first", "ignored", extra.Addr())
			extra.Close()
		}
	}
	if lns[0] == nil {
		return nil, fmt.Errorf("socket activation: the passed file descriptor is not a listening socket")
	}
	log.Info("using the socket passed by systemd", "addr", lns[0].Addr())
	return lns[0], nil
}
