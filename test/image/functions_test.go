package image

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/test/testsupport"
)

// kptExecMutator matches the examples' Kptfile mutator `- exec: jobset-flux`.
var kptExecMutator = regexp.MustCompile(`(?m)^([ \t]*-[ \t]+)exec:[ \t]*jobset-flux[ \t]*$`)

// kptConfigPath matches the mutator's configPath.
var kptConfigPath = regexp.MustCompile(`(?m)^[ \t]+configPath:[ \t]*(\S+)[ \t]*$`)

// kustomizeExecSpec matches the examples' function annotation
// `exec: {path: jobset-flux}` written in block style.
var kustomizeExecSpec = regexp.MustCompile(`(?m)^([ \t]+)exec:[ \t]*\n[ \t]+path:[ \t]*jobset-flux[ \t]*\n`)

// replaceOnce replaces the single match of re in file, or fails the test.
func replaceOnce(t *testing.T, file string, re *regexp.Regexp, repl string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(re.FindAllIndex(data, -1)); n != 1 {
		t.Fatalf("%s: %d matches of %s, want 1 (the example's shape changed: update this test)", file, n, re)
	}
	if err := os.WriteFile(file, re.ReplaceAll(data, []byte(repl)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fnConfig is the file the example's Kptfile mutator names in configPath.
func fnConfig(t *testing.T, dir string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "Kptfile"))
	if err != nil {
		t.Fatal(err)
	}
	m := kptConfigPath.FindAllSubmatch(data, -1)
	if len(m) != 1 {
		t.Fatalf("%s/Kptfile: %d configPath lines, want 1", dir, len(m))
	}
	return string(m[0][1])
}

// changed fails the test when a function run left the package as it was.
func changed(t *testing.T, before, after map[string]string) {
	t.Helper()
	for name, content := range after {
		if before[name] != content {
			return
		}
	}
	t.Fatal("the function changed nothing in the package: the comparison would prove nothing")
}

// TestKptFnEval: `kpt fn eval --image` gives the same package as
// `kpt fn eval --exec` with the exec binary, on every example. The seed
// reaches the container through kpt's --env (the name only: the value
// comes from kpt's environment and stays off the command line).
func TestKptFnEval(t *testing.T) {
	c := needImage(t)
	needTool(t, c.kpt)
	needTool(t, c.bin)
	env := c.withEnv(seedEnv + "=" + c.seed)
	for _, ex := range examples(t, "Kptfile") {
		t.Run(ex.name, func(t *testing.T) {
			config := fnConfig(t, ex.dir)
			viaExec := copyPackage(t, ex.dir, ex.name)
			viaImage := copyPackage(t, ex.dir, ex.name)
			before := readTree(t, viaExec)

			run(t, "", env, c.kpt, "fn", "eval", viaExec, "--exec", c.bin,
				"--fn-config", filepath.Join(viaExec, config))
			run(t, "", env, c.kpt, "fn", "eval", viaImage, "--image", c.image, "--image-pull-policy", "never",
				"--env", seedEnv, "--fn-config", filepath.Join(viaImage, config))

			want := readTree(t, viaExec)
			changed(t, before, want)
			sameTrees(t, "exec", want, "image", readTree(t, viaImage))
		})
	}
}

// TestKptFnRender: a Kptfile pipeline with `image:` renders the same
// package as the example's own `exec:` pipeline. kpt fn render passes no
// environment to container functions, so no seed reaches the image: both
// packages start with the CURVE Secret a seeded exec run generated, which
// the function keeps (as it does on every re-render of a package).
func TestKptFnRender(t *testing.T) {
	c := needImage(t)
	needTool(t, c.kpt)
	needTool(t, c.bin)
	env := c.withEnv(seedEnv + "=" + c.seed)
	for _, ex := range examples(t, "Kptfile") {
		t.Run(ex.name, func(t *testing.T) {
			// The Secrets: whatever a seeded exec run adds that is a Secret.
			seeded := copyPackage(t, ex.dir, ex.name)
			pristine := readTree(t, seeded)
			run(t, "", env, c.kpt, "fn", "eval", seeded, "--exec", c.bin,
				"--fn-config", filepath.Join(seeded, fnConfig(t, ex.dir)))
			secrets := map[string]string{}
			for name, content := range readTree(t, seeded) {
				if _, ok := pristine[name]; !ok && strings.Contains(content, "\nkind: Secret\n") {
					secrets[name] = content
				}
			}

			viaExec := copyPackage(t, ex.dir, ex.name)
			viaImage := copyPackage(t, ex.dir, ex.name)
			for _, dir := range []string{viaExec, viaImage} {
				for name, content := range secrets {
					if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			replaceOnce(t, filepath.Join(viaImage, "Kptfile"), kptExecMutator, "${1}image: "+c.image)
			before := readTree(t, viaExec)

			run(t, "", env, c.kpt, "fn", "render", viaExec, "--allow-exec")
			run(t, "", env, c.kpt, "fn", "render", viaImage, "--image-pull-policy", "never")

			want := readTree(t, viaExec)
			changed(t, before, want)
			sameTrees(t, "exec pipeline", want, "image pipeline", readTree(t, viaImage), "Kptfile")
		})
	}
}

// TestKustomizeContainer: a `container:` function spec gives the same
// `kustomize build` output as the example's `exec:` spec. The seed goes
// through the spec's envs, by name, from kustomize's environment.
func TestKustomizeContainer(t *testing.T) {
	c := needImage(t)
	needTool(t, c.kustomize)
	needTool(t, c.bin)
	env := c.withEnv(seedEnv + "=" + c.seed)
	for _, ex := range examples(t, "kustomization.yaml", "flux.yaml") {
		t.Run(ex.name, func(t *testing.T) {
			want := run(t, "", env, c.kustomize, "build", "--enable-alpha-plugins", "--enable-exec", ex.dir)
			if !strings.Contains(string(want), "\nkind: ConfigMap\n") {
				t.Fatalf("the exec function generated no ConfigMap: the comparison would prove nothing:\n%s", want)
			}

			dir := copyPackage(t, ex.dir, ex.name)
			replaceOnce(t, filepath.Join(dir, "flux.yaml"), kustomizeExecSpec,
				"${1}container:\n${1}  image: "+c.image+"\n${1}  envs:\n${1}    - "+seedEnv+"\n")
			// No --enable-exec: only the container can have run.
			got := run(t, "", env, c.kustomize, "build", "--enable-alpha-plugins", dir)
			if string(got) != string(want) {
				t.Errorf("kustomize output differs (exec vs container): %s", testsupport.FirstDifference(string(got), string(want)))
			}
		})
	}
}
