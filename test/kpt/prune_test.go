package kpt

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/test/testsupport"
)

// pruneJobSet is the JobSet of the package, before it is renamed.
const pruneJobSet = `apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: old
  namespace: research
  annotations:
    flux-framework.org/enabled: "true"
spec:
  replicatedJobs:
    - name: node
      template:
        spec:
          completions: 2
          template:
            spec:
              containers:
                - name: app
                  image: registry.example/app:3
                  command: [app]
`

const pruneKptfile = `apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: blueprint
  annotations:
    config.kubernetes.io/local-config: "true"
pipeline:
  mutators:
    - exec: jobset-flux
`

// TestPkgGetThenRename: a package rendered upstream and fetched with kpt
// pkg get carries kpt's internal.kpt.dev/upstream-identifier annotation
// (and a kpt-merge comment) on every object; the generated objects are
// still the function's, so renaming the JobSet downstream removes them.
func TestPkgGetThenRename(t *testing.T) {
	needTools(t)
	git, err := exec.LookPath("git")
	if err != nil {
		testsupport.SkipOrFail(t, "kpt pkg get needs git: %v", err)
	}
	up := filepath.Join(t.TempDir(), "up")
	pkg := filepath.Join(up, "blueprint")
	writeFile(t, filepath.Join(pkg, "Kptfile"), pruneKptfile)
	writeFile(t, filepath.Join(pkg, "jobset.yaml"), pruneJobSet)
	mustKpt(t, up, seeded(), "fn", "render", pkg, "--allow-exec")
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.email=test@example.com", "-c", "user.name=test", "commit", "-q", "-m", "upstream"}} {
		cmd := exec.Command(git, args...)
		cmd.Dir = up
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	down := filepath.Join(t.TempDir(), "down")
	mustKpt(t, filepath.Dir(down), seeded(), "pkg", "get", "file://"+up+".git/blueprint", down)
	secret := readFile(t, filepath.Join(down, "secret_old-flux-curve.yaml"))
	if !strings.Contains(secret, "internal.kpt.dev/upstream-identifier") {
		t.Fatalf("kpt pkg get no longer adds its upstream identifier; this test proves nothing:\n%s", secret)
	}
	js := filepath.Join(down, "jobset.yaml")
	writeFile(t, js, strings.Replace(readFile(t, js), "  name: old\n", "  name: new\n", 1))
	before := snapshot(t, down)
	r := mustKpt(t, down, seeded(), "fn", "render", down, "--allow-exec")
	got := strings.Join(changes(before, snapshot(t, down)), "\n")
	for _, want := range []string{"removed configmap_old-flux-entrypoint.yaml", "removed secret_old-flux-curve.yaml", "added configmap_new-flux-entrypoint.yaml", "added secret_new-flux-curve.yaml"} {
		if !strings.Contains(got, want) {
			t.Errorf("after the rename, want %q among the changes:\n%s\n%v", want, got, r)
		}
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
