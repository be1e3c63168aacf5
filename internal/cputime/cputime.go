// Package cputime measures the CPU time the process has used. Tests that
// bound how much work something takes measure CPU, not wall time, so a
// busy shared machine cannot make them fail while a real slowdown (a
// quadratic loop) still does.
package cputime

import (
	"syscall"
	"time"
)

// Now returns the user plus system CPU time the process has used so far.
func Now() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic("getrusage: " + err.Error())
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Since returns the CPU time used since start (a value from Now).
func Since(start time.Duration) time.Duration { return Now() - start }
