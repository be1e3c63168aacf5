package kustomize

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestExamplesStandalone: for every example, the standalone kustomize build
// that users run gives expected.yaml byte for byte.
func TestExamplesStandalone(t *testing.T) {
	tl := needTools(t)
	env := tl.env(true, exampleSeed)
	for _, dir := range tl.examples(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join(dir, "expected.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			r := tl.build(t, env, dir, execFlags...)
			if r.code != 0 {
				t.Fatalf("kustomize build --enable-alpha-plugins --enable-exec %s: %v", dir, r)
			}
			if !bytes.Equal(r.stdout, want) {
				t.Errorf("output differs from %s/expected.yaml (rewrite it with `make expected` only if the change is intended): %s",
					dir, firstDifference(r.stdout, want))
			}
			if bytes.Contains(r.stderr, []byte("random CURVE key")) {
				t.Errorf("with %s set the function still warned about random keys:\n%s", seedEnv, r.stderr)
			}
		})
	}
}

// TestExamplesInProcess: krusty, the library behind kustomize build (and
// behind tools that embed kustomize), gives the same bytes.
func TestExamplesInProcess(t *testing.T) {
	tl := needTools(t)
	tl.setEnv(t, true, exampleSeed)
	for _, dir := range tl.examples(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join(dir, "expected.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := buildInProcess(dir)
			if err != nil {
				t.Fatalf("krusty: %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("krusty output differs from %s/expected.yaml: %s", dir, firstDifference(got, want))
			}
		})
	}
}

// TestDeterminism: with the seed two builds are byte-identical; without it
// the function warns on stderr, and the Secret really differs.
func TestDeterminism(t *testing.T) {
	tl := needTools(t)
	dir := tl.examples(t)[0]

	seeded := tl.env(true, exampleSeed)
	first, second := tl.mustBuild(t, seeded, dir), tl.mustBuild(t, seeded, dir)
	if !bytes.Equal(first, second) {
		t.Errorf("two seeded builds of %s differ: %s", dir, firstDifference(second, first))
	}

	random := tl.env(true, "")
	a := tl.build(t, random, dir, execFlags...)
	b := tl.build(t, random, dir, execFlags...)
	for _, r := range []result{a, b} {
		if r.code != 0 {
			t.Fatalf("unseeded build of %s: %v", dir, r)
		}
		if !strings.Contains(string(r.stderr), "[warning] ") || !strings.Contains(string(r.stderr), "generated a random CURVE key") {
			t.Errorf("unseeded build: no warning about the random key on stderr; stderr:\n%s", r.stderr)
		}
		if !strings.Contains(string(r.stderr), seedEnv) {
			t.Errorf("the random-key warning does not name %s, the way to fix it:\n%s", seedEnv, r.stderr)
		}
	}
	if bytes.Equal(a.stdout, b.stdout) {
		t.Errorf("two unseeded builds are identical: the keys are not random")
	}
}

// TestWithoutEnableExec backs the README warning. kustomize runs an exec
// function only with both --enable-alpha-plugins and --enable-exec:
//   - with neither flag (plain `kustomize build`) it refuses the transformer
//     and fails, naming the function config's kind;
//   - with --enable-alpha-plugins alone it exits 0 and silently leaves the
//     JobSet unrendered: no flux-installer, no ConfigMap, no Secret.
func TestWithoutEnableExec(t *testing.T) {
	tl := needTools(t)
	env := tl.env(true, exampleSeed)
	for _, dir := range tl.examples(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			r := tl.build(t, env, dir)
			if r.code == 0 {
				t.Errorf("kustomize build %s without flags exited 0; expected it to refuse the external transformer", dir)
			}
			if !strings.Contains(string(r.stderr), "external plugins disabled") {
				t.Errorf("kustomize build %s without flags: stderr does not say external plugins are disabled:\n%s", dir, r.stderr)
			}

			r = tl.build(t, env, dir, "--enable-alpha-plugins")
			if r.code != 0 {
				t.Fatalf("kustomize build --enable-alpha-plugins %s: %v", dir, r)
			}
			assertUnrendered(t, r.stdout)
			if len(bytes.TrimSpace(r.stderr)) != 0 {
				t.Errorf("the skip was not silent; stderr:\n%s", r.stderr)
			}
		})
	}
}

// TestKubectlKustomize: `kubectl kustomize` embeds kustomize but has no
// --enable-exec, so the best it can do is the same silent skip. kubectl is
// not one of the tools this suite requires: without it the test is skipped.
func TestKubectlKustomize(t *testing.T) {
	tl := needTools(t)
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not installed")
	}
	env := tl.env(true, exampleSeed)
	dir := tl.examples(t)[0]
	if r := run(t, env, kubectl, "kustomize", dir); r.code == 0 {
		t.Errorf("kubectl kustomize %s exited 0 without --enable-alpha-plugins", dir)
	}
	r := run(t, env, kubectl, "kustomize", "--enable-alpha-plugins", dir)
	if r.code != 0 {
		t.Fatalf("kubectl kustomize --enable-alpha-plugins %s: %v", dir, r)
	}
	assertUnrendered(t, r.stdout)
}

// assertUnrendered checks that no JobSet in out was rendered for Flux and
// that nothing was generated.
func assertUnrendered(t *testing.T, out []byte) {
	t.Helper()
	objs := parse(t, out)
	for _, o := range objs {
		if o.Metadata.Labels["app.kubernetes.io/managed-by"] == "jobset-flux" {
			t.Errorf("%s/%s was generated by jobset-flux, but the function should not have run", o.Kind, o.Metadata.Name)
		}
		if o.Kind != "JobSet" {
			continue
		}
		js := objs.jobSet(t, o.Metadata.Name)
		for i := range js.Spec.ReplicatedJobs {
			ps := podSpec(js, i)
			for _, c := range ps.InitContainers {
				if c.Name == "flux-installer" {
					t.Errorf("JobSet %s has a flux-installer init container: it was rendered", js.Name)
				}
			}
			for _, c := range ps.Containers {
				if len(c.Command) > 0 && strings.HasSuffix(c.Command[0], "/entrypoint.sh") {
					t.Errorf("JobSet %s container %s runs %s: it was rendered", js.Name, c.Name, c.Command[0])
				}
			}
		}
	}
}
