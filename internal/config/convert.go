package config

import "time"

// ConvertConfig is the `convert:` section: the PDF engines and their cache.
type ConvertConfig struct {
	Paper                string
	AllowNetwork         bool
	ScriptWait           time.Duration
	ChromiumPath         string
	SofficePath          string
	PythonPath           string
	OfficeWorkers        int
	ChromiumTabs         int
	ChromiumSpares       int
	JobTimeout           time.Duration
	MaxJobsPerWorker     int
	MaxWorkerRSS         ByteSize
	QueueSize            int
	CacheMaxBytes        ByteSize
	MaxVariantsPerReport int
	SiteMaxPages         int
	SiteTimeout          time.Duration
	DeckMaxBytes         ByteSize
	SmallDeckBytes       ByteSize
	FailureTTL           time.Duration
	WarmOnStart          bool
	BwrapPath            string
	Unsandboxed          bool
}
