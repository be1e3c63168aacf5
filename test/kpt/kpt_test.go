package kpt

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/test/testsupport"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

const (
	entrypoint    = "/mnt/flux/config/entrypoint.sh"
	tasksPerNode  = "flux-framework.org/tasks-per-node"
	queuePolicy   = "flux-framework.org/queue-policy"
	managedBy     = "app.kubernetes.io/managed-by"
	jobsetAPI     = "jobset.x-k8s.io/v1alpha2"
	tasksPerField = "metadata.annotations[" + tasksPerNode + "]"
)

// item is one object of a package, with the file that holds it.
type item struct {
	file string // relative to the package
	node *yaml.RNode
}

func (it item) id() string {
	return fmt.Sprintf("%s/%s/%s (%s)", it.node.GetKind(), it.node.GetNamespace(), it.node.GetName(), it.file)
}

// readPackage reads every object of every *.yaml file under dir, as kpt
// does: not the Kptfile (no .yaml suffix), nothing under a hidden
// directory, and not the files the package's .krmignore names (plain
// names and globs are enough for the packages here).
func readPackage(t *testing.T, dir string) []item {
	t.Helper()
	var ignore []string
	if data, err := os.ReadFile(filepath.Join(dir, ".krmignore")); err == nil {
		for line := range strings.Lines(string(data)) {
			if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
				ignore = append(ignore, strings.TrimSuffix(line, "/"))
			}
		}
	}
	ignored := func(name string) bool {
		return slices.ContainsFunc(ignore, func(pattern string) bool {
			match, _ := filepath.Match(pattern, name)
			return match || strings.HasPrefix(name, pattern+"/")
		})
	}
	var items []item
	for name, data := range snapshot(t, dir) {
		if !strings.HasSuffix(name, ".yaml") || strings.HasPrefix(name, ".") || ignored(name) {
			continue
		}
		nodes, err := kio.FromBytes(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, n := range nodes {
			items = append(items, item{name, n})
		}
	}
	slices.SortFunc(items, func(a, b item) int { return strings.Compare(a.id(), b.id()) })
	return items
}

// find returns the package's objects of kind and name.
func find(items []item, kind, name string) []item {
	var out []item
	for _, it := range items {
		if it.node.GetKind() == kind && it.node.GetName() == name {
			out = append(out, it)
		}
	}
	return out
}

// one returns the single object of kind and name, failing otherwise.
func one(t *testing.T, items []item, kind, name string) item {
	t.Helper()
	found := find(items, kind, name)
	if len(found) != 1 {
		var ids []string
		for _, it := range items {
			ids = append(ids, it.id())
		}
		t.Fatalf("want exactly one %s %s in the package, found %d; the package holds %v", kind, name, len(found), ids)
	}
	return found[0]
}

// jobSetNames are the names of the package's JobSets marked for Flux.
func jobSetNames(t *testing.T, items []item) []string {
	t.Helper()
	var names []string
	for _, it := range items {
		if it.node.GetKind() == "JobSet" && it.node.GetAnnotations()["flux-framework.org/enabled"] == "true" {
			names = append(names, it.node.GetName())
		}
	}
	if len(names) == 0 {
		t.Fatal("the package has no JobSet marked flux-framework.org/enabled")
	}
	return names
}

// checkGenerated asserts that each Flux JobSet's ConfigMap and Secret are
// in their own files next to the JobSet's file, named <kind>_<name>.yaml,
// and that nothing else was added.
func checkGenerated(t *testing.T, before map[string][]byte, dir string) []item {
	t.Helper()
	items := readPackage(t, dir)
	var want []string
	for _, name := range jobSetNames(t, items) {
		js := one(t, items, "JobSet", name)
		at := filepath.Dir(js.file)
		for _, g := range []struct{ kind, name string }{
			{"ConfigMap", name + "-flux-entrypoint"},
			{"Secret", name + "-flux-curve"},
		} {
			obj := one(t, items, g.kind, g.name)
			file := filepath.Join(at, strings.ToLower(g.kind)+"_"+g.name+".yaml")
			if obj.file != file {
				t.Errorf("%s %s is in %s, want %s (next to its JobSet)", g.kind, g.name, obj.file, file)
			}
			if obj.node.GetLabels()[managedBy] != "jobset-flux" {
				t.Errorf("%s %s lacks %s=jobset-flux", g.kind, g.name, managedBy)
			}
			if obj.node.GetNamespace() != js.node.GetNamespace() {
				t.Errorf("%s %s is in namespace %q, its JobSet in %q", g.kind, g.name, obj.node.GetNamespace(), js.node.GetNamespace())
			}
			for k := range obj.node.GetAnnotations() {
				if strings.HasPrefix(k, "internal.config.kubernetes.io/") || strings.HasPrefix(k, "config.kubernetes.io/path") {
					t.Errorf("%s %s was written with kpt's bookkeeping annotation %s", g.kind, g.name, k)
				}
			}
			want = append(want, "added "+file)
		}
	}
	var added []string
	for _, c := range changes(before, snapshot(t, dir)) {
		if strings.HasPrefix(c, "added ") || strings.HasPrefix(c, "removed ") {
			added = append(added, c)
		}
	}
	slices.Sort(want)
	if !slices.Equal(added, want) {
		t.Errorf("files added or removed: %v, want %v", added, want)
	}
	return items
}

// sameAsKustomize asserts that the objects of the rendered package are the
// objects of the example's expected.yaml (kustomize's output with the same
// seed), compared as data: kpt keeps the package's comments and order.
func sameAsKustomize(t *testing.T, items []item, example string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(example, "expected.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := kio.FromBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range want {
		got := one(t, items, w.GetKind(), w.GetName())
		gm, err := got.node.Map()
		if err != nil {
			t.Fatal(err)
		}
		wm, err := w.Map()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(gm, wm) {
			gs, _ := got.node.String()
			ws, _ := w.String()
			t.Errorf("%s %s differs from kustomize's (expected.yaml)\nkpt:\n%s\nkustomize:\n%s", w.GetKind(), w.GetName(), gs, ws)
		}
	}
}

// TestEvalExamples: `kpt fn eval DIR --exec <abs bin> --fn-config flux.yaml`
// on a copy of each example writes the ConfigMap and the Secret as files
// next to the JobSet, and the objects equal kustomize's.
func TestEvalExamples(t *testing.T) {
	needTools(t)
	for _, ex := range examples(t) {
		t.Run(filepath.Base(ex), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), filepath.Base(ex))
			copyPackage(t, ex, dir)
			before := snapshot(t, dir)
			mustKpt(t, dir, seeded(), "fn", "eval", dir, "--exec", setup.fn, "--fn-config", filepath.Join(dir, "flux.yaml"))
			sameAsKustomize(t, checkGenerated(t, before, dir), ex)
		})
	}
}

// TestRenderExamples: `kpt fn render DIR --allow-exec` runs the Kptfile
// pipeline (exec: jobset-flux, on PATH); a second render changes no file.
func TestRenderExamples(t *testing.T) {
	needTools(t)
	for _, ex := range examples(t) {
		t.Run(filepath.Base(ex), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), filepath.Base(ex))
			copyPackage(t, ex, dir)
			before := snapshot(t, dir)
			mustKpt(t, "/", seeded(), "fn", "render", dir, "--allow-exec")
			sameAsKustomize(t, checkGenerated(t, before, dir), ex)

			first := snapshot(t, dir)
			mustKpt(t, "/", seeded(), "fn", "render", dir, "--allow-exec")
			if c := changes(first, snapshot(t, dir)); len(c) > 0 {
				t.Errorf("a second render changed the package: %v", c)
			}
		})
	}
}

// TestRenderAfterEdit is the kpt workflow: render, edit a setting on the
// rendered JobSet (queue-policy, which no example sets to conservative and
// which every example's broker.toml shows), render again. Without a seed,
// so that a regenerated Secret would show: the ConfigMap follows the edit,
// the Secret is kept byte for byte, no object is duplicated, and the
// container command is wrapped only once.
func TestRenderAfterEdit(t *testing.T) {
	needTools(t)
	for _, ex := range examples(t) {
		t.Run(filepath.Base(ex), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), filepath.Base(ex))
			copyPackage(t, ex, dir)
			env := unseeded()
			mustKpt(t, "/", env, "fn", "render", dir, "--allow-exec")
			items := readPackage(t, dir)
			name := jobSetNames(t, items)[0]
			js := one(t, items, "JobSet", name)
			cmFile := one(t, items, "ConfigMap", name+"-flux-entrypoint").file
			secretFile := one(t, items, "Secret", name+"-flux-curve").file
			first := snapshot(t, dir)

			setAnnotation(t, filepath.Join(dir, js.file), name, queuePolicy, "conservative")
			r := mustKpt(t, "/", env, "fn", "render", dir, "--allow-exec")
			if strings.Contains(r.stderr, "random CURVE key") {
				t.Errorf("the re-render generated a new random key although the Secret is in the package:\n%s", r.stderr)
			}
			second := snapshot(t, dir)
			if c := changes(first, second); !slices.Contains(c, "changed "+cmFile) {
				t.Errorf("the ConfigMap did not follow the edit; changed files: %v", c)
			} else if slices.ContainsFunc(c, func(s string) bool { return !strings.HasPrefix(s, "changed ") }) {
				t.Errorf("the re-render added or removed files: %v", c)
			}
			if string(first[secretFile]) != string(second[secretFile]) {
				t.Errorf("the re-render replaced the Secret in %s", secretFile)
			}
			items = readPackage(t, dir)
			cm := one(t, items, "ConfigMap", name+"-flux-entrypoint").node
			broker := ""
			if n, _ := cm.Pipe(yaml.Lookup("data", "broker.toml")); n != nil {
				broker = n.YNode().Value
			}
			if !strings.Contains(broker, "queue-policy = 'conservative'") {
				t.Errorf("broker.toml does not show the edited queue-policy:\n%s", broker)
			}
			for _, kind := range []string{"JobSet", "ConfigMap", "Secret"} {
				for _, it := range items {
					if it.node.GetKind() == kind && len(find(items, kind, it.node.GetName())) != 1 {
						t.Errorf("%s %s is in the package more than once", kind, it.node.GetName())
					}
				}
			}
			checkWrappedOnce(t, one(t, items, "JobSet", name).node)

			third := snapshot(t, dir)
			mustKpt(t, "/", env, "fn", "render", dir, "--allow-exec")
			if c := changes(third, snapshot(t, dir)); len(c) > 0 {
				t.Errorf("rendering the edited package again changed it: %v", c)
			}
		})
	}
}

// setAnnotation sets an annotation on the JobSet name in file, keeping the
// rest of the file (comments, order) as kyaml reads and writes it.
func setAnnotation(t *testing.T, file, name, key, value string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := kio.FromBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, n := range nodes {
		if n.GetKind() == "JobSet" && n.GetName() == name {
			if err := n.PipeE(yaml.SetAnnotation(key, value)); err != nil {
				t.Fatal(err)
			}
			found = true
		}
	}
	if !found {
		t.Fatalf("no JobSet %s in %s", name, file)
	}
	out, err := kio.StringAll(nodes)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkWrappedOnce asserts that no container of the JobSet runs the
// entrypoint more than once and that its Flux init container, volumes and
// mounts are not repeated.
func checkWrappedOnce(t *testing.T, js *yaml.RNode) {
	t.Helper()
	jobs, err := js.Pipe(yaml.Lookup("spec", "replicatedJobs"))
	if err != nil || jobs == nil {
		t.Fatalf("JobSet %s has no spec.replicatedJobs: %v", js.GetName(), err)
	}
	wrapped := 0
	for _, rj := range jobs.Content() {
		pod, err := yaml.NewRNode(rj).Pipe(yaml.Lookup("template", "spec", "template", "spec"))
		if err != nil || pod == nil {
			t.Fatalf("replicatedJob without a pod template: %v", err)
		}
		names := func(field string) []string {
			var out []string
			list, _ := pod.Pipe(yaml.Lookup(field))
			if list == nil {
				return nil
			}
			for _, el := range list.Content() {
				out = append(out, yaml.NewRNode(el).Field("name").Value.YNode().Value)
			}
			return out
		}
		for _, field := range []string{"initContainers", "volumes"} {
			if n := names(field); hasDuplicate(n) {
				t.Errorf("JobSet %s: %s repeat a name: %v", js.GetName(), field, n)
			}
		}
		containers, _ := pod.Pipe(yaml.Lookup("containers"))
		for _, c := range containers.Content() {
			cn := yaml.NewRNode(c)
			var words []string
			for _, f := range []string{"command", "args"} {
				if seq, _ := cn.Pipe(yaml.Lookup(f)); seq != nil {
					for _, w := range seq.Content() {
						words = append(words, w.Value)
					}
				}
			}
			count := 0
			for _, w := range words {
				if w == entrypoint {
					count++
				}
			}
			if count > 1 {
				t.Errorf("JobSet %s: a container runs %s %d times: %q", js.GetName(), entrypoint, count, words)
			}
			wrapped += count
			var mounts []string
			if seq, _ := cn.Pipe(yaml.Lookup("volumeMounts")); seq != nil {
				for _, m := range seq.Content() {
					mounts = append(mounts, yaml.NewRNode(m).Field("mountPath").Value.YNode().Value)
				}
			}
			if hasDuplicate(mounts) {
				t.Errorf("JobSet %s: a container mounts a path twice: %v", js.GetName(), mounts)
			}
		}
	}
	if wrapped == 0 {
		t.Errorf("JobSet %s: no container runs %s", js.GetName(), entrypoint)
	}
}

func hasDuplicate(s []string) bool {
	seen := map[string]bool{}
	for _, v := range s {
		if seen[v] {
			return true
		}
		seen[v] = true
	}
	return false
}

// functionResults is the part of kpt's results file the tests read.
type functionResults struct {
	ExitCode int `yaml:"exitCode"`
	Items    []struct {
		Exec     string `yaml:"exec"`
		ExitCode int    `yaml:"exitCode"`
		Stderr   string `yaml:"stderr"`
		Results  []struct {
			Message     string `yaml:"message"`
			Severity    string `yaml:"severity"`
			ResourceRef struct {
				APIVersion string `yaml:"apiVersion"`
				Kind       string `yaml:"kind"`
				Name       string `yaml:"name"`
				Namespace  string `yaml:"namespace"`
			} `yaml:"resourceRef"`
			Field struct {
				Path         string `yaml:"path"`
				CurrentValue string `yaml:"currentValue"`
			} `yaml:"field"`
			File struct {
				Path string `yaml:"path"`
			} `yaml:"file"`
		} `yaml:"results"`
	} `yaml:"items"`
}

// TestResultsDir: on a broken package (tasks-per-node "0") both kpt fn
// render and kpt fn eval exit non-zero, change no file, print the
// function's error line, and --results-dir holds the error with the
// resource, the field path, its value and the file.
func TestResultsDir(t *testing.T) {
	needTools(t)
	ex := examples(t)[0]
	for _, mode := range []string{"render", "eval"} {
		t.Run(mode, func(t *testing.T) {
			tmp := t.TempDir()
			dir, results := filepath.Join(tmp, filepath.Base(ex)), filepath.Join(tmp, "results")
			copyPackage(t, ex, dir)
			items := readPackage(t, dir)
			name := jobSetNames(t, items)[0]
			js := one(t, items, "JobSet", name)
			setAnnotation(t, filepath.Join(dir, js.file), name, tasksPerNode, "0")
			before := snapshot(t, dir)

			args := []string{"fn", "render", dir, "--allow-exec", "--results-dir", results}
			exec := filepath.Base(setup.fn)
			if mode == "eval" {
				args = []string{"fn", "eval", dir, "--exec", setup.fn, "--fn-config", filepath.Join(dir, "flux.yaml"), "--results-dir", results}
				exec = setup.fn
			}
			r := kpt(t, "/", seeded(), args...)
			if r.code == 0 {
				t.Fatalf("kpt fn %s exited 0 on a broken package: %v", mode, r)
			}
			id := name
			if ns := js.node.GetNamespace(); ns != "" {
				id = ns + "/" + name
			}
			line := fmt.Sprintf("[error] %s/JobSet/%s %s: ", jobsetAPI, id, tasksPerField)
			if !strings.Contains(r.stderr, line) {
				t.Errorf("stderr lacks %q:\n%s", line, r.stderr)
			}
			if c := changes(before, snapshot(t, dir)); len(c) > 0 {
				t.Errorf("a failed %s changed the package: %v", mode, c)
			}

			data, err := os.ReadFile(filepath.Join(results, "results.yaml"))
			if err != nil {
				t.Fatalf("no results file: %v", err)
			}
			var fr functionResults
			if err := yaml.Unmarshal(data, &fr); err != nil {
				t.Fatalf("results.yaml: %v\n%s", err, data)
			}
			if fr.ExitCode == 0 || len(fr.Items) != 1 || fr.Items[0].Exec != exec || fr.Items[0].ExitCode == 0 {
				t.Fatalf("results.yaml: want exitCode != 0 and one failed item for exec %s:\n%s", exec, data)
			}
			found := false
			for _, res := range fr.Items[0].Results {
				ref := res.ResourceRef
				if res.Severity == "error" && ref.APIVersion == jobsetAPI && ref.Kind == "JobSet" && ref.Name == name && ref.Namespace == js.node.GetNamespace() &&
					res.Field.Path == tasksPerField && res.Field.CurrentValue == "0" && res.File.Path == js.file {
					found = true
				}
			}
			if !found {
				t.Errorf("results.yaml has no error result for JobSet %s, field %s (value \"0\"), file %s:\n%s", name, tasksPerField, js.file, data)
			}
		})
	}
}

// TestExamplePackagesAsShipped renders each example directory exactly as
// the repository ships it, as a user following the Kptfile would
// (`kpt fn render examples/NAME --allow-exec`). kpt reads every YAML file
// of the directory, so expected.yaml (kustomize's output, kept beside the
// package) must be excluded by the example's .krmignore; otherwise kpt
// passes its rendered JobSet next to jobset.yaml and the function rejects
// the duplicate. The other tests copy the packages without expected.yaml,
// so that they test the function, and this one the packaging.
func TestExamplePackagesAsShipped(t *testing.T) {
	needTools(t)
	for _, ex := range examples(t) {
		t.Run(filepath.Base(ex), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), filepath.Base(ex))
			testsupport.CopyTree(t, ex, dir, nil)
			before := snapshot(t, dir)
			r := kpt(t, "/", seeded(), "fn", "render", dir, "--allow-exec")
			if r.code != 0 {
				t.Fatalf("kpt fn render examples/%s --allow-exec fails on the package as shipped "+
					"(add examples/%s/.krmignore listing expected.yaml): %v", filepath.Base(ex), filepath.Base(ex), r)
			}
			checkGenerated(t, before, dir)
		})
	}
}
