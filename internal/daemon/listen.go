package daemon

import (
	"fmt"
	"log/slog"
	"net"

	"github.com/coreos/go-systemd/v22/activation"
)

// listen returns the sockets systemd passed (socket activation,
// LISTEN_FDS) or else binds addr. The first passed socket is the API's;
// a second one, if passed, is the content origin's (content, else nil:
// the content origin binds content.addr itself). The LISTEN_* variables
// are cleared so that converter child processes do not think the sockets
// are theirs.
func listen(addr string, log *slog.Logger) (api, content net.Listener, err error) {
	lns, err := activation.Listeners()
	if err != nil {
		return nil, nil, fmt.Errorf("socket activation: %w", err)
	}
	if len(lns) == 0 {
		api, err = net.Listen("tcp", addr)
		return api, nil, err
	}
	for _, extra := range lns[min(2, len(lns)):] {
		if extra != nil {
			log.Warn("socket activation passed more than two sockets; using the first (API) and the second (content origin)", "ignored", extra.Addr())
			extra.Close()
		}
	}
	for _, l := range lns[:min(2, len(lns))] {
		if l == nil {
			for _, o := range lns[:min(2, len(lns))] {
				if o != nil {
					o.Close()
				}
			}
			return nil, nil, fmt.Errorf("socket activation: a passed file descriptor is not a listening socket")
		}
	}
	log.Info("using the socket passed by systemd", "addr", lns[0].Addr())
	if len(lns) > 1 {
		log.Info("using the second socket passed by systemd for the content origin", "addr", lns[1].Addr())
		return lns[0], lns[1], nil
	}
	return lns[0], nil, nil
}
