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

// TestTimeLimit: time-limit is one flux run option, seconds without a
// unit (written out so flux run -t does not read minutes); with a
// launcher (no flux run) or an interactive instance (none either) it is
// an error at the field that set it, naming the fix.
func TestTimeLimit(t *testing.T) {
	ann := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m["flux-framework.org/"+kv[i]] = kv[i+1]
		}
		return m
	}
	for raw, want := range map[string]string{"30m": "30m", "600": "600s", "1.5": "1.5s", "2h": "2h", "45s": "45s", "1d": "1d", "500ms": "500ms"} {
		p, found := build(read(t, jobsetYAML(ann("time-limit", raw), "w:1:2")), settings.Defaults())
		if p == nil || p.Settings.TimeLimit != want {
			t.Fatalf("time-limit %q: plan %v, errors %v; want flux run -t %s", raw, p != nil, errorsOf(found), want)
		}
	}
	_, found := build(read(t, jobsetYAML(ann("time-limit", "30m", "launcher", "true"), "w:1:2")), settings.Defaults())
	if errs := strings.Join(errorsOf(found), "\n"); !strings.Contains(errs, "time-limit shapes the flux run of the command, but launcher is true") {
		t.Errorf("time-limit with launcher: %s", errs)
	}
	for name, annotations := range map[string]map[string]string{
		"time-limit, interactive set":     ann("time-limit", "30m", "interactive", "true"),
		"run-options, interactive set":    ann("run-options", "-o cpu-affinity=per-task", "interactive", "true"),
		"time-limit, interactive derived": ann("time-limit", "30m"),
	} {
		rj := "w:1:2"
		if strings.HasSuffix(name, "derived") {
			rj = "w:1:2:command: []"
		}
		_, found := build(read(t, jobsetYAML(annotations, rj)), settings.Defaults())
		errs := strings.Join(errorsOf(found), "\n")
		if !strings.Contains(errs, "shapes the flux run of the command, but") || !strings.Contains(errs, "an interactive instance runs no command") || !strings.Contains(errs, "metadata.annotations[flux-framework.org/") {
			t.Errorf("%s: want an error at the annotation naming the fix, got %s", name, errs)
		}
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
