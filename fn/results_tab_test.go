package main

import (
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// TestInheritedResultWithTab: a result an earlier function left, whose
// message's first line starts with a tab (a string the SDK cannot write
// as YAML), passes through the KRM path and reads back unchanged; the
// run is not turned into a write failure (issue 19, class 3).
func TestInheritedResultWithTab(t *testing.T) {
	const msg = "\tfirst line\n\tsecond line"
	in := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" +
		"- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: kept}\n  data: {k: v}\n" +
		"results:\n- message: \"\\tfirst line\\n\\tsecond line\"\n  severity: warning\n"
	code, stdout, stderr := runFn(t, nil, in)
	if code != exitOK {
		t.Fatalf("exit %d, want %d\nstderr: %s\nstdout: %s", code, exitOK, stderr, stdout)
	}
	rl, err := fn.ParseResourceList([]byte(stdout))
	if err != nil {
		t.Fatalf("the output does not read back: %v\n%s", err, stdout)
	}
	if len(rl.Items) != 1 || rl.Items[0].GetName() != "kept" {
		t.Errorf("items %v, want ConfigMap kept alone", rl.Items)
	}
	found := false
	for _, r := range rl.Results {
		found = found || (r.Message == msg && r.Severity == fn.Warning)
	}
	if !found {
		t.Errorf("the inherited result is not in the output unchanged:\n%s", stdout)
	}
	if strings.Contains(stdout, "placeholder") {
		t.Errorf("a placeholder was left in the output:\n%s", stdout)
	}
}
