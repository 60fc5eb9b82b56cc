package daemon

import (
	"net"
	"testing"
)

func TestOpenURL(t *testing.T) {
	for _, tt := range []struct {
		addr   net.Addr
		public string
		want   string
	}{
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}, "", "http://127.0.0.1:8080/"},
		{&net.TCPAddr{IP: net.IPv4zero, Port: 8080}, "", "http://127.0.0.1:8080/"},
		{&net.TCPAddr{IP: net.IPv6unspecified, Port: 8080}, "", "http://127.0.0.1:8080/"},
		{&net.TCPAddr{IP: net.IPv6loopback, Port: 8080}, "", "http://[::1]:8080/"},
		{&net.TCPAddr{IP: net.ParseIP("192.0.2.7"), Port: 80}, "", "http://192.0.2.7:80/"},
		{&net.TCPAddr{IP: net.IPv4zero, Port: 8080}, "https://reports.example.com", "https://reports.example.com/"},
		{&net.UnixAddr{Name: "/run/reportd.sock", Net: "unix"}, "", ""},
	} {
		if got := openURL(tt.addr, tt.public); got != tt.want {
			t.Errorf("openURL(%v, %q) = %q, want %q", tt.addr, tt.public, got, tt.want)
		}
	}
}
