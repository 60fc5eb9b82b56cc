package service

import (
	"net"
	"net/netip"
)

// Cover downloads may reach only global unicast addresses. An address is
// first unwrapped from every form that carries an IPv4 address inside
// IPv6, then checked against the IANA special-purpose registries
// (iana-ipv4-special-registry, iana-ipv6-special-registry) plus multicast,
// the reserved 240/4 and, for IPv6, everything outside 2000::/3.

// specialV4 lists IPv4 ranges that are not globally reachable unicast.
var specialV4 = prefixes(
	"0.0.0.0/8",          // "this network"
	"10.0.0.0/8",         // private
	"100.64.0.0/10",      // shared address space (carrier-grade NAT)
	"127.0.0.0/8",        // loopback
	"169.254.0.0/16",     // link-local
	"172.16.0.0/12",      // private
	"192.0.0.0/24",       // IETF protocol assignments (incl. 192.0.0.8, DS-Lite)
	"192.0.2.0/24",       // documentation TEST-NET-1
	"192.88.99.0/24",     // deprecated 6to4 relay anycast
	"192.168.0.0/16",     // private
	"198.18.0.0/15",      // benchmarking
	"198.51.100.0/24",    // documentation TEST-NET-2
	"203.0.113.0/24",     // documentation TEST-NET-3
	"224.0.0.0/4",        // multicast
	"240.0.0.0/4",        // reserved, incl. 255.255.255.255 broadcast
	"255.255.255.255/32", // limited broadcast (inside 240/4; listed for the reader)
)

// specialV6 lists IPv6 ranges that are not globally reachable unicast and
// carry no IPv4 address worth unwrapping.
var specialV6 = prefixes(
	"::/128",         // unspecified
	"::1/128",        // loopback
	"64:ff9b:1::/48", // local-use IPv4/IPv6 translation
	"100::/64",       // discard-only
	"2001::/23",      // IETF protocol assignments, incl. Teredo 2001::/32
	"2001:db8::/32",  // documentation
	"3fff::/20",      // documentation
	"5f00::/16",      // segment routing SIDs
	"fc00::/7",       // unique local
	"fe80::/10",      // link-local
	"fec0::/10",      // deprecated site-local
	"ff00::/8",       // multicast
)

var (
	globalV6  = netip.MustParsePrefix("2000::/3")
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
	compatV4  = netip.MustParsePrefix("::/96") // IPv4-compatible ::a.b.c.d (deprecated)
)

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// embeddedV4 returns the IPv4 address an IPv6 address stands for, if it is
// one of the forms that route to it: IPv4-mapped ::ffff:a.b.c.d,
// IPv4-compatible ::a.b.c.d, NAT64 64:ff9b::a.b.c.d and 6to4 2002:AABB:CCDD::.
func embeddedV4(a netip.Addr) (netip.Addr, bool) {
	b := a.As16()
	switch {
	case a.Is4In6():
		return a.Unmap(), true
	case compatV4.Contains(a), nat64.Contains(a):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return a, false
}

// globalUnicast reports whether a is an address cover downloads may dial.
func globalUnicast(a netip.Addr) bool {
	a = a.WithZone("")
	if !a.IsValid() {
		return false
	}
	if a.Is6() {
		if v4, ok := embeddedV4(a); ok {
			a = v4
		}
	}
	if a.Is4() {
		return !inAny(specialV4, a)
	}
	return globalV6.Contains(a) && !inAny(specialV6, a)
}

func inAny(ps []netip.Prefix, a netip.Addr) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// publicIP is the default cover-download policy: global unicast only.
func publicIP(ip net.IP) bool {
	a, ok := netip.AddrFromSlice(ip)
	return ok && globalUnicast(a)
}

func anyIP(net.IP) bool { return true }
