// Package watch is `reportctl watch`: it publishes every report file dropped
// into a folder exactly once, after it has been completely written.
//
// The pipeline, one job per file:
//
//	fsnotify / scans ──▶ filter ──▶ settle tracker ──▶ workers (-j) ──▶ report.Service
//	                                     ▲                  │
//	                                     └── retry queue ◀──┘ (bbolt, survives restarts)
//
// One goroutine (the loop in runner.go) owns every map; workers only upload
// and write the state file, so there are no locks around the pipeline state.
package watch
