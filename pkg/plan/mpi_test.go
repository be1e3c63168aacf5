package plan

import (
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
)

func warningsOf(found finding.List) []string {
	var out []string
	for _, f := range found {
		if f.Severity == finding.Warning {
			out = append(out, f.Path+": "+f.Message)
		}
	}
	return out
}

// TestTimeLimit: time-limit is one flux run option; given a second time
// in run-options, or with a launcher (no flux run), it is an error at the
// field that set it, naming the fix.
func TestTimeLimit(t *testing.T) {
	ann := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m["flux-framework.org/"+kv[i]] = kv[i+1]
		}
		return m
	}
	p, found := build(read(t, jobsetYAML(ann("time-limit", "30m"), "w:1:2")), settings.Defaults())
	if p == nil || p.Settings.TimeLimit != "30m" {
		t.Fatalf("time-limit 30m: plan %v, errors %v", p != nil, errorsOf(found))
	}
	// run-options spellings of -t: each one refused next to time-limit;
	// options whose value merely contains a t are not.
	for opts, refused := range map[string]bool{
		"-t 1h": true, "-t1h": true, "-t=1h": true, "--time-limit 1h": true, "--time-limit=1h": true,
		"-vt 1h": true, "-ut1h": true, "-o cpu-affinity=per-task": false, "-ot": false,
		"--setopt t": false, "--job-name t -v": false, "--env=t=1": false, "-o t -v": false,
	} {
		_, found := build(read(t, jobsetYAML(ann("time-limit", "30m", "run-options", opts), "w:1:2")), settings.Defaults())
		errs := strings.Join(errorsOf(found), "\n")
		got := strings.Contains(errs, "both set flux run's time limit")
		if got != refused {
			t.Errorf("time-limit 30m with run-options %q: refused %v, want %v (%s)", opts, got, refused, errs)
		}
		if refused && (!strings.Contains(errs, "metadata.annotations[flux-framework.org/time-limit]: ") || !strings.Contains(errs, "remove the -t from run-options")) {
			t.Errorf("run-options %q: the error names neither the field nor the fix: %s", opts, errs)
		}
	}
	_, found = build(read(t, jobsetYAML(ann("time-limit", "30m", "launcher", "true"), "w:1:2")), settings.Defaults())
	if errs := strings.Join(errorsOf(found), "\n"); !strings.Contains(errs, "time-limit shapes the flux run of the command, but launcher is true") {
		t.Errorf("time-limit with launcher: %s", errs)
	}
}

// TestShmWarning: shm-size below 4.25 MiB per task per pod warns, at the
// field, with the size to set; at or above it, unset, or when the pods
// mount their own /dev/shm, nothing.
func TestShmWarning(t *testing.T) {
	for _, tc := range []struct {
		shm, tasks string
		own        bool
		want       string // "" for no warning
	}{
		{shm: "1Mi", tasks: "1", want: "at least 5Mi"},
		{shm: "8Mi", tasks: "2", want: "at least 9Mi"},
		{shm: "8.5Mi", tasks: "2"},
		{shm: "16Mi", tasks: "4", want: "at least 17Mi"},
		{shm: "17Mi", tasks: "4"},
		{shm: "64Mi", tasks: "16", want: "at least 68Mi"},
		{shm: "1Gi", tasks: "64"},
		{shm: "", tasks: "64"},
		{shm: "1Mi", tasks: "4", own: true},
	} {
		ann := map[string]string{"flux-framework.org/tasks-per-node": tc.tasks}
		if tc.shm != "" {
			ann["flux-framework.org/shm-size"] = tc.shm
		}
		spec := "w:1:2"
		if tc.own {
			spec += ":volumeMounts:\n- name: shm\n  mountPath: /dev/shm"
		}
		p, found := build(read(t, jobsetYAML(ann, spec)), settings.Defaults())
		if p == nil {
			t.Fatalf("%+v: %v", tc, errorsOf(found))
		}
		warnings := strings.Join(warningsOf(found), "\n")
		switch {
		case tc.want == "" && strings.Contains(warnings, "/dev/shm"):
			t.Errorf("shm-size %q, %s tasks per pod: unexpected warning %s", tc.shm, tc.tasks, warnings)
		case tc.want != "" && !strings.Contains(warnings, "metadata.annotations[flux-framework.org/shm-size]: is "+tc.shm):
			t.Errorf("shm-size %q, %s tasks per pod: no warning at the field: %q", tc.shm, tc.tasks, warnings)
		case tc.want != "" && !strings.Contains(warnings, tc.want):
			t.Errorf("shm-size %q, %s tasks per pod: the warning lacks %q: %s", tc.shm, tc.tasks, tc.want, warnings)
		}
	}
}
