package jobsetrender

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
)

// TestJoinedWait runs the startup probe's script with real bash on a
// file of the test's: it passes at once when the file exists, passes
// within a test interval of the file appearing while it waits (with exit
// status 0, not the status of its last pause), and fails after its wait
// with the line the kubelet puts in its event.
func TestJoinedWait(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("bash: %v", err)
	}
	run := func(path string, wait int) (time.Duration, int, string) {
		start := time.Now()
		out, err := exec.Command(bash, "-c", joinedWait(path, wait)).CombinedOutput()
		code := 0
		if err != nil {
			exit, ok := err.(*exec.ExitError)
			if !ok {
				t.Fatalf("bash: %v", err)
			}
			code = exit.ExitCode()
		}
		return time.Since(start), code, string(out)
	}

	dir := t.TempDir()
	present := filepath.Join(dir, "present")
	if err := os.WriteFile(present, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if took, code, out := run(present, 30); code != 0 || took > 2*time.Second || out != "" {
		t.Errorf("file present: exit %d after %v, output %q; want 0 at once, silent", code, took, out)
	}

	later := filepath.Join(dir, "later")
	go func() {
		time.Sleep(1200 * time.Millisecond)
		_ = os.WriteFile(later, nil, 0o644)
	}()
	took, code, out := run(later, 30)
	if code != 0 || out != "" {
		t.Errorf("file written while waiting: exit %d, output %q; want 0, silent", code, out)
	}
	if took < time.Second || took > 3*time.Second {
		t.Errorf("file written 1.2 s in: passed after %v, want within about half a second of it", took)
	}

	took, code, out = run(filepath.Join(dir, "never"), 2)
	if code != 1 || !strings.Contains(out, "has not joined the whole instance") {
		t.Errorf("no file: exit %d, output %q; want 1 and the reason", code, out)
	}
	// bash's SECONDS counts whole seconds of the clock from its start, so
	// the wait ends up to a second early.
	if took < time.Second || took > 4*time.Second {
		t.Errorf("no file: failed after %v, want after the 2 s wait (1 s at the least)", took)
	}
}

// TestProbeTiming: the kubelet stops an exec probe at timeoutSeconds, so
// the script must end well before it; and the failures the kubelet
// tolerates, each at least a period long, must outlast the entrypoint's
// own deadline and its grace, or the kubelet would stop a broker first.
func TestProbeTiming(t *testing.T) {
	if probeTimeout-probeWait < 5 || probeWait < probePeriod {
		t.Errorf("wait %d s, timeout %d s, period %d s: want a wait of at least a period, 5 s under the timeout", probeWait, probeTimeout, probePeriod)
	}
	for _, timeout := range []int{1, 90, 600, 3600} {
		probe := startupProbe(timeout)
		field := func(key string) int {
			n, err := strconv.Atoi(yamltree.Get(probe, key).Value)
			if err != nil {
				t.Fatalf("%s: %v", key, err)
			}
			return n
		}
		if got := field("timeoutSeconds"); got != probeTimeout {
			t.Errorf("start-timeout %d s: timeoutSeconds %d, want %d", timeout, got, probeTimeout)
		}
		if last := field("failureThreshold") * field("periodSeconds"); last < timeout+probeGrace {
			t.Errorf("start-timeout %d s: the kubelet may give up after %d s, before the entrypoint's %d s and grace", timeout, last, timeout)
		}
	}
	if got := yamltree.Get(startupProbe(0), "failureThreshold").Value; got != strconv.Itoa(probeForever) {
		t.Errorf("start-timeout none: failureThreshold %s, want %d", got, probeForever)
	}
}
