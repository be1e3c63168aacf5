package settings

import (
	"strings"
	"testing"
)

// TestRunOptionsDuration: every run-options spelling that sets the job's
// duration (flux run's -t, and a job attribute at or above
// attributes.system.duration, as flux-core's Jobspec completes its key)
// is refused whatever time-limit says, naming the word and the fix;
// options that only look alike pass.
func TestRunOptionsDuration(t *testing.T) {
	for opts, refused := range map[string]bool{
		"-t 1h": true, "-t1h": true, "-t=1h": true, "--time-limit 1h": true, "--time-limit=600": true,
		"-vt 1h": true, "-ut1h": true,
		"--setattr=system.duration=600": true, "--setattr system.duration=600": true,
		"-S system.duration=600": true, "-Ssystem.duration=600": true, "-S=system.duration=600": true,
		"-S duration=600": true, "--setattr=duration=10": true, "-S .system.duration=5": true,
		"-S attributes.system.duration=5": true, "-uS system.duration=5": true, "-vSduration=5": true,
		"-S attributes.system=1": true, "-S .system=1": true, "-S system.duration": true,
		"-o cpu-affinity=per-task": false, "-ot": false, "--setopt t": false, "--job-name t -v": false,
		"--env=t=1": false, "-o t -v": false, "-S user.duration=5": false, "-S system.durations=5": false,
		"--setattr=system.queue=x": false, "-S system=1": false, "-S attributes=1": false,
		"-o system.duration=1": false, "--env=system.duration=1": false, "-S durationx=1": false,
		"-vo pmi=pmix": true, "-uSsystem.duration=5": true,
	} {
		err := Check("run-options", opts)
		// A bundle whose last option takes the next word (-vt 1h) is
		// refused before its options are read: flux run fails on it.
		got := err != nil && (strings.Contains(err.Error(), "sets the job's time limit") || strings.Contains(err.Error(), "reads as the start of the command"))
		if got != refused {
			t.Errorf("run-options %q: refused %v, want %v (%v)", opts, got, refused, err)
		}
		if refused && (err == nil || !strings.Contains(err.Error(), "set time-limit") && !strings.Contains(err.Error(), "on its own")) {
			t.Errorf("run-options %q: the error names no fix: %v", opts, err)
		}
	}
}

// TestTimeLimitUnit: a number without a unit is seconds, written out for
// flux run -t, which alone would read minutes; a unit is kept.
func TestTimeLimitUnit(t *testing.T) {
	for raw, want := range map[string]string{"600": "600s", "1.5": "1.5s", "30m": "30m", "2h": "2h", "1d": "1d", "45s": "45s", "250ms": "250ms"} {
		s := Defaults()
		if found := s.Apply(Layer{Kind: FromAnnotation, Values: map[string]Raw{"time-limit": {Value: raw, Path: "p"}}}); len(found) > 0 {
			t.Fatalf("time-limit %q: %v", raw, found)
		}
		if s.TimeLimit != want {
			t.Errorf("time-limit %q reaches flux run as -t %q, want %q", raw, s.TimeLimit, want)
		}
	}
}
