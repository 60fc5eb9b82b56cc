package config

import "github.com/reportd/reportd/internal/convert"

// ConvertConfig is the `convert:` section: the PDF engines' own settings,
// which the settings table fills directly (a key whose 0 means "none" is
// read as the engine's -1, see orNone), and when to start them. The
// daemon sets what no key holds (CacheDir, HideDirs, Registerer, Logger).
type ConvertConfig struct {
	convert.Config
	WarmOnStart bool
}
