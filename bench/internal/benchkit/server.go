package benchkit

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// WaitListening polls addr (host:port) until it accepts a TCP connection,
// or gives up after within.
func WaitListening(addr string, within time.Duration) error {
	for deadline := time.Now().Add(within); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nothing listens on %s after %s", addr, within)
		}
	}
}

// CreateProject creates a project named name through the API at api
// (http://host:port) and returns its id.
func CreateProject(ctx context.Context, api, name string) (string, error) {
	body, err := json.Marshal(map[string]string{"name": name})
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, api+"/api/projects", strings.NewReader(string(body)))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var p struct{ ID int64 }
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil || p.ID == 0 {
		return "", fmt.Errorf("create project: %s %v", resp.Status, err)
	}
	return strconv.FormatInt(p.ID, 10), nil
}
