package config

import (
	"fmt"
	"net/netip"
	"net/url"
	"strings"
)

// validateExposure checks the keys that decide who can reach the daemon.
func (c *Config) validateExposure() error {
	if c.PublicURL != "" {
		u, err := url.Parse(c.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("public_url must be an http(s) URL such as https://reports.example.com, not %q", c.PublicURL)
		}
	}
	for _, h := range c.AllowedHosts {
		if h = strings.TrimSpace(h); h == "" || strings.ContainsAny(h, "/ \t@") {
			return fmt.Errorf("allowed_hosts: %q is not a host name (want e.g. reports.example.com, *.example.com or *)", h)
		}
	}
	if c.UploadMinRate > 0 && c.UploadRateGrace <= 0 {
		return fmt.Errorf("upload_rate_grace must be positive when upload_min_rate is set (every body starts at 0 bytes/s)")
	}
	if c.UploadIdleTimeout < 0 || c.UploadRateGrace < 0 {
		return fmt.Errorf("upload_idle_timeout and upload_rate_grace must not be negative")
	}
	if c.MaxConnections < 0 {
		return fmt.Errorf("max_connections must be 0 (no cap) or more, not %d", c.MaxConnections)
	}
	return c.validateGuard()
}

// validateGuard checks the connection and response-pacing keys.
func (c *Config) validateGuard() error {
	if c.DownloadMinRate > 0 && c.DownloadRateGrace <= 0 {
		return fmt.Errorf("download_rate_grace must be positive when download_min_rate is set (every response starts at 0 bytes/s)")
	}
	if c.DownloadRateGrace < 0 || c.DownloadIdleTimeout < 0 || c.WriteTimeout < 0 {
		return fmt.Errorf("download_rate_grace, download_idle_timeout and write_timeout must not be negative")
	}
	if c.MaxConnectionsPerClient < 0 {
		return fmt.Errorf("max_connections_per_client must be 0 (no limit) or more, not %d", c.MaxConnectionsPerClient)
	}
	_, err := c.ProxyPrefixes()
	return err
}

// ProxyPrefixes parses trusted_proxies: addresses and CIDR prefixes.
func (c *Config) ProxyPrefixes() ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, w := range c.TrustedProxies {
		w = strings.TrimSpace(w)
		if w == "" {
			continue
		}
		if p, err := netip.ParsePrefix(w); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(w)
		if err != nil {
			return nil, fmt.Errorf("trusted_proxies: %q is neither an IP address nor a CIDR prefix (want e.g. 10.0.0.5 or 10.0.0.0/8)", w)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}
