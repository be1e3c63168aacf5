package kube

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/test/testsupport"
)

// TestQuickstart runs the README's first command, make quickstart's
// script, on the running cluster (which it reuses): it must print the
// leader's own lines and the JobSet's Completed, exit 0, and make its key
// seed outside the clone, readable by its owner only.
func TestQuickstart(t *testing.T) {
	t.Parallel()
	requireCluster(t)
	config := t.TempDir()
	cmd := exec.CommandContext(t.Context(), "bash", filepath.Join(env.repo, "hack/quickstart.sh"))
	cmd.Dir = env.repo
	// The script's make must not take part in the make that runs test-kube
	// (its job server), and the seed must be the one the script makes.
	cmd.Env = append(environWithout(os.Environ(), "MAKEFLAGS", "MFLAGS", "MAKELEVEL",
		"JOBSET_FLUX_KEY_SEED", "JOBSET_FLUX_KEY_SEED_FILE"), "XDG_CONFIG_HOME="+config)
	out, err := cmd.CombinedOutput()
	t.Cleanup(func() {
		render := filepath.Join(env.repo, "_out/quickstart/broker-tuning.yaml")
		if out, err := kubectl(t.Context(), nil, "delete", "--ignore-not-found", "-f", render); err != nil {
			t.Logf("deleting the quick start's JobSet: %v\n%s", err, out)
		}
	})
	if err != nil {
		t.Fatalf("hack/quickstart.sh: %v\n%s", err, out)
	}
	for _, want := range []string{
		"== the leader's output",
		"schedulable nodes: 3\ntuned-workers-0-0\ntuned-workers-0-1\ntuned-workers-0-2\n",
		"== the JobSet default/tuned ==\nCompleted: ",
		"make kube-down",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the quick start's output lacks %q:\n%s", want, out)
		}
	}
	seed, err := os.Stat(filepath.Join(config, "jobset-flux/seed"))
	if err != nil {
		t.Fatalf("the quick start made no key seed: %v\n%s", err, out)
	}
	if mode := seed.Mode().Perm(); mode != 0o600 {
		t.Errorf("the key seed's mode is %v, want -rw-------", seed.Mode())
	}
}

// environWithout is environ without the variables named.
func environWithout(environ []string, names ...string) []string {
	var kept []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(names, name) {
			kept = append(kept, kv)
		}
	}
	return kept
}

// TestQuickstartScriptLint: the script is shellcheck-clean.
func TestQuickstartScriptLint(t *testing.T) {
	sc, err := exec.LookPath("shellcheck")
	if err != nil {
		testsupport.SkipOrFail(t, "shellcheck not found (.ci/install-system-deps installs it)")
	}
	if out, err := exec.Command(sc, filepath.Join(env.repo, "hack/quickstart.sh")).CombinedOutput(); err != nil {
		t.Errorf("shellcheck: %v\n%s", err, out)
	}
}
