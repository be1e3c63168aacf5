package transform_test

import (
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// misplacedJobSet is a JobSet whose first replicatedJob's Job and pod
// templates carry meta, a YAML flow map of metadata (empty: none), and
// whose own metadata gets labels (a flow map's contents, "" for none).
func misplacedJobSet(annotations, labels, jobMeta, podMeta string) string {
	item := hJobSetItem("js", annotations, `    replicatedJobs:
    - name: w
      template:
        metadata: `+orEmpty(jobMeta)+`
        spec:
          completions: 2
          template:
            metadata: `+orEmpty(podMeta)+`
            spec:
              containers: [{name: app, image: app, command: [hostname]}]
`)
	if labels != "" {
		item = strings.Replace(item, "    annotations: {", "    labels: {"+labels+"}\n    annotations: {", 1)
	}
	return hRLHead + item
}

func orEmpty(s string) string {
	if s == "" {
		return "{}"
	}
	return s
}

// TestMisplacedSettings: what a user meant for the JobSet but wrote where
// nothing reads it is never dropped without a word. A Flux setting in a
// Job or pod template's metadata, or as a label of the JobSet, is an
// error at that field (the JobSet is left as it was); the selector as a
// label of a JobSet that is therefore not selected is an error too;
// Kueue's queue label on a template, when the JobSet has none, is a
// warning (the JobSet would start unqueued); view-copy-medium where no
// view is copied is a warning. The same keys where they belong say
// nothing.
func TestMisplacedSettings(t *testing.T) {
	for _, c := range []struct {
		name, in string
		severity string // "error", "warning", or "" for nothing
		field    string
	}{
		{"setting on the pod template", misplacedJobSet("", "", "", `{annotations: {flux-framework.org/tasks-per-node: "4"}}`), "error", "template.spec.template.metadata.annotations[flux-framework.org/tasks-per-node]"},
		{"setting on the Job template", misplacedJobSet("", "", `{annotations: {flux-framework.org/start-timeout: 1m}}`, ""), "error", "replicatedJobs[0].template.metadata.annotations[flux-framework.org/start-timeout]"},
		{"selector as a pod template label", misplacedJobSet("", "", "", `{labels: {flux-framework.org/enabled: "true"}}`), "error", "template.spec.template.metadata.labels[flux-framework.org/enabled]"},
		{"setting as the JobSet's label", misplacedJobSet("", `flux-framework.org/tasks-per-node: "2"`, "", ""), "error", "metadata.labels[flux-framework.org/tasks-per-node]"},
		{"queue label on the pod template", misplacedJobSet("", "", "", `{labels: {kueue.x-k8s.io/queue-name: user-queue}}`), "warning", "template.spec.template.metadata.labels[kueue.x-k8s.io/queue-name]"},
		{"queue label on both", misplacedJobSet("", "kueue.x-k8s.io/queue-name: user-queue", "", `{labels: {kueue.x-k8s.io/queue-name: user-queue}}`), "", ""},
		{"view-copy-medium with view-mount image", misplacedJobSet(`, flux-framework.org/view-mount: image, flux-framework.org/view-copy-medium: disk`, "", "", ""), "warning", "metadata.annotations[flux-framework.org/view-copy-medium]"},
		{"view-copy-medium with a copy", misplacedJobSet(`, flux-framework.org/view-copy-medium: disk`, "", "", ""), "", ""},
		{"other template metadata", misplacedJobSet("", "kueue.x-k8s.io/queue-name: user-queue", `{labels: {team: a}}`, `{annotations: {kueue.x-k8s.io/podset-required-topology: rack}}`), "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			rl, ok, _, err := hKRM(t, hProcessor(t), []byte(c.in))
			if err != nil {
				t.Fatal(err)
			}
			var hits []*fn.Result
			for _, r := range rl.Results {
				if r.Field != nil && r.Severity != fn.Info && strings.HasSuffix(r.Field.Path, c.field) && c.field != "" {
					hits = append(hits, r)
				}
			}
			switch c.severity {
			case "":
				for _, r := range rl.Results {
					// The harness's JobSets have no namespace, which
					// has a warning of its own.
					if r.Severity != fn.Info && (r.Field == nil || r.Field.Path != "metadata.namespace") {
						t.Errorf("unexpected %s: %s", r.Severity, r.Message)
					}
				}
				if !ok {
					t.Errorf("refused: %s", hDump(rl))
				}
			case "error":
				if len(hits) != 1 || hits[0].Severity != fn.Error || ok {
					t.Fatalf("want one error at %s and the render refused (ok %v): %s", c.field, ok, hDump(rl))
				}
				if js := hFind(rl, "JobSet", "js"); strings.Contains(js.String(), "flux-installer") {
					t.Errorf("the JobSet was rendered despite the error")
				}
			case "warning":
				if len(hits) != 1 || hits[0].Severity != fn.Warning || !ok {
					t.Fatalf("want one warning at %s and the render done (ok %v): %s", c.field, ok, hDump(rl))
				}
			}
		})
	}
}

// TestSelectorAsLabel: a JobSet whose selector is written as a label is
// not selected, and says so with an error at the label instead of
// passing through with exit 0.
func TestSelectorAsLabel(t *testing.T) {
	in := hRLHead + `- apiVersion: jobset.x-k8s.io/v1alpha2
  kind: JobSet
  metadata:
    name: js
    labels: {flux-framework.org/enabled: "true"}
  spec:
    replicatedJobs:
    - name: w
      template:
        spec:
          template:
            spec:
              containers: [{name: app, image: app, command: [hostname]}]
`
	rl, ok, _, err := hKRM(t, hProcessor(t), []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if ok || len(rl.Results) != 1 || rl.Results[0].Severity != fn.Error || rl.Results[0].Field == nil ||
		rl.Results[0].Field.Path != "metadata.labels[flux-framework.org/enabled]" || !strings.Contains(rl.Results[0].Message, "move it to metadata.annotations") {
		t.Fatalf("want one error at the label: %s", hDump(rl))
	}
}
