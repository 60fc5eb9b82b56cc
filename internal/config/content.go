package config

import (
	"fmt"
	"time"

	"github.com/reportd/reportd/internal/content"
)

// validateContent checks the content.* keys that one setting's kind cannot.
func (c *Config) validateContent() error {
	if !c.Content.Enabled {
		return nil
	}
	if c.Content.URLTTL <= 0 || c.Content.SessionTTL <= 0 {
		return fmt.Errorf("content.url_ttl and content.session_ttl must be positive")
	}
	if k := c.Content.SigningKey; k != "" && len(k) < 16 {
		return fmt.Errorf("content.signing_key must be at least 16 characters (e.g. openssl rand -hex 32)")
	}
	if c.Content.URL != "" {
		if _, err := content.NewOrigins(content.Config{URL: c.Content.URL}); err != nil {
			return err
		}
	}
	return nil
}

// ContentConfig is the content origin's listener and URLs (settings content.*).
type ContentConfig struct {
	Enabled            bool
	Addr, URL          string
	URLTTL, SessionTTL time.Duration
	SigningKey         string
}
