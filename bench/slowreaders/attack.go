package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// attack is the hostile clients of one phase.
type attack struct {
	wg         sync.WaitGroup
	up         atomic.Int64 // connected now
	reconnects atomic.Int64
}

// attack starts b.readers slow readers and b.trickles trickles against the
// target listener; each reconnects (after 100 ms) whenever it is dropped.
// Slow readers ask for the large file and never read; header trickles
// send a header byte a second; on the API half the trickles are body
// trickles instead (an upload sending 100 bytes a second).
func (b *bench) attack(ctx context.Context, target string) *attack {
	a := &attack{}
	addr, host, big := b.api, "localhost", b.bigAPI
	if target == "content" {
		addr, host, big = b.content, b.bigHost, b.bigPath
	}
	n := 0
	client := func(kind string) {
		i := n
		n++
		src := &net.TCPAddr{IP: net.IPv4(127, 1, byte(i/250), byte(i%250+1))}
		a.wg.Go(func() {
			// Spread the first connections over two seconds.
			select {
			case <-time.After(time.Duration(i%200) * 10 * time.Millisecond):
			case <-ctx.Done():
				return
			}
			for ctx.Err() == nil {
				if a.hold(ctx, src, addr, host, big, kind) {
					a.reconnects.Add(1)
				}
				select {
				case <-time.After(100 * time.Millisecond):
				case <-ctx.Done():
				}
			}
		})
	}
	for range b.readers {
		client("reader")
	}
	for i := range b.trickles {
		if target == "api" && i%2 == 1 {
			client("body")
		} else {
			client("header")
		}
	}
	return a
}

// hold runs one hostile connection until reportd drops it (true) or the
// phase ends (false).
func (a *attack) hold(ctx context.Context, src *net.TCPAddr, addr, host, big, kind string) bool {
	d := net.Dialer{LocalAddr: src, Timeout: 10 * time.Second}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return ctx.Err() == nil
	}
	defer c.Close()
	a.up.Add(1)
	defer a.up.Add(-1)
	var first string
	var drip []byte
	switch kind {
	case "reader":
		first = "GET " + big + " HTTP/1.1\r\nHost: " + host + "\r\n\r\n"
	case "header":
		first = "GET /api/reports/ping HTTP/1.1\r\nHost: " + host + "\r\n"
		drip = []byte("X")
	case "body":
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		mw.WriteField("fileType", "md")
		mw.CreateFormFile("file", "trickle.md")
		first = fmt.Sprintf("POST /api/reports HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n%s",
			host, mw.FormDataContentType(), 50<<20, body.String())
		drip = bytes.Repeat([]byte("x"), 100)
	}
	if _, err := io.WriteString(c, first); err != nil {
		return true
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
		if drip != nil {
			if _, err := c.Write(drip); err != nil {
				return true
			}
		}
		if closed(c) {
			return true
		}
	}
}

// closed tells, without reading, whether the server has closed or reset
// the connection (TCP_INFO's state is no longer ESTABLISHED).
func closed(c net.Conn) bool {
	rc, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		return true
	}
	state := uint8(unix.BPF_TCP_ESTABLISHED)
	rc.Control(func(fd uintptr) {
		if info, err := unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO); err == nil {
			state = info.State
		}
	})
	return state != unix.BPF_TCP_ESTABLISHED
}
