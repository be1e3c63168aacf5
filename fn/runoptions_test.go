package main

import (
	"strings"
	"testing"
)

// Issue 19, class 9: a site-wide runOptions in the function config no
// longer blocks every launcher JobSet: the JobSet clears it with
// flux-framework.org/run-options: "" (the annotation layer is above the
// config's), and without that it is still told why and where.
func TestLauncherClearsSiteRunOptions(t *testing.T) {
	config := functionConfig("apiVersion: fn.flux-framework.org/v1alpha1\nkind: JobSetFlux\nmetadata: {name: flux}\nspec:\n  runOptions: [\"-o\", \"cpu-affinity=per-task\"]\n")
	launcher := func(extra string) string {
		js := strings.Replace(goodJobSet, "    flux-framework.org/enabled: \"true\"\n",
			"    flux-framework.org/enabled: \"true\"\n    flux-framework.org/launcher: \"true\"\n"+extra, 1)
		return listHeader + "items:\n" + indentItem(js) + config
	}
	code, out, stderr := runFn(t, nil, launcher("    flux-framework.org/run-options: \"\"\n"))
	if code != exitOK || !strings.Contains(out, "name: good-flux-entrypoint") {
		t.Errorf("run-options cleared on the launcher JobSet: exit %d, stderr:\n%s", code, stderr)
	}
	if items, _, _ := strings.Cut(out, "\nfunctionConfig:"); strings.Contains(items, "cpu-affinity") {
		t.Errorf("the config's run options reached the launcher JobSet:\n%s", out)
	}
	code, _, stderr = runFn(t, nil, launcher(""))
	if code != exitFailed || !strings.Contains(stderr, "run-options shapes the flux run") {
		t.Errorf("the config's run-options on a launcher JobSet: exit %d, stderr %q; want the launcher error", code, stderr)
	}
	// A JobSet that is not a launcher keeps the site's options.
	code, out, stderr = runFn(t, nil, listHeader+"items:\n"+indentItem(goodJobSet)+config)
	if items, _, _ := strings.Cut(out, "\nfunctionConfig:"); code != exitOK || !strings.Contains(items, "cpu-affinity=per-task") {
		t.Errorf("a plain JobSet lost the config's run options: exit %d, stderr %q", code, stderr)
	}
}
