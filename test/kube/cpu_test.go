package kube

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The suite runs on a 2-CPU node, so its wall time is the CPU its pods
// burn (brokers booting, MPI ranks polling), not how long each waits.
// cpuMeter tells where that CPU goes: it samples the cpuacct usage of
// every container cgroup (the kubelet runs with cgroupsPerQOS false, so
// containerd's per-container cgroups are the only ones; a container's
// cgroup goes when its pod ends, hence sampling), and each namespace logs
// what its pods used when it closes; TestMain prints the totals.
type cpuMeter struct {
	mu      sync.Mutex
	usage   map[string]time.Duration // container ID -> last sampled usage
	byNS    map[string]time.Duration // namespace -> its pods' total
	root    string                   // the cpuacct hierarchy
	stopped chan struct{}
}

// cpuacctRoot is where cgroups v1 keeps CPU accounting on this machine.
const cpuacctRoot = "/sys/fs/cgroup/cpuacct"

var meter = &cpuMeter{usage: map[string]time.Duration{}, byNS: map[string]time.Duration{}, root: cpuacctRoot}

// start samples every interval until stop; without a cpuacct hierarchy it
// does nothing (the figures are a diagnostic, not a check).
func (m *cpuMeter) start(interval time.Duration) {
	m.stopped = make(chan struct{})
	if _, err := os.Stat(m.root); err != nil {
		return
	}
	go func() {
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			m.sample()
			select {
			case <-m.stopped:
				return
			case <-tick.C:
			}
		}
	}()
}

func (m *cpuMeter) stop() { close(m.stopped) }

// sample reads cpuacct.usage of every cgroup named by a container ID
// (64 hex digits) under the root.
func (m *cpuMeter) sample() {
	found := map[string]time.Duration{}
	_ = filepath.WalkDir(m.root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if !isContainerID(d.Name()) {
			return nil
		}
		b, err := os.ReadFile(filepath.Join(path, "cpuacct.usage"))
		if err == nil {
			if ns, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil {
				found[d.Name()] = time.Duration(ns)
			}
		}
		return fs.SkipDir
	})
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, u := range found {
		m.usage[id] = max(m.usage[id], u)
	}
}

func isContainerID(name string) bool {
	if len(name) != 64 {
		return false
	}
	for _, c := range name {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}

// account adds up the last sampled usage of the containers of pods (their
// IDs as the API server reports them) for namespace ns and returns it.
func (m *cpuMeter) account(ns string, pods []object) time.Duration {
	m.sample() // the containers still running have used more since
	m.mu.Lock()
	defer m.mu.Unlock()
	var total time.Duration
	for _, p := range pods {
		for _, c := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
			if _, id, ok := strings.Cut(c.ContainerID, "://"); ok {
				total += m.usage[id]
			}
		}
	}
	m.byNS[ns] += total
	return total
}

// report is one line per namespace, the costliest first, and the sum.
func (m *cpuMeter) report() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	names := make([]string, 0, len(m.byNS))
	var sum time.Duration
	for ns, d := range m.byNS {
		names = append(names, ns)
		sum += d
	}
	slices.SortFunc(names, func(a, b string) int { return int(m.byNS[b] - m.byNS[a]) })
	var b strings.Builder
	fmt.Fprintf(&b, "CPU used by the pods of each namespace (sampled cpuacct, %d namespaces, %.0f CPU-s in all):\n", len(names), sum.Seconds())
	for _, ns := range names {
		fmt.Fprintf(&b, "  %7.1f s  %s\n", m.byNS[ns].Seconds(), ns)
	}
	return b.String()
}
