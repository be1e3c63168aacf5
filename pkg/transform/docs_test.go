package transform_test

import (
	"os"
	"strings"
	"testing"
)

// TestDocsInitContainerSecurity: docs/user/security.md names every field of the
// securityContext the function gives its init container, and says that a
// pod-level seccomp profile is inherited, so the page cannot fall behind
// the render again.
func TestDocsInitContainerSecurity(t *testing.T) {
	doc, err := os.ReadFile("../../docs/user/security.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(doc)), " ")
	rl, ok, _ := hRun(t, hProcessor(t), hList(t, nil, hJobSet{}.object()))
	if !ok {
		t.Fatal(hDump(rl))
	}
	init := hContainer(t, hFind(rl, "JobSet", "js"), "initContainers", 0)
	var sc map[string]any
	if found, err := init.NestedResource(&sc, "securityContext"); !found || err != nil {
		t.Fatalf("the init container has no securityContext (%v)", err)
	}
	for field := range sc {
		if !strings.Contains(text, field) {
			t.Errorf("docs/user/security.md does not mention the init container's securityContext field %s", field)
		}
	}
	for _, want := range []string{"readOnlyRootFilesystem: true", "only when the pod sets no `seccompProfile`", "is inherited, not overridden"} {
		if !strings.Contains(text, want) {
			t.Errorf("docs/user/security.md does not say %q", want)
		}
	}
}

// TestDocsExecSelectsByLabels: a pod's name is its hostname plus a random
// suffix, so README's kubectl exec must find rank 0's pod by its labels.
func TestDocsExecSelectsByLabels(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	if strings.Contains(text, "kubectl exec -it <jobset>-<rj>-0-0") {
		t.Error("README execs into the hostname <jobset>-<rj>-0-0, which is not a pod name")
	}
	for _, label := range []string{"jobset.sigs.k8s.io/jobset-name=", "jobset.sigs.k8s.io/replicatedjob-name=", "jobset.sigs.k8s.io/job-index=0", "batch.kubernetes.io/job-completion-index=0"} {
		if !strings.Contains(text, label) {
			t.Errorf("README's kubectl exec does not select by %s", label)
		}
	}
}
