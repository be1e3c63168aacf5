package transform_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// deadlineJobSet is a JobSet of two groups with extra annotations and
// extra fields of the first group's Job spec (indented for it).
func deadlineJobSet(annotations, jobFields string) string {
	return hRLHead + hJobSetItem("js", annotations, `    replicatedJobs:
    - name: a
      template:
        spec:
          completions: 2
`+jobFields+`          template:
            spec:
              containers: [{name: app, image: app, command: [hostname]}]
    - name: b
      template:
        spec:
          template:
            spec:
              containers: [{name: app, image: app, command: [hostname]}]
`)
}

// deadlines returns each replicatedJob's activeDeadlineSeconds in a
// rendered JobSet ("" when unset).
func deadlines(t *testing.T, rl *fn.ResourceList) []string {
	t.Helper()
	js := hFind(rl, "JobSet", "js")
	rjs, _, err := js.NestedSlice("spec", "replicatedJobs")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, rj := range rjs {
		v := ""
		if n, ok, _ := rj.NestedInt("template", "spec", "activeDeadlineSeconds"); ok {
			v = strconv.Itoa(n)
		}
		out = append(out, v)
	}
	return out
}

// TestDeadlineSetsEveryJobsActiveDeadline: the deadline is each Job's
// activeDeadlineSeconds, in whole seconds rounded up; a Job's own equal
// value is kept, a different one is refused at the field; a deadline no
// longer than the time-limit is a warning at the setting; without the
// setting no Job gets one. A render of the render changes nothing, and
// the setting removed takes the field away again.
func TestDeadlineSetsEveryJobsActiveDeadline(t *testing.T) {
	for _, c := range []struct {
		name, annotations, jobFields string
		want                         []string // nil: refused
		warn                         string   // field of a warning
	}{
		{"unset", "", "", []string{"", ""}, ""},
		{"minutes", `, flux-framework.org/deadline: 90m`, "", []string{"5400", "5400"}, ""},
		{"fraction rounded up", `, flux-framework.org/deadline: "1.0001"`, "", []string{"2", "2"}, ""},
		{"days", `, flux-framework.org/deadline: 1.5d`, "", []string{"129600", "129600"}, ""},
		{"the Job's own equal", `, flux-framework.org/deadline: 1h`, "          activeDeadlineSeconds: 3600\n", []string{"3600", "3600"}, ""},
		{"the Job's own without the setting", "", "          activeDeadlineSeconds: 7\n", []string{"7", ""}, ""},
		{"the Job's own differs", `, flux-framework.org/deadline: 1h`, "          activeDeadlineSeconds: 60\n", nil, ""},
		{"no longer than time-limit", `, flux-framework.org/deadline: 30m, flux-framework.org/time-limit: 30m`, "", []string{"1800", "1800"}, "metadata.annotations[flux-framework.org/deadline]"},
		{"longer than time-limit", `, flux-framework.org/deadline: 2h, flux-framework.org/time-limit: 1h`, "", []string{"7200", "7200"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := deadlineJobSet(c.annotations, c.jobFields)
			rl, ok, out, err := hKRM(t, hProcessor(t), []byte(in))
			if err != nil {
				t.Fatal(err)
			}
			if c.want == nil {
				errs := hErrors(rl)
				if ok || len(errs) != 1 || errs[0].Field == nil || !strings.HasSuffix(errs[0].Field.Path, "replicatedJobs[0].template.spec.activeDeadlineSeconds") {
					t.Fatalf("want one error at the Job's activeDeadlineSeconds and the render refused (ok %v): %s", ok, hDump(rl))
				}
				return
			}
			if !ok {
				t.Fatalf("refused: %s", hDump(rl))
			}
			if got := deadlines(t, rl); !slices.Equal(got, c.want) {
				t.Errorf("activeDeadlineSeconds %q, want %q", got, c.want)
			}
			var warned []string
			for _, r := range rl.Results {
				if r.Severity == fn.Warning && r.Field != nil && r.Field.Path != "metadata.namespace" {
					warned = append(warned, r.Field.Path)
				}
			}
			if (c.warn == "") != (len(warned) == 0) || c.warn != "" && (len(warned) != 1 || warned[0] != c.warn) {
				t.Errorf("warnings at %q, want at %q", warned, c.warn)
			}
			rl2, ok, again, err := hKRM(t, hProcessor(t), out)
			if err != nil || !ok {
				t.Fatalf("second render refused (%v): %s", err, hDump(rl2))
			}
			if string(hItemsOnly(again)) != string(hItemsOnly(out)) {
				t.Errorf("second render differs")
			}
			if c.annotations == "" {
				return
			}
			// Without the setting, a render of the render is a fresh
			// render of the JobSet as the user wrote it.
			rl3, ok, _, err := hKRM(t, hProcessor(t), []byte(strings.Replace(string(out), "flux-framework.org/deadline:", "x-deadline:", 1)))
			fresh, ok2, _, err2 := hKRM(t, hProcessor(t), []byte(strings.Replace(in, "flux-framework.org/deadline:", "x-deadline:", 1)))
			if err != nil || err2 != nil || !ok || !ok2 {
				t.Fatalf("render without the setting refused: %v %v", err, err2)
			}
			if got, want := deadlines(t, rl3), deadlines(t, fresh); !slices.Equal(got, want) {
				t.Errorf("setting removed: activeDeadlineSeconds %q, a fresh render gives %q", got, want)
			}
		})
	}
}
