package daemon

import (
	"net"
	"strconv"
	"strings"
)

// openURL is the address a person can open in a browser to reach this
// daemon: public_url when it is set (the name users know it by), else the
// bound address, with a wildcard host (0.0.0.0, ::) replaced by loopback,
// which is the one name that surely reaches it from this machine. It is ""
// for a listener that is not TCP (a Unix socket passed by systemd).
func openURL(addr net.Addr, publicURL string) string {
	if publicURL != "" {
		return strings.TrimSuffix(publicURL, "/") + "/"
	}
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return ""
	}
	host := tcp.IP.String()
	if tcp.IP == nil || tcp.IP.IsUnspecified() {
		// Go listens on both stacks for 0.0.0.0 and [::] alike.
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, strconv.Itoa(tcp.Port)) + "/"
}
