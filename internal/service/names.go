package service

import "github.com/reportd/reportd/internal/report"

// checkVisible refuses a name holding format characters (Unicode category
// Cf), naming the character: report.CheckVisible, the rule site file
// names follow too.
func checkVisible(field, name string) error { return report.CheckVisible(field, name) }
