package jobset

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func mustRead(t *testing.T, text string) (*JobSet, finding.List) {
	t.Helper()
	rn, err := yaml.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return Read(rn)
}

const full = `apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: js
  namespace: ns
  annotations: {a: "1"}
spec:
  network: {subdomain: sub, enableDNSHostnames: true}
  replicatedJobs:
  - name: w
    replicas: 3
    template:
      spec:
        completions: 4
        parallelism: 4
        completionMode: Indexed
        backoffLimit: 1
        template:
          spec:
            restartPolicy: Never
            hostNetwork: false
            initContainers: [{name: init, image: x}, {name: log, image: x, restartPolicy: Always}]
            volumes: [{name: data, emptyDir: {}}]
            os: {name: linux}
            nodeSelector: {kubernetes.io/os: linux}
            containers:
            - name: app
              image: app
              command: [run, "a b"]
              args: ["--x"]
              env: [{name: E, value: v}, {name: R, valueFrom: {fieldRef: {fieldPath: x}}}]
              volumeMounts: [{name: data, mountPath: /data}]
              resources: {limits: {nvidia.com/gpu: "2"}, requests: {amd.com/gpu: 1}}
              ports: [{containerPort: 8050}, {containerPort: 53, hostPort: 5353, protocol: UDP}]
              envFrom: [{prefix: FLUX_, configMapRef: {name: cm}}, {secretRef: {name: s}}]
              livenessProbe: {exec: {command: [true]}}
              terminationMessagePath: /tmp/msg
  - name: defaults
    template:
      spec:
        template:
          spec:
            containers: [{name: c, image: c}]
`

func TestReadFull(t *testing.T) {
	js, found := mustRead(t, full)
	if len(found) != 0 {
		t.Fatalf("findings: %v", found)
	}
	if js.Name != "js" || js.Namespace != "ns" || js.Subdomain != "sub" || js.Annotations["a"] != "1" {
		t.Errorf("metadata = %+v", js)
	}
	if js.EnableDNSHostnames == nil || !*js.EnableDNSHostnames || js.PublishNotReadyAddresses != nil {
		t.Errorf("network flags = %v, %v", js.EnableDNSHostnames, js.PublishNotReadyAddresses)
	}
	w := js.ReplicatedJobs[0]
	if w.Replicas != 3 || *w.Completions != 4 || *w.Parallelism != 4 || w.CompletionMode != "Indexed" || *w.BackoffLimit != 1 {
		t.Errorf("job = %+v", w)
	}
	if w.JobPath() != "spec.replicatedJobs[0].template.spec" || w.Pod.Path != "spec.replicatedJobs[0].template.spec.template.spec" {
		t.Errorf("paths = %q, %q", w.JobPath(), w.Pod.Path)
	}
	c := w.Pod.Containers[0]
	if !slices.Equal(c.Command, []string{"run", "a b"}) || !slices.Equal(c.Args, []string{"--x"}) {
		t.Errorf("argv = %q %q", c.Command, c.Args)
	}
	// Both vendors' GPUs count: 2 (limits) + 1 (requests).
	if c.GPUs != 3 || c.GPUPath != "spec.replicatedJobs[0].template.spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]" {
		t.Errorf("gpus = %d from %q", c.GPUs, c.GPUPath)
	}
	if len(c.Env) != 2 || c.Env[0].Value != "v" || c.Env[0].FromRef || !c.Env[1].FromRef || c.Env[1].Path != c.Path+".env[1].valueFrom" {
		t.Errorf("env = %+v", c.Env)
	}
	if len(w.Pod.InitContainers) != 2 || w.Pod.InitContainers[0].Name != "init" || w.Pod.InitContainers[1].RestartPolicy != ContainerRestartAlways ||
		w.Pod.InitContainers[1].Path != w.Pod.Path+".initContainers[1]" || w.Pod.OS != (OS{Name: "linux", Selected: "linux"}) {
		t.Errorf("init containers and OS = %+v, %+v", w.Pod.InitContainers, w.Pod.OS)
	}
	if !slices.Equal(c.Ports, []Port{{ContainerPort: 8050, Path: c.Path + ".ports[0]"}, {ContainerPort: 53, HostPort: 5353, Protocol: "UDP", Path: c.Path + ".ports[1]"}}) || !c.Ports[0].TCP() || c.Ports[1].TCP() {
		t.Errorf("ports = %+v", c.Ports)
	}
	if !slices.Equal(c.EnvFrom, []EnvSource{{Prefix: "FLUX_", Kind: "ConfigMap", Name: "cm", Path: c.Path + ".envFrom[0]"}, {Kind: "Secret", Name: "s", Path: c.Path + ".envFrom[1]"}}) {
		t.Errorf("envFrom = %+v", c.EnvFrom)
	}
	if !c.LivenessProbe || c.TerminationMessagePath != "/tmp/msg" || w.Pod.InitContainers[0].LivenessProbe {
		t.Errorf("liveness %v, termination message path %q", c.LivenessProbe, c.TerminationMessagePath)
	}
	if !slices.Equal(w.Pod.Volumes, []string{"data"}) || c.Mounts[0].Name != "data" || c.Mounts[0].MountPath != "/data" || c.Mounts[0].ReadOnly {
		t.Errorf("pod = %+v", w.Pod)
	}
	d := js.ReplicatedJobs[1]
	if d.Replicas != 1 || d.Completions != nil || d.Parallelism != nil || d.Pod.RestartPolicy != "" {
		t.Errorf("defaults = %+v", d)
	}
}

func TestReadWrongTypes(t *testing.T) {
	for _, tc := range []struct{ from, to, path, want string }{
		{"replicas: 3", `replicas: "3"`, "spec.replicatedJobs[0].replicas", `the string "3"`},
		{"replicas: 3", "replicas: 99999999999", "spec.replicatedJobs[0].replicas", "fits in 32 bits"},
		{"completions: 4", "completions: [4]", "spec.replicatedJobs[0].template.spec.completions", "a list"},
		{"hostNetwork: false", "hostNetwork: yes", "spec.replicatedJobs[0].template.spec.template.spec.hostNetwork", "true or false"},
		{`command: [run, "a b"]`, "command: [run, 5]", "spec.replicatedJobs[0].template.spec.template.spec.containers[0].command[1]", "quote it"},
		{`command: [run, "a b"]`, "command: run", "spec.replicatedJobs[0].template.spec.template.spec.containers[0].command", "must be a list"},
		{`annotations: {a: "1"}`, "annotations: {a: 1}", "metadata.annotations[a]", "must be strings"},
		{`annotations: {a: "1"}`, "annotations: [a]", "metadata.annotations", "must be a map"},
		{`nvidia.com/gpu: "2"`, `nvidia.com/gpu: "1.5"`, "spec.replicatedJobs[0].template.spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]", "whole number of GPUs"},
		{"    containers: [{name: c, image: c}]", "    containers: []", "spec.replicatedJobs[1].template.spec.template.spec.containers", "no containers"},
		{"  - name: defaults\n    template:", "  - name: defaults\n    template: null\n    x:", "spec.replicatedJobs[1].template.spec", "no Job template"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			if !strings.Contains(full, tc.from) {
				t.Fatalf("fixture lacks %q", tc.from)
			}
			_, found := mustRead(t, strings.Replace(full, tc.from, tc.to, 1))
			for _, f := range found {
				if f.Severity == finding.Error && f.Path == tc.path && strings.Contains(f.Message, tc.want) {
					return
				}
			}
			t.Errorf("findings %+v, want an error at %s containing %q", found, tc.path, tc.want)
		})
	}
}

func TestReadMissingParts(t *testing.T) {
	for _, tc := range []struct{ text, path string }{
		{"apiVersion: v\nkind: JobSet\nmetadata: {name: x}\n", "spec"},
		{"apiVersion: v\nkind: JobSet\nmetadata: {name: x}\nspec: {}\n", "spec.replicatedJobs"},
		{"apiVersion: v\nkind: JobSet\nmetadata: {}\nspec: {replicatedJobs: [7]}\n", "spec.replicatedJobs[0]"},
		{"apiVersion: v\nkind: JobSet\nmetadata: {}\nspec: {replicatedJobs: []}\n", "metadata.name"},
	} {
		_, found := mustRead(t, tc.text)
		if !slices.ContainsFunc(found, func(f finding.Finding) bool { return f.Path == tc.path && f.Severity == finding.Error }) {
			t.Errorf("%q: findings %+v, want an error at %s", tc.text, found, tc.path)
		}
	}
}

func TestReadFollowsAliases(t *testing.T) {
	text := strings.Replace(full, "replicas: 3", "replicas: &r 3", 1)
	text = strings.Replace(text, "completions: 4", "completions: *r", 1)
	js, found := mustRead(t, text)
	if len(found) != 0 || *js.ReplicatedJobs[0].Completions != 3 {
		t.Errorf("completions via alias = %v, findings %v", js.ReplicatedJobs[0].Completions, found)
	}
}

// TestReadResources: cores from the cpu limit, else the request, in whole
// cores (at least 1); GPUs of every vendor counted; other accelerator-like
// extended resources listed with their field paths; huge counts kept
// within 32 bits for the plan to refuse.
func TestReadResources(t *testing.T) {
	const prefix = "spec.replicatedJobs[0].template.spec.template.spec.containers[0].resources"
	for _, tc := range []struct {
		resources    string
		cpus, gpus   int
		cpuPath      string
		gpuPath      string
		accelerators []string
	}{
		{resources: `{limits: {cpu: "32"}, requests: {cpu: "8"}}`, cpus: 32, cpuPath: prefix + ".limits[cpu]"},
		{resources: `{requests: {cpu: "8"}}`, cpus: 8, cpuPath: prefix + ".requests[cpu]"},
		{resources: `{limits: {cpu: 2500m}}`, cpus: 2, cpuPath: prefix + ".limits[cpu]"},
		{resources: `{limits: {cpu: 500m}}`, cpus: 1, cpuPath: prefix + ".limits[cpu]"},
		{resources: `{limits: {cpu: "0"}, requests: {cpu: 3}}`, cpus: 3, cpuPath: prefix + ".requests[cpu]"},
		{resources: `{limits: {cpu: 1e12}}`, cpus: math.MaxInt32, cpuPath: prefix + ".limits[cpu]"},
		{resources: `{limits: {memory: 1Gi}}`},
		{resources: `{limits: {gpu.intel.com/i915: 2}}`, gpus: 2, gpuPath: prefix + ".limits[gpu.intel.com/i915]"},
		{resources: `{limits: {gpu.intel.com/xe: 1}}`, gpus: 1, gpuPath: prefix + ".limits[gpu.intel.com/xe]"},
		{resources: `{limits: {amd.com/gpu: 8}}`, gpus: 8, gpuPath: prefix + ".limits[amd.com/gpu]"},
		{resources: `{limits: {nvidia.com/gpu: 1000000}}`, gpus: 1000000, gpuPath: prefix + ".limits[nvidia.com/gpu]"},
		{resources: `{limits: {nvidia.com/gpu: 1e15}}`, gpus: math.MaxInt32, gpuPath: prefix + ".limits[nvidia.com/gpu]"},
		{
			resources:    `{limits: {nvidia.com/gpu.shared: 1, google.com/tpu: 4, example.com/fuse: 1}, requests: {nvidia.com/gpu.shared: 1, gpu.intel.com/millicores: 100, nvidia.com/mig-1g.5gb: 1}}`,
			accelerators: []string{prefix + ".limits[nvidia.com/gpu.shared]", prefix + ".limits[google.com/tpu]", prefix + ".requests[gpu.intel.com/millicores]", prefix + ".requests[nvidia.com/mig-1g.5gb]"},
		},
	} {
		t.Run(tc.resources, func(t *testing.T) {
			js, found := mustRead(t, strings.Replace(full, `{limits: {nvidia.com/gpu: "2"}, requests: {amd.com/gpu: 1}}`, tc.resources, 1))
			if len(found) != 0 {
				t.Fatalf("findings: %v", found)
			}
			c := js.ReplicatedJobs[0].Pod.Containers[0]
			if c.CPULimit != strings.Contains(tc.cpuPath, ".limits[") {
				t.Errorf("CPULimit = %v for %q", c.CPULimit, tc.cpuPath)
			}
			if c.CPUs != tc.cpus || c.CPUPath != tc.cpuPath || c.GPUs != tc.gpus || c.GPUPath != tc.gpuPath || !slices.Equal(c.Accelerators, tc.accelerators) {
				t.Errorf("cpus %d from %q, gpus %d from %q, accelerators %q; want %d from %q, %d from %q, %q",
					c.CPUs, c.CPUPath, c.GPUs, c.GPUPath, c.Accelerators, tc.cpus, tc.cpuPath, tc.gpus, tc.gpuPath, tc.accelerators)
			}
		})
	}
	for _, bad := range []string{`{limits: {cpu: -1}}`, `{requests: {cpu: lots}}`, `{limits: {cpu: [1]}}`, `{limits: {gpu.intel.com/i915: 0.5}}`} {
		_, found := mustRead(t, strings.Replace(full, `{limits: {nvidia.com/gpu: "2"}, requests: {amd.com/gpu: 1}}`, bad, 1))
		if !slices.ContainsFunc(found, func(f finding.Finding) bool {
			return f.Severity == finding.Error && strings.HasPrefix(f.Path, prefix+".")
		}) {
			t.Errorf("%s: findings %+v, want an error at a field of %s", bad, found, prefix)
		}
	}
}

// TestReadPodSeccomp: a pod-level seccompProfile is seen, so the init
// container can inherit it.
func TestReadPodSeccomp(t *testing.T) {
	js, _ := mustRead(t, full)
	if js.ReplicatedJobs[0].Pod.SeccompProfile {
		t.Error("no pod securityContext, but SeccompProfile is true")
	}
	js, found := mustRead(t, strings.Replace(full, "hostNetwork: false", "hostNetwork: false\n            securityContext: {seccompProfile: {type: Localhost, localhostProfile: p.json}}", 1))
	if len(found) != 0 || !js.ReplicatedJobs[0].Pod.SeccompProfile {
		t.Errorf("SeccompProfile = false (findings %v), want true", found)
	}
}

// TestShapeOnce: the nodes the editor finds through the shape helpers are
// the ones Read read, at the paths it reports.
func TestShapeOnce(t *testing.T) {
	rn, err := yaml.Parse(full)
	if err != nil {
		t.Fatal(err)
	}
	js, found := Read(rn)
	if found.HasErrors() {
		t.Fatal(found)
	}
	rjs, ok := ReplicatedJobNodes(rn.YNode())
	if !ok || len(rjs) != len(js.ReplicatedJobs) {
		t.Fatalf("ReplicatedJobNodes = %d items, %v; Read read %d", len(rjs), ok, len(js.ReplicatedJobs))
	}
	rj := js.ReplicatedJobs[0]
	job := JobSpec(rjs[0])
	pod := PodSpec(job)
	if job == nil || pod == nil {
		t.Fatal("JobSpec or PodSpec found nothing")
	}
	if rj.JobPath() != "spec.replicatedJobs[0].template.spec" || rj.Pod.Path != rj.JobPath()+".template.spec" {
		t.Errorf("paths %s, %s", rj.JobPath(), rj.Pod.Path)
	}
	got, err := yaml.NewRNode(job).GetFieldValue(CompletionsField)
	if err != nil || got != 4 || *rj.Completions != 4 {
		t.Errorf("completions through JobSpec = %v (%v), Read %d", got, err, *rj.Completions)
	}
	if c := len(yaml.NewRNode(pod).Field(ContainersKey).Value.Content()); c != len(rj.Pod.Containers) {
		t.Errorf("PodSpec holds %d containers, Read read %d", c, len(rj.Pod.Containers))
	}
	for p, before := range map[Place]string{InNetwork: "", InJob: TemplateKey, InPod: ContainersKey} {
		if p.Before() != before {
			t.Errorf("place %d: new fields go before %q, want %q", p, p.Before(), before)
		}
	}
}
