package settings_test

import (
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/jobset"
	"github.com/jobset-flux/jobset-flux/pkg/jobset/jobsettest"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// resolveRunOptions resolves a JobSet whose run-options annotation is
// runOptions over the given function config.
func resolveRunOptions(t *testing.T, config settings.Settings, runOptions string) finding.List {
	t.Helper()
	js := jobsettest.New("mpi").Jobs(jobsettest.Job("w"))
	if runOptions != "" {
		js = js.Annotation("flux-framework.org/run-options", runOptions)
	}
	return resolveJobSet(t, config, js)
}

// resolveJobSet resolves js over config.
func resolveJobSet(t *testing.T, config settings.Settings, js *jobsettest.JobSet) finding.List {
	t.Helper()
	rn, err := yaml.Parse(js.YAML())
	if err != nil {
		t.Fatal(err)
	}
	read, found := jobset.Read(rn)
	if found.HasErrors() {
		t.Fatalf("read: %v", found)
	}
	_, found = settings.Resolve(config, read)
	return found
}

// pmi=pmix alone, in every spelling flux run takes, is warned about at the
// field it came from, naming pmi=simple,pmix; choices that keep simple PMI,
// or set no PMI at all, are not.
func TestPMIXAloneWarns(t *testing.T) {
	const path = "metadata.annotations[flux-framework.org/run-options]"
	warned := map[string]string{ // run-options -> the fix the warning names
		"-o pmi=pmix":       "-o pmi=simple,pmix",
		"-opmi=pmix":        "-o pmi=simple,pmix",
		"-o=pmi=pmix":       "-o pmi=simple,pmix",
		"--setopt=pmi=pmix": "-o pmi=simple,pmix",
		"--setopt pmi=pmix": "-o pmi=simple,pmix",
		"-vopmi=pmix":       "-o pmi=simple,pmix",
		"-uopmi=pmix":       "-o pmi=simple,pmix",
		"-u -o cpu-affinity=per-task -o pmi=pmix": "-o pmi=simple,pmix",
		"-o pmi=simple -o pmi=pmix":               "-o pmi=simple,pmix", // the last one counts
		"-o pmi=pmix,cray-pals":                   "-o pmi=simple,pmix,cray-pals",
	}
	for opts, fix := range warned {
		found := resolveRunOptions(t, settings.Defaults(), opts)
		if len(found) != 1 || found[0].Severity != finding.Warning || found[0].Path != path ||
			!strings.Contains(found[0].Message, fix) || !strings.Contains(found[0].Message, "singleton") {
			t.Errorf("run-options %q: findings %+v; want one warning at %s naming %q", opts, found, path, fix)
		}
	}
	for _, opts := range []string{"", "-o pmi=simple,pmix", "-o pmi=pmix,simple", "-o pmi=simple", "-o pmi=off",
		"-o pmi=pmix -o pmi=simple,pmix", "--env pmi=pmix", "-q pmi=pmix", "-o cpu-affinity=per-task", "-q batch"} {
		if found := resolveRunOptions(t, settings.Defaults(), opts); len(found) != 0 {
			t.Errorf("run-options %q: findings %+v; want none", opts, found)
		}
	}
}

// A site-wide pmi=pmix in the function config is warned about on every
// JobSet, at the config's field.
func TestPMIXAloneFromConfig(t *testing.T) {
	config, found := settings.Config(settings.Layer{Kind: settings.FromConfig, Values: map[string]settings.Raw{
		"run-options": {Value: "-o pmi=pmix", Path: "spec.runOptions"},
	}})
	if len(found) != 0 {
		t.Fatalf("config: %v", found)
	}
	found = resolveRunOptions(t, config, "")
	if len(found) != 1 || found[0].Path != "spec.runOptions" || found[0].Severity != finding.Warning {
		t.Errorf("findings %+v; want one warning at spec.runOptions", found)
	}
}
