package kube

import (
	"errors"
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
		switch {
		case err != nil:
			return fs.SkipDir
		case !d.IsDir():
			// fs.SkipDir on a file would skip the rest of its directory.
			return nil
		case d.Name() == id:
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

// setFreezer writes state (FROZEN or THAWED) to a freezer cgroup. A
// cgroup already gone went with its container: nothing is left to thaw.
func setFreezer(t *testing.T, dir, state string) {
	t.Helper()
	err := os.WriteFile(filepath.Join(dir, "freezer.state"), []byte(state), 0o644)
	if err != nil && !(state == "THAWED" && errors.Is(err, fs.ErrNotExist)) {
		t.Errorf("set %s to %s: %v", dir, state, err)
	}
}

// TestFaultFrozen: a pod whose container's cgroup is frozen mid-job, as
// a hung node's processes are, keeps its TCP connections up and answers
// nothing. A frozen follower is cut off by rank 0 once Flux declares it
// torpid (tbon.torpid_max, 30s by default): the job fails with an
// exception naming the rank. A frozen leader is given up by its
// followers once they hear no heartbeat for 34 s: they exit 122 naming
// it. Either way the JobSet fails in bounded time, where before it ran
// until the job's own end. The container is thawed when the test ends,
// so that its pod can go.
func TestFaultFrozen(t *testing.T) {
	t.Parallel()
	requireCluster(t)
	for _, c := range []struct {
		name  string
		index int
	}{{"follower", 2}, {"leader", 0}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			n := newNamespace(t, "fault-frozen-"+c.name)
			n.apply(faultJobSet(t, "frozen", 600, nil, faultShape...))
			var frozen string
			t.Cleanup(func() {
				if frozen != "" {
					setFreezer(t, frozen, "THAWED")
				}
			})
			// tbon.torpid_max, then the Flux commands that cut a hung
			// rank off (or leave a hung rank 0), then the frozen pod's
			// end. On a loaded machine each of those commands waits
			// seconds for a CPU to start on: twice the usual bound.
			r := runFaultWithin(t, n, "frozen", 3, 35*time.Second+2*faultBound, func(s *snapshot) {
				p, ok := s.pod("w", 0, c.index)
				if !ok || len(p.Status.ContainerStatuses) == 0 {
					t.Fatalf("no container status for pod w/0/%d", c.index)
				}
				// Ready means joined, and the job starts at once after:
				// a moment more lands the freeze mid-job.
				time.Sleep(2 * time.Second)
				frozen = freezerOf(t, p.Status.ContainerStatuses[0].ContainerID)
				setFreezer(t, frozen, "FROZEN")
			})
			r.record(t, "the "+c.name+"'s container frozen (cgroup freezer)", jobSetFailed)
			want, teller := "rank 0 cut off hung ranks, whose pods cannot end by themselves: 2 (frozen-w-0-2)", []int{0}
			if c.index == 0 {
				want, teller = "rank 0 (frozen-w-0-0) hung, or this broker is cut off from it: no heartbeat for 34s", []int{1, 2}
			}
			told := false
			for _, i := range teller {
				p, _ := r.h.last.pod("w", 0, i)
				for _, cs := range p.Status.ContainerStatuses {
					if term := cs.State.Terminated; cs.Name == "app" && term != nil && strings.Contains(term.Message, want) {
						told = true
					}
				}
			}
			if !told {
				t.Errorf("no termination message of pods %v says %q", teller, want)
			}
		})
	}
}
