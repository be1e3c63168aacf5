package apiserver

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// keySeed makes the function's CURVE key deterministic (contract: at least 32 bytes).
const keySeed = "jobset-flux-apiserver-test-seed-0123456789"

// render runs the real bin/jobset-flux over files and returns the objects it
// printed. A missing binary or a non-zero exit fails the test.
func render(t *testing.T, files ...string) []*unstructured.Unstructured {
	t.Helper()
	bin := jobsetFluxBin()
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("the function binary is missing (run `make build`): %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, files...)
	cmd.Env = append(os.Environ(), "JOBSET_FLUX_KEY_SEED="+keySeed)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\nstderr:\n%s", bin, files, err, stderr.String())
	}
	objs, err := decodeObjects(stdout.Bytes())
	if err != nil {
		t.Fatalf("%s %v printed unparsable YAML: %v\n%s", bin, files, err, stdout.String())
	}
	if len(objs) == 0 {
		t.Fatalf("%s %v printed no objects", bin, files)
	}
	diffs, err := yamlReadingDiffs(stdout.Bytes())
	if err != nil {
		t.Errorf("%s %v: %v", bin, files, err)
	}
	for _, d := range diffs {
		t.Errorf("output read differently by kubectl and by kyaml: %s", d)
	}
	return objs
}

// renderObject writes obj as YAML to a temporary file and renders it.
func renderObject(t *testing.T, obj map[string]any) []*unstructured.Unstructured {
	t.Helper()
	data, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "jobset.yaml")
	if err := os.WriteFile(f, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return render(t, f)
}

// fluxJobSets returns the JobSets in objs, sorted by name.
func fluxJobSets(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "JobSet" && o.GetAPIVersion() == "jobset.x-k8s.io/v1alpha2" {
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GetName() < out[j].GetName() })
	return out
}

// replicatedJobs returns the JobSet's spec.replicatedJobs.
func replicatedJobs(t *testing.T, js *unstructured.Unstructured) []map[string]any {
	t.Helper()
	rjs, found, err := unstructured.NestedSlice(js.Object, "spec", "replicatedJobs")
	if err != nil || !found {
		t.Fatalf("JobSet %s: spec.replicatedJobs: found=%v err=%v", js.GetName(), found, err)
	}
	var out []map[string]any
	for i, rj := range rjs {
		m, ok := rj.(map[string]any)
		if !ok {
			t.Fatalf("JobSet %s: replicatedJobs[%d] is %T", js.GetName(), i, rj)
		}
		out = append(out, m)
	}
	return out
}

// jobFromReplicatedJob builds the batch/v1 Job the JobSet controller would
// create for replica jobIndex of rj: name <jobset>-<rj>-<jobIndex>, the
// template's metadata and spec, plus the labels and pod subdomain the
// controller sets. The JobSet CRD schema does not validate pod templates; a
// Job does.
func jobFromReplicatedJob(t *testing.T, js *unstructured.Unstructured, rj map[string]any, jobIndex int64) *unstructured.Unstructured {
	t.Helper()
	rjName, _, _ := unstructured.NestedString(rj, "name")
	tmpl, found, err := unstructured.NestedMap(rj, "template")
	if err != nil || !found {
		t.Fatalf("JobSet %s replicatedJob %q: template: found=%v err=%v", js.GetName(), rjName, found, err)
	}
	spec, _, _ := unstructured.NestedMap(tmpl, "spec")
	labels, _, _ := unstructured.NestedStringMap(tmpl, "metadata", "labels")
	annotations, _, _ := unstructured.NestedStringMap(tmpl, "metadata", "annotations")
	if labels == nil {
		labels = map[string]string{}
	}
	labels["jobset.sigs.k8s.io/jobset-name"] = js.GetName()
	labels["jobset.sigs.k8s.io/replicatedjob-name"] = rjName
	labels["jobset.sigs.k8s.io/job-index"] = fmt.Sprint(jobIndex)

	job := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "batch/v1",
		"kind":       "Job",
		"metadata":   map[string]any{},
		"spec":       spec,
	}}
	job.SetName(fmt.Sprintf("%s-%s-%d", js.GetName(), rjName, jobIndex))
	job.SetLabels(labels)
	if len(annotations) > 0 {
		job.SetAnnotations(annotations)
	}
	addClaimVolumes(t, js, job)
	if sub := podSubdomain(js); sub != "" {
		if _, set, _ := unstructured.NestedString(job.Object, "spec", "template", "spec", "subdomain"); !set {
			if err := unstructured.SetNestedField(job.Object, sub, "spec", "template", "spec", "subdomain"); err != nil {
				t.Fatal(err)
			}
		}
	}
	return job
}

// addClaimVolumes adds the volumes the JobSet controller adds for the
// JobSet's volumeClaimPolicies: one per template that a container or init
// container of the Job's pod mounts, naming the claim
// <template name>-<JobSet name>. Without them the Job has a mount with no
// volume, which the API server refuses.
func addClaimVolumes(t *testing.T, js *unstructured.Unstructured, job *unstructured.Unstructured) {
	t.Helper()
	policies, _, _ := unstructured.NestedSlice(js.Object, "spec", "volumeClaimPolicies")
	if len(policies) == 0 {
		return
	}
	podSpec, _, _ := unstructured.NestedMap(job.Object, "spec", "template", "spec")
	mounted := map[string]bool{}
	for _, key := range []string{"initContainers", "containers"} {
		containers, _, _ := unstructured.NestedSlice(podSpec, key)
		for _, c := range containers {
			mounts, _, _ := unstructured.NestedSlice(c.(map[string]any), "volumeMounts")
			for _, m := range mounts {
				name, _, _ := unstructured.NestedString(m.(map[string]any), "name")
				mounted[name] = true
			}
		}
	}
	volumes, _, _ := unstructured.NestedSlice(podSpec, "volumes")
	before := len(volumes)
	for _, p := range policies {
		templates, _, _ := unstructured.NestedSlice(p.(map[string]any), "templates")
		for _, tmpl := range templates {
			name, _, _ := unstructured.NestedString(tmpl.(map[string]any), "metadata", "name")
			if !mounted[name] {
				continue
			}
			volumes = append(volumes, map[string]any{
				"name":                  name,
				"persistentVolumeClaim": map[string]any{"claimName": name + "-" + js.GetName()},
			})
		}
	}
	if len(volumes) == before {
		return
	}
	if err := unstructured.SetNestedSlice(job.Object, volumes, "spec", "template", "spec", "volumes"); err != nil {
		t.Fatal(err)
	}
}

// podSubdomain is the subdomain the JobSet controller gives pods: none when
// DNS hostnames are disabled, else spec.network.subdomain or the JobSet name.
func podSubdomain(js *unstructured.Unstructured) string {
	if on, found, _ := unstructured.NestedBool(js.Object, "spec", "network", "enableDNSHostnames"); found && !on {
		return ""
	}
	if sub, _, _ := unstructured.NestedString(js.Object, "spec", "network", "subdomain"); sub != "" {
		return sub
	}
	return js.GetName()
}

// podFromJob builds the Pod the Job controller would create for completion
// index idx of an Indexed Job: generated name <job>-<idx>-<suffix>, hostname
// <job>-<idx>, the completion-index label.
func podFromJob(t *testing.T, job *unstructured.Unstructured, idx int64) *unstructured.Unstructured {
	t.Helper()
	podSpec, found, err := unstructured.NestedMap(job.Object, "spec", "template", "spec")
	if err != nil || !found {
		t.Fatalf("Job %s: spec.template.spec: found=%v err=%v", job.GetName(), found, err)
	}
	labels, _, _ := unstructured.NestedStringMap(job.Object, "spec", "template", "metadata", "labels")
	pod := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "Pod",
		"metadata":   map[string]any{},
		"spec":       podSpec,
	}}
	host := fmt.Sprintf("%s-%d", job.GetName(), idx)
	pod.SetName(host + "-x7k2p")
	if err := unstructured.SetNestedField(pod.Object, host, "spec", "hostname"); err != nil {
		t.Fatal(err)
	}
	if labels == nil {
		labels = map[string]string{}
	}
	labels["batch.kubernetes.io/job-completion-index"] = fmt.Sprint(idx)
	labels["batch.kubernetes.io/job-name"] = job.GetName()
	pod.SetLabels(labels)
	return pod
}

// lastIndexes returns replicas-1 of rj and completions-1 of its Job template
// (the longest Job name and hostname), at least 0.
func lastIndexes(rj map[string]any) (job, completion int64) {
	if r, found, _ := unstructured.NestedInt64(rj, "replicas"); found && r > 1 {
		job = r - 1
	}
	if c, found, _ := unstructured.NestedInt64(rj, "template", "spec", "completions"); found && c > 1 {
		completion = c - 1
	}
	return job, completion
}

// checkAccepted dry-run-creates every rendered object, then every
// replicatedJob template of every JobSet as a batch/v1 Job (for the first and
// the last replica) and as the Pod of the last replica's last completion
// index, in namespace ns (which needs a default ServiceAccount).
// Each rejection is reported with the API server's exact message.
func checkAccepted(t *testing.T, objs []*unstructured.Unstructured, ns string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, o := range objs {
		if err := dryRunCreate(ctx, env.dyn, o, ns); err != nil {
			t.Errorf("API server rejected rendered %s %s %q: %s", o.GetAPIVersion(), o.GetKind(), o.GetName(), describeErr(err))
		}
	}
	for _, js := range fluxJobSets(objs) {
		for _, rj := range replicatedJobs(t, js) {
			lastJob, lastPod := lastIndexes(rj)
			indexes := []int64{0}
			if lastJob > 0 {
				indexes = append(indexes, lastJob)
			}
			for _, j := range indexes {
				job := jobFromReplicatedJob(t, js, rj, j)
				if err := dryRunCreate(ctx, env.dyn, job, ns); err != nil {
					t.Errorf("API server rejected JobSet %q replicatedJob %q as batch/v1 Job %q: %s", js.GetName(), rj["name"], job.GetName(), describeErr(err))
					continue
				}
				if j != lastJob {
					continue
				}
				// The pod with the longest name and hostname.
				pod := podFromJob(t, job, lastPod)
				if err := dryRunCreate(ctx, env.dyn, pod, ns); err != nil {
					t.Errorf("API server rejected JobSet %q replicatedJob %q pod %q: %s", js.GetName(), rj["name"], pod.GetName(), describeErr(err))
				}
			}
		}
	}
}

// checkContract checks the shape promised by the function's contract, the
// parts the API server cannot see: names and keys that must match across
// objects, and the Job fields a multi-pod Flux instance needs.
func checkContract(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	byKindName := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		byKindName[o.GetKind()+"/"+o.GetName()] = o
	}
	jobsets := fluxJobSets(objs)
	if len(jobsets) == 0 {
		t.Fatalf("no JobSet in the rendered output (kinds: %v)", kinds(objs))
	}
	for _, js := range jobsets {
		name := js.GetName()
		if js.GetAnnotations()["flux-framework.org/enabled"] != "true" {
			continue
		}
		cmName, secName := name+"-flux-entrypoint", name+"-flux-curve"
		ownFlux := ownFlux(js)
		cm, sec := byKindName["ConfigMap/"+cmName], byKindName["Secret/"+secName]
		if cm == nil {
			t.Errorf("JobSet %s: no ConfigMap %s in the output", name, cmName)
		} else {
			sameNamespace(t, js, cm)
			for _, k := range []string{"entrypoint.sh", "broker.toml", "init.sh"} {
				_, ok, _ := unstructured.NestedString(cm.Object, "data", k)
				switch {
				case k == "init.sh" && ownFlux && ok:
					t.Errorf("ConfigMap %s: data key %s, although no flux-installer runs it", cmName, k)
				case !ok && (k != "init.sh" || !ownFlux):
					t.Errorf("ConfigMap %s: no data key %s", cmName, k)
				}
			}
		}
		if sec == nil {
			t.Errorf("JobSet %s: no Secret %s in the output", name, secName)
		} else {
			sameNamespace(t, js, sec)
			_, inData, _ := unstructured.NestedString(sec.Object, "data", "curve.cert")
			_, inString, _ := unstructured.NestedString(sec.Object, "stringData", "curve.cert")
			if !inData && !inString {
				t.Errorf("Secret %s: no key curve.cert", secName)
			}
		}
		chosen := chosenReplicatedJobs(js)
		for _, rj := range replicatedJobs(t, js) {
			if chosen == nil || chosen[fmt.Sprint(rj["name"])] {
				checkReplicatedJob(t, name, rj, cmName, secName, ownFlux)
			}
		}
	}
}

// ownFlux reports whether the JobSet asks for its image's own Flux
// (view-image none or flux-path): no view is copied into its pods.
func ownFlux(js *unstructured.Unstructured) bool {
	a := js.GetAnnotations()
	return a["flux-framework.org/view-image"] == "none" || a["flux-framework.org/flux-path"] != ""
}

// chosenReplicatedJobs returns the replicatedJobs named by the
// flux-framework.org/replicated-jobs annotation, or nil (all of them).
func chosenReplicatedJobs(js *unstructured.Unstructured) map[string]bool {
	v, ok := js.GetAnnotations()["flux-framework.org/replicated-jobs"]
	if !ok {
		return nil
	}
	chosen := map[string]bool{}
	for _, n := range strings.Split(v, ",") {
		chosen[strings.TrimSpace(n)] = true
	}
	return chosen
}

func checkReplicatedJob(t *testing.T, jsName string, rj map[string]any, cmName, secName string, ownFlux bool) {
	t.Helper()
	where := fmt.Sprintf("JobSet %s replicatedJob %v", jsName, rj["name"])
	jobSpec, _, _ := unstructured.NestedMap(rj, "template", "spec")
	if mode, _, _ := unstructured.NestedString(jobSpec, "completionMode"); mode != "Indexed" {
		t.Errorf("%s: completionMode %q, want Indexed", where, mode)
	}
	completions, _, _ := unstructured.NestedFieldNoCopy(jobSpec, "completions")
	parallelism, _, _ := unstructured.NestedFieldNoCopy(jobSpec, "parallelism")
	if completions == nil || fmt.Sprint(completions) != fmt.Sprint(parallelism) {
		t.Errorf("%s: parallelism %v, completions %v: want equal and set", where, parallelism, completions)
	}
	if bl, _, _ := unstructured.NestedFieldNoCopy(jobSpec, "backoffLimit"); fmt.Sprint(bl) != "0" {
		t.Errorf("%s: backoffLimit %v, want 0", where, bl)
	}
	if rp, _, _ := unstructured.NestedString(jobSpec, "template", "spec", "restartPolicy"); rp != "Never" {
		t.Errorf("%s: restartPolicy %q, want Never", where, rp)
	}
	vols, _, _ := unstructured.NestedSlice(jobSpec, "template", "spec", "volumes")
	byName := map[string]map[string]any{}
	for _, v := range vols {
		if m, ok := v.(map[string]any); ok {
			byName[fmt.Sprint(m["name"])] = m
		}
	}
	for _, want := range []string{"flux-install", "flux-software", "flux-config", "flux-curve", "flux-shm"} {
		switch {
		case want == "flux-software" && ownFlux:
			if byName[want] != nil {
				t.Errorf("%s: volume %s, although the image brings its own Flux", where, want)
			}
		case byName[want] == nil:
			t.Errorf("%s: no volume %s", where, want)
		}
	}
	if v := byName["flux-config"]; v != nil {
		if n, _, _ := unstructured.NestedString(v, "configMap", "name"); n != cmName {
			t.Errorf("%s: volume flux-config names ConfigMap %q, want %q", where, n, cmName)
		}
	}
	if v := byName["flux-curve"]; v != nil {
		if n, _, _ := unstructured.NestedString(v, "secret", "secretName"); n != secName {
			t.Errorf("%s: volume flux-curve names Secret %q, want %q", where, n, secName)
		}
	}
	// The emptyDirs' media as the API server keeps them: /dev/shm and the
	// copied software tree (view-copy-medium: memory, the default) in
	// memory, the broker's state and content store on the node's disk.
	for _, v := range []struct{ name, medium string }{{"flux-shm", "Memory"}, {"flux-software", "Memory"}, {"flux-install", ""}} {
		if vol := byName[v.name]; vol != nil {
			if m, _, _ := unstructured.NestedString(vol, "emptyDir", "medium"); m != v.medium {
				t.Errorf("%s: volume %s medium %q, want %q", where, v.name, m, v.medium)
			}
		}
	}
	if installer := findContainer(jobSpec, "initContainers", "flux-installer"); installer == nil && !ownFlux {
		t.Errorf("%s: no init container flux-installer", where)
	} else if installer != nil && ownFlux {
		t.Errorf("%s: an init container flux-installer, although the image brings its own Flux", where)
	}
}

// findContainer returns the named container from the pod template in jobSpec.
func findContainer(jobSpec map[string]any, field, name string) map[string]any {
	cs, _, _ := unstructured.NestedSlice(jobSpec, "template", "spec", field)
	for _, c := range cs {
		if m, ok := c.(map[string]any); ok && m["name"] == name {
			return m
		}
	}
	return nil
}

func sameNamespace(t *testing.T, js, o *unstructured.Unstructured) {
	t.Helper()
	if js.GetNamespace() != o.GetNamespace() {
		t.Errorf("%s %s is in namespace %q but JobSet %s is in %q", o.GetKind(), o.GetName(), o.GetNamespace(), js.GetName(), js.GetNamespace())
	}
}

func kinds(objs []*unstructured.Unstructured) []string {
	var ks []string
	for _, o := range objs {
		ks = append(ks, o.GetKind()+"/"+o.GetName())
	}
	return ks
}

// createNamespace really creates a namespace (with labels) and its default
// ServiceAccount, which the ServiceAccount admission plugin requires for Pods
// (no controller manager runs here to create it).
func createNamespace(t *testing.T, name string, labels map[string]string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}}
	ns.SetLabels(labels)
	nsGVR := mustGVR(t, "", "v1", "Namespace")
	if _, err := env.dyn.Resource(nsGVR).Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %s", name, describeErr(err))
	}
	sa := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": map[string]any{"name": "default"}}}
	if _, err := env.dyn.Resource(mustGVR(t, "", "v1", "ServiceAccount")).Namespace(name).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ServiceAccount %s/default: %s", name, describeErr(err))
	}
	t.Cleanup(func() {
		_ = env.dyn.Resource(nsGVR).Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}

func mustGVR(t *testing.T, group, version, kind string) schema.GroupVersionResource {
	t.Helper()
	m, err := env.mapper.RESTMapping(schema.GroupKind{Group: group, Kind: kind}, version)
	if err != nil {
		t.Fatal(err)
	}
	return m.Resource
}
