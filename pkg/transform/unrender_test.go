package transform_test

import (
	"strings"
	"testing"
)

// w4Undo is a JobSet of three replicatedJobs, with comments, a
// spec.network of the user's, a field the user set to what the function
// would set (leader's backoffLimit 0: it stays) and one with neither
// completions nor parallelism.
const w4Undo = `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: jobset.x-k8s.io/v1alpha2
  kind: JobSet
  metadata:
    name: undo
    namespace: ns
    annotations:
      flux-framework.org/enabled: "true" # SELECTOR
      flux-framework.org/replicated-jobs: leader,workers,setup
  spec:
    # the network the user wrote
    network:
      subdomain: undo-net
    replicatedJobs:
    - name: leader
      template:
        spec:
          backoffLimit: 0 # the user's own
          template:
            spec:
              containers:
              - name: app
                image: busybox:1.36
                command: [sh, -c, "exit 0"]
    - name: workers
      replicas: 2
      template:
        spec:
          parallelism: 3
          template:
            spec:
              containers:
              - name: app
                image: busybox:1.36
                command: [sh, -c, "exit 0"]
    - name: setup
      template:
        spec:
          completions: 1
          template:
            spec:
              restartPolicy: OnFailure # the user's
              containers:
              - name: app
                image: busybox:1.36
                command: [sh, -c, "exit 0"]
`

// TestUnrenderDisabled: class 5, undoing a setting gives the JobSet's own spec
// back. Render the input; change a setting in the output; render that
// again: the items are byte for byte those of a fresh render of the
// input with the same change (for enabled: "false", the input itself,
// its ConfigMap and Secret pruned). Each change is also made a second
// time on the re-render's output, which must not move.
func TestUnrenderDisabled(t *testing.T) {
	p := hProcessor(t)
	render := func(in string) string {
		t.Helper()
		rl, ok, out, err := hKRM(t, p, []byte(in))
		if err != nil || !ok {
			t.Fatalf("render refused (%v):\n%s", err, hDump(rl))
		}
		return string(hItemsOnly(out))
	}
	first := render(w4Undo)
	if !strings.Contains(first, "jobset-flux.flux-framework.org/defaults") {
		t.Fatalf("the render records nothing it set:\n%s", first)
	}
	for name, change := range map[string][2]string{
		"disabled":             {`flux-framework.org/enabled: "true" # SELECTOR`, `flux-framework.org/enabled: "false" # SELECTOR`},
		"setup taken out":      {"flux-framework.org/replicated-jobs: leader,workers,setup", "flux-framework.org/replicated-jobs: leader,workers"},
		"workers taken out":    {"flux-framework.org/replicated-jobs: leader,workers,setup", "flux-framework.org/replicated-jobs: leader"},
		"workers' parallelism": {"parallelism: 3", "parallelism: 4"},
	} {
		t.Run(name, func(t *testing.T) {
			if !strings.Contains(first, change[0]) {
				t.Fatalf("the render lost %q", change[0])
			}
			again := render(strings.Replace(first, change[0], change[1], 1))
			fresh := render(strings.Replace(w4Undo, change[0], change[1], 1))
			if again != fresh {
				t.Errorf("re-render of the changed output differs from a fresh render of the changed input: %s", firstDiff(again, fresh))
			}
			if name == "disabled" && strings.Contains(again, "kind: ConfigMap") {
				t.Errorf("the disabled JobSet's ConfigMap was kept:\n%s", again)
			}
			if render(again) != again {
				t.Errorf("a third render changed the output")
			}
		})
	}
}
