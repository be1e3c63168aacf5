// Command pause is the pod sandbox process of the project's test cluster
// (image jobset-flux.test/pause:1, containerd's sandbox_image): it holds the
// pod's namespaces open, does nothing until SIGTERM or SIGINT and then
// exits 0. As PID 1 of a pod that shares its process namespace it also
// reaps the zombies whose parents died, as the upstream pause does.
// Static (CGO_ENABLED=0): the image holds this file alone.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	reap() // children that ended before Notify took effect
	for sig := range sigs {
		if sig == syscall.SIGCHLD {
			reap()
			continue
		}
		os.Exit(0)
	}
}

// reap collects every child that has ended; signals coalesce, so one
// SIGCHLD may stand for several.
func reap() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if pid <= 0 || err != nil {
			return
		}
	}
}
