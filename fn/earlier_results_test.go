package main

import (
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// Issue 19, class 9: an error result already in the input (an earlier
// function's) fails the run with exit 1, as the [error] it prints says;
// it is printed apart from this function's results and kept in the
// output. A warning from an earlier function does not fail it.
func TestEarlierResults(t *testing.T) {
	warning := strings.ReplaceAll(earlierError, "severity: error", "severity: warning")
	for _, tc := range []struct {
		name    string
		results string
		exit    int
		stderr  []string
	}{
		{"error", earlierError, exitFailed, []string{
			"the input already holds 1 result(s) of an earlier function",
			"[error] v1/ConfigMap/other: the earlier function found a problem",
			"exit 1: the input already holds an error result",
		}},
		{"warning", warning, exitOK, []string{"[warning] v1/ConfigMap/other: the earlier function found a problem"}},
		{"error in the items form", "results:\n  items:\n" + indentBy(strings.TrimPrefix(earlierError, "results:\n"), "  "), exitFailed, []string{"exit 1: the input already holds an error result"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := listHeader + "items:\n" + indentItem(goodJobSet) + tc.results
			code, out, stderr := runFn(t, nil, in)
			if code != tc.exit {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tc.exit, stderr)
			}
			for _, p := range tc.stderr {
				if !strings.Contains(stderr, p) {
					t.Errorf("stderr lacks %q:\n%s", p, stderr)
				}
			}
			rl, err := fn.ParseResourceList([]byte(out))
			if err != nil {
				t.Fatalf("the output is not a ResourceList: %v\n%s", err, out)
			}
			if len(rl.Results) < 2 || rl.Results[0].Message != "the earlier function found a problem" {
				t.Errorf("the earlier result is not kept first in the output: %s", dumpResults(rl.Results))
			}
			if !strings.Contains(out, "name: good-flux-entrypoint") {
				t.Errorf("the JobSet was not rendered")
			}
		})
	}
	t.Run("none", func(t *testing.T) {
		code, _, stderr := runFn(t, nil, listHeader+"items:\n"+indentItem(goodJobSet))
		if code != exitOK || strings.Contains(stderr, "earlier function") {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
	})
}
