package testserver

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// NginxFront is the shipped examples/content-origin/nginx.conf run by a
// real nginx on loopback (the front-cache test and bench/api): the file's
// own cache and bypass rules, with only its listen addresses, upstreams,
// certificate and cache paths replaced.
type NginxFront struct {
	Shipped string // path of the shipped nginx.conf
	Dir     string // nginx's prefix: configuration, certificate, cache, pid, logs
	// API and Content are reportd's listeners (host:port).
	API, Content string
	// Addr is where the report origins' server listens (host:port); Addr80
	// the plain-HTTP redirect server's.
	Addr, Addr80 string
	// TLS keeps `ssl http2` on Addr (with a self-signed certificate for
	// the shipped names); without it Addr speaks plain HTTP/1.1.
	TLS bool
}

// Write renders the configuration into f.Dir (nginx.conf, the main
// context, including reportd.conf, the rendered shipped file) with a
// certificate for the shipped names, and returns the main file's path and
// the certificate (PEM) to trust.
func (f NginxFront) Write() (conf string, certPEM []byte, err error) {
	shipped, err := os.ReadFile(f.Shipped)
	if err != nil {
		return "", nil, err
	}
	certPEM, err = writeSelfSigned(f.Dir, []string{"reports.example.com", "*.reports-content.example.com"})
	if err != nil {
		return "", nil, err
	}
	listen := "listen " + f.Addr + ";"
	if f.TLS {
		listen = "listen " + f.Addr + " ssl http2;"
	}
	s := string(shipped)
	for _, r := range [][2]string{
		{"127.0.0.1:8080", f.API},
		{"127.0.0.1:8081", f.Content},
		{"/var/cache/nginx/reportd-content", filepath.Join(f.Dir, "cache")},
		{"/etc/letsencrypt/live/reports.example.com/", f.Dir + "/"},
		{"/etc/letsencrypt/live/reports-content.example.com/", f.Dir + "/"},
		{"listen [::]:443 ssl http2;", ""},
		{"listen 443 ssl http2;", listen},
		{"listen [::]:80;", ""},
		{"listen 80;", "listen " + f.Addr80 + ";"},
	} {
		if !strings.Contains(s, r[0]) {
			return "", nil, fmt.Errorf("%s no longer has %q: update testserver.NginxFront's substitutions", f.Shipped, r[0])
		}
		s = strings.ReplaceAll(s, r[0], r[1])
	}
	if err := os.WriteFile(filepath.Join(f.Dir, "reportd.conf"), []byte(s), 0o644); err != nil {
		return "", nil, err
	}
	// The main context Debian's /etc/nginx/nginx.conf gives (sendfile,
	// tcp_nopush, an access log), every path in Dir; the shipped file is included as
	// conf.d/*.conf is there.
	user := ""
	if os.Geteuid() == 0 {
		user = "user root;" // workers must reach Dir (0700) when run as root
	}
	main := fmt.Sprintf(`daemon off;
master_process on;
worker_processes auto;
%s
pid %[2]s/nginx.pid;
error_log %[2]s/error.log warn;
events { worker_connections 1024; }
http {
    sendfile on;
    tcp_nopush on;
    access_log %[2]s/access.log;
    client_body_temp_path %[2]s/body;
    proxy_temp_path %[2]s/proxy;
    fastcgi_temp_path %[2]s/fastcgi;
    uwsgi_temp_path %[2]s/uwsgi;
    scgi_temp_path %[2]s/scgi;
    include %[2]s/reportd.conf;
}
`, user, f.Dir)
	conf = filepath.Join(f.Dir, "nginx.conf")
	return conf, certPEM, os.WriteFile(conf, []byte(main), 0o644)
}

// Start writes the configuration and runs nginx (bin) on it until it
// listens on f.Addr.
func (f NginxFront) Start(bin string) (*Proc, []byte, error) {
	conf, certPEM, err := f.Write()
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(bin, "-p", f.Dir, "-c", conf, "-e", filepath.Join(f.Dir, "error.log"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	p, err := Launch(cmd, filepath.Join(f.Dir, "stderr.log"))
	if err != nil {
		return nil, nil, err
	}
	if err := p.WaitReady(func(ctx context.Context) error {
		c, err := (&net.Dialer{}).DialContext(ctx, "tcp", f.Addr)
		if err == nil {
			c.Close()
		}
		return err
	}); err != nil {
		p.Stop(syscall.SIGQUIT)
		b, _ := os.ReadFile(filepath.Join(f.Dir, "error.log"))
		return nil, nil, fmt.Errorf("%v\n%s", err, b)
	}
	return p, certPEM, nil
}

// writeSelfSigned writes a self-signed certificate for names as
// fullchain.pem and privkey.pem in dir and returns the certificate (PEM).
func writeSelfSigned(dir string, names []string) ([]byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "reportd nginx front (test)"},
		DNSNames:              names,
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:                  true,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	kb, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := os.WriteFile(filepath.Join(dir, "fullchain.pem"), certPEM, 0o644); err != nil {
		return nil, err
	}
	return certPEM, os.WriteFile(filepath.Join(dir, "privkey.pem"), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb}), 0o600)
}
