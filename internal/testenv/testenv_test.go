package testenv

import (
	"os/exec"
	"runtime"
	"testing"
)

// A tool that exists is found; one that does not stops the test, as a
// skip outside CI and a failure in it.
func TestTool(t *testing.T) {
	if path := Tool(t, "go"); path == "" {
		t.Fatal("go not found, although the test runs under it")
	}
	missing := "jobset-flux-no-such-tool"
	if _, err := exec.LookPath(missing); err == nil {
		t.Fatalf("%s exists", missing)
	}
	for _, ci := range []string{"true", ""} {
		t.Run("CI="+ci, func(t *testing.T) {
			t.Setenv("CI", ci)
			r := &recorder{TB: t}
			done := make(chan struct{})
			// Fatalf and Skipf end the goroutine, as they do a test's.
			go func() { defer close(done); Tool(r, missing) }()
			<-done
			if r.failed != (ci == "true") || r.skipped == (ci == "true") {
				t.Errorf("CI=%q: failed %v, skipped %v", ci, r.failed, r.skipped)
			}
		})
	}
}

// recorder records how a test would have ended instead of ending it.
type recorder struct {
	testing.TB
	failed, skipped bool
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(string, ...any) { r.failed = true; runtime.Goexit() }

func (r *recorder) Skipf(string, ...any) { r.skipped = true; runtime.Goexit() }
