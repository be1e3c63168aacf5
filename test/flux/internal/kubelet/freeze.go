package kubelet

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// Freeze stops every process of a running pod's containers with SIGSTOP,
// as a hung node's processes stop: nothing of theirs runs, while their
// sockets stay open and the kernel still answers for their TCP
// connections. Thaw sends SIGCONT. The harness's SIGKILL at the end of
// the pod ends stopped processes too.
func (c *Cluster) Freeze(hostname string) error {
	return c.signalPod(hostname, syscall.SIGSTOP)
}

// Thaw lets the processes Freeze stopped run again.
func (c *Cluster) Thaw(hostname string) error {
	return c.signalPod(hostname, syscall.SIGCONT)
}

// signalPod sends sig to every process in the PID namespaces of the
// pod's running containers. It goes over the processes twice, so that a
// child forked while the first pass ran is not missed.
func (c *Cluster) signalPod(hostname string, sig syscall.Signal) error {
	p := c.Pod(hostname)
	if p == nil {
		return fmt.Errorf("no pod with hostname %s", hostname)
	}
	p.mu.Lock()
	namespaces := map[string]bool{}
	for _, ct := range p.containers {
		if pid := ct.pid(); pid > 0 {
			if ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", pid)); err == nil {
				namespaces[ns] = true
			}
		}
	}
	p.mu.Unlock()
	if len(namespaces) == 0 {
		return fmt.Errorf("pod %s has no running container", hostname)
	}
	signalled := 0
	for range 2 {
		procs, err := filepath.Glob("/proc/[0-9]*")
		if err != nil {
			return err
		}
		for _, dir := range procs {
			ns, err := os.Readlink(dir + "/ns/pid")
			if err != nil || !namespaces[ns] {
				continue
			}
			pid, err := strconv.Atoi(filepath.Base(dir))
			if err != nil {
				continue
			}
			if syscall.Kill(pid, sig) == nil {
				signalled++
			}
		}
	}
	if signalled == 0 {
		return fmt.Errorf("pod %s: no process to signal", hostname)
	}
	return nil
}
