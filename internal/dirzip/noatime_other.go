//go:build !linux

package dirzip

// openNoATime is Linux's O_NOATIME; other systems open files plainly.
const openNoATime = 0
