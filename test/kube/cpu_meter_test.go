package kube

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCPUMeter: the meter reads cpuacct.usage of container-named cgroups
// at any depth, keeps the highest sample of each (a cgroup that is gone
// keeps its last), and charges a namespace only its own pods' containers.
func TestCPUMeter(t *testing.T) {
	root := t.TempDir()
	a, b, c := strings.Repeat("a", 64), strings.Repeat("b", 64), strings.Repeat("c", 64)
	write := func(dir, usage string) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "cpuacct.usage"), []byte(usage+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, "kube", "k8s.io", a), "1500000000")
	write(filepath.Join(root, b), "250000000")
	write(filepath.Join(root, "not-a-container"), "9000000000")
	write(filepath.Join(root, "x", c), "4000000000")
	m := &cpuMeter{usage: map[string]time.Duration{}, byNS: map[string]time.Duration{}, root: root}
	m.sample()
	if err := os.RemoveAll(filepath.Join(root, "kube")); err != nil { // a's pod ended
		t.Fatal(err)
	}
	write(filepath.Join(root, b), "750000000")

	var p object
	p.Status.InitContainerStatuses = []containerStatus{{Name: "flux-installer", ContainerID: "containerd://" + a}}
	p.Status.ContainerStatuses = []containerStatus{{Name: "app", ContainerID: "containerd://" + b}, {Name: "waiting"}}
	if got, want := m.account("ns-1", []object{p}), 2250*time.Millisecond; got != want {
		t.Errorf("ns-1 used %v, want %v (a's last sample 1.5 s + b's newest 0.75 s)", got, want)
	}
	var q object
	q.Status.ContainerStatuses = []containerStatus{{Name: "app", ContainerID: "containerd://" + c}}
	m.account("ns-2", []object{q})
	report := m.report()
	if i, j := strings.Index(report, "ns-2"), strings.Index(report, "ns-1"); i < 0 || j < 0 || i > j {
		t.Errorf("want ns-2 (4 s) before ns-1 (2.25 s):\n%s", report)
	}
	if !strings.Contains(report, "2 namespaces, 6 CPU-s in all") {
		t.Errorf("want the count and the 6.25 s sum rounded:\n%s", report)
	}
}
