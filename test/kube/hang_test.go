package kube

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// freezerRoot is the cgroup v1 freezer hierarchy the node's containers
// are in (hack/kube/cluster.sh: containerd puts each under k8s.io/<id>).
const freezerRoot = "/sys/fs/cgroup/freezer"

// freezerOf finds the freezer cgroup of a container, by its ID as the
// API server reports it (containerd://<id>).
func freezerOf(t *testing.T, containerID string) string {
	t.Helper()
	_, id, ok := strings.Cut(containerID, "://")
	if !ok || !isContainerID(id) {
		t.Fatalf("container ID %q", containerID)
	}
	var dir string
	_ = filepath.WalkDir(freezerRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() || dir != "" {
			return fs.SkipDir
		}
		if d.Name() == id {
			dir = path
			return fs.SkipAll
		}
		return nil
	})
	if dir == "" {
		t.Fatalf("no freezer cgroup for container %s under %s", id, freezerRoot)
	}
	return dir
}

// setFreezer writes state (FROZEN or THAWED) to a freezer cgroup.
func setFreezer(t *testing.T, dir, state string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "freezer.state"), []byte(state), 0o644); err != nil {
		t.Errorf("freeze %s: %v", dir, err)
	}
}

// TestFaultFrozen: a follower whose container's cgroup is frozen mid-job,
// as a hung node's processes are, keeps its TCP connections up and
// answers nothing. Rank 0 cuts it off once Flux declares it torpid
// (tbon.torpid_max, 30s by default): the job fails with an exception
// naming the rank and the JobSet fails in bounded time, where before it
// ran until the job's own end. The container is thawed when the test
// ends, so that its pod can go.
func TestFaultFrozen(t *testing.T) {
	t.Parallel()
	requireCluster(t)
	n := newNamespace(t, "fault-frozen")
	n.apply(faultJobSet(t, "frozen", 600, nil, faultShape...))
	var frozen string
	t.Cleanup(func() {
		if frozen != "" {
			setFreezer(t, frozen, "THAWED")
		}
	})
	r := runFaultWithin(t, n, "frozen", 3, 30*time.Second+faultBound, func(s *snapshot) {
		p, ok := s.pod("w", 0, 2)
		if !ok || len(p.Status.ContainerStatuses) == 0 {
			t.Fatalf("no container status for pod w/0/2")
		}
		// Ready means joined; the job starts at once after: give it a
		// moment so that the freeze lands mid-job.
		time.Sleep(2 * time.Second)
		frozen = freezerOf(t, p.Status.ContainerStatuses[0].ContainerID)
		setFreezer(t, frozen, "FROZEN")
	})
	r.record(t, "a follower's container frozen (cgroup freezer)", jobSetFailed)
	leader, _ := r.h.last.pod("w", 0, 0)
	for _, c := range leader.Status.ContainerStatuses {
		if term := c.State.Terminated; c.Name == "app" && (term == nil || !strings.Contains(term.Message, "rank 0 cut off hung ranks, whose pods cannot end by themselves: 2 (frozen-w-0-2)")) {
			t.Errorf("the leader's termination %+v does not name the rank cut off", term)
		}
	}
	out, _ := n.run(nil, "logs", podOf(t, r.h.last, "w", 0), "-c", "app")
	for _, want := range []string{"rank 2 (frozen-w-0-2) hung", "type=hang"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the leader's log lacks %q:\n%s", want, out)
		}
	}
}
