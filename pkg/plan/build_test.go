package plan

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/jobset/jobsettest"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/hostlist/hostlisttest"
	"github.com/jobset-flux/jobset-flux/pkg/jobset"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// read parses a JobSet written as YAML.
func read(t *testing.T, text string) *jobset.JobSet {
	t.Helper()
	rn, err := yaml.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	js, found := jobset.Read(rn)
	if found.HasErrors() {
		t.Fatalf("reading the JobSet: %v", found)
	}
	return js
}

// job is a replicatedJob written "name:replicas:completions[:container
// extra YAML]", the extra YAML holding fields of its container.
func job(spec string) *jobsettest.ReplicatedJob {
	parts := strings.SplitN(spec, ":", 4)
	replicas, err1 := strconv.Atoi(parts[1])
	completions, err2 := strconv.Atoi(parts[2])
	if err1 != nil || err2 != nil {
		panic("bad replicatedJob spec " + spec)
	}
	rj := jobsettest.Job(parts[0]).Replicas(replicas).Completions(completions)
	if len(parts) == 4 {
		var fields map[string]any
		if err := sigsyaml.Unmarshal([]byte(parts[3]), &fields); err != nil {
			panic(fmt.Sprintf("bad container YAML in %s: %v", spec, err))
		}
		for k, v := range fields {
			rj.ContainerField(k, v)
		}
	}
	return rj
}

// jobsetOf is the JobSet "js" with the given annotations and replicatedJobs.
func jobsetOf(annotations map[string]string, rjs ...*jobsettest.ReplicatedJob) *jobsettest.JobSet {
	js := jobsettest.New("js").Jobs(rjs...)
	for k, v := range annotations {
		js.Annotation(k, v)
	}
	return js
}

// jobsetYAML is jobsetOf with replicatedJobs written as job reads them.
func jobsetYAML(annotations map[string]string, specs ...string) string {
	var rjs []*jobsettest.ReplicatedJob
	for _, spec := range specs {
		rjs = append(rjs, job(spec))
	}
	return jobsetOf(annotations, rjs...).YAML()
}

// build runs the pipeline's middle on one JobSet, as the transform does:
// its settings resolved over base, validated, and the plan derived. The
// plan is nil when there are errors.
func build(js *jobset.JobSet, base settings.Settings) (*Plan, finding.List) {
	s, found := settings.Resolve(base, js)
	if found.HasErrors() {
		return nil, found
	}
	if found.Add(Validate(js, s)); found.HasErrors() {
		return nil, found
	}
	p, notes := Derive(js, s)
	found.Add(notes)
	return p, found
}

// hostlistOf is the whole instance's hosts as one RFC 29 hostlist in rank order.
func hostlistOf(p *Plan) string {
	lists := make([]string, len(p.Groups))
	for i, g := range p.Groups {
		lists[i] = g.Hosts
	}
	return strings.Join(lists, ",")
}

// resolved is the function config layer applied over the defaults, as
// the transform hands it to Resolve.
func resolved(t *testing.T, config settings.Layer) settings.Settings {
	t.Helper()
	s, found := settings.Config(config)
	if len(found) > 0 {
		t.Fatalf("config: %v", found)
	}
	return s
}

func errorsOf(found finding.List) []string {
	var out []string
	for _, f := range found {
		if f.Severity == finding.Error {
			out = append(out, f.Path+": "+f.Message)
		}
	}
	return out
}

func TestPrecedence(t *testing.T) {
	config := settings.Layer{Kind: settings.FromConfig, Values: map[string]settings.Raw{
		"view-image":     {Value: "example.com/config:1", Path: "data.view-image"},
		"network-device": {Value: "eth1", Path: "data.network-device"},
		"queue-policy":   {Value: "easy", Path: "data.queue-policy"},
		"port":           {Value: "7000", Path: "data.port"},
	}}
	env := "env:\n- name: FLUX_VIEW_IMAGE\n  value: example.com/env:1\n- name: FLUX_NETWORK_DEVICE\n  value: ib0"
	js := read(t, jobsetYAML(map[string]string{"flux-framework.org/network-device": "*"}, "w:1:2:"+env))
	p, found := build(js, resolved(t, config))
	if p == nil {
		t.Fatalf("Build failed: %v", errorsOf(found))
	}
	// default < config < env < annotation, setting by setting.
	if p.ViewImage != "example.com/env:1" {
		t.Errorf("view-image = %q, want the env value over the config value", p.ViewImage)
	}
	if p.Settings.NetworkDevice != "*" {
		t.Errorf("network-device = %q, want the annotation over env and config", p.Settings.NetworkDevice)
	}
	if p.Settings.QueuePolicy != "easy" || p.Settings.Port != 7000 {
		t.Errorf("queue-policy, port = %q, %d, want the config values", p.Settings.QueuePolicy, p.Settings.Port)
	}
	if p.Settings.ConnectTimeout != "5s" || p.Settings.Topology != "kary:256" {
		t.Errorf("connect-timeout, topology = %q, %q, want the defaults", p.Settings.ConnectTimeout, p.Settings.Topology)
	}
}

func TestEnvErrorsNameTheVariable(t *testing.T) {
	env := "env:\n- name: FLUX_QUEUE_POLICY\n  value: lifo"
	js := read(t, jobsetYAML(nil, "w:1:2:"+env))
	p, found := build(js, settings.Defaults())
	errs := errorsOf(found)
	if p != nil || len(errs) != 1 || !strings.Contains(errs[0], "containers[0].env[0].value: invalid queue-policy from the container environment") {
		t.Fatalf("errors = %q", errs)
	}
}

func TestRanksAndHostlists(t *testing.T) {
	js := read(t, jobsetYAML(map[string]string{"flux-framework.org/replicated-jobs": "b,a"}, "a:2:3", "b:4:1", "c:1:1"))
	p, found := build(js, settings.Defaults())
	if p == nil {
		t.Fatalf("Build failed: %v", errorsOf(found))
	}
	if len(p.Groups) != 2 || p.Groups[0].Name != "b" || p.Groups[1].Name != "a" {
		t.Fatalf("groups = %+v, want b then a", p.Groups)
	}
	if p.Groups[0].FirstRank != 0 || p.Groups[1].FirstRank != 4 || p.Brokers != 10 {
		t.Errorf("first ranks %d, %d and brokers %d, want 0, 4 and 10", p.Groups[0].FirstRank, p.Groups[1].FirstRank, p.Brokers)
	}
	if p.Groups[0].Hosts != "js-b-[0-3]-0" || p.Groups[1].Hosts != "js-a-0-[0-2],js-a-1-[0-2]" {
		t.Errorf("hosts = %q, %q", p.Groups[0].Hosts, p.Groups[1].Hosts)
	}
	// Host by host, rank by rank: the expanded list is the pods' hostnames.
	got, err := hostlisttest.Expand(hostlistOf(p), 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"js-b-0-0", "js-b-1-0", "js-b-2-0", "js-b-3-0", "js-a-0-0", "js-a-0-1", "js-a-0-2", "js-a-1-0", "js-a-1-1", "js-a-1-2"}
	if !slices.Equal(got, want) {
		t.Errorf("ranks = %q, want %q", got, want)
	}
}

// TestGridHostlists: a group of replicas x completions is written as
// min(replicas, completions) expressions, bracketing the longer side, and
// expands to every pod's hostname once, rank 0 first.
func TestGridHostlists(t *testing.T) {
	for _, tc := range []struct {
		replicas, completions int
		want                  string
	}{
		{1, 1, "js-w-0-0"},
		{1, 5, "js-w-0-[0-4]"},
		{5, 1, "js-w-[0-4]-0"},
		{2, 3, "js-w-0-[0-2],js-w-1-[0-2]"},
		{3, 2, "js-w-[0-2]-0,js-w-[0-2]-1"},
		{3, 3, "js-w-0-[0-2],js-w-1-[0-2],js-w-2-[0-2]"},
		{5000, 2, "js-w-[0-4999]-0,js-w-[0-4999]-1"},
		{2, 5000, "js-w-0-[0-4999],js-w-1-[0-4999]"},
	} {
		js := read(t, jobsetYAML(nil, fmt.Sprintf("w:%d:%d", tc.replicas, tc.completions)))
		p, found := build(js, settings.Defaults())
		if p == nil {
			t.Fatalf("%dx%d: Build failed: %v", tc.replicas, tc.completions, errorsOf(found))
		}
		if p.Groups[0].Hosts != tc.want {
			t.Errorf("%dx%d: hosts = %q, want %q", tc.replicas, tc.completions, p.Groups[0].Hosts, tc.want)
		}
		got, err := hostlisttest.Expand(hostlistOf(p), 0)
		if err != nil {
			t.Fatal(err)
		}
		var pods []string
		for j := range tc.replicas {
			for i := range tc.completions {
				pods = append(pods, fmt.Sprintf("js-w-%d-%d", j, i))
			}
		}
		if got[0] != "js-w-0-0" || len(got) != len(pods) {
			t.Errorf("%dx%d: %d hosts starting with %q, want %d starting with js-w-0-0", tc.replicas, tc.completions, len(got), got[0], len(pods))
		}
		slices.Sort(got)
		slices.Sort(pods)
		if !slices.Equal(got, pods) {
			t.Errorf("%dx%d: the hosts are not the pods' hostnames, each once", tc.replicas, tc.completions)
		}
	}
}

func TestResourcesDerived(t *testing.T) {
	for _, tc := range []struct {
		name                                string
		annotations                         map[string]string
		container                           string
		tasks, cores, gpus, perTaskC, perTG int
	}{
		{"defaults", nil, "", 1, 1, 0, 1, 0},
		{"gpus from limits", nil, "resources:\n  limits:\n    nvidia.com/gpu: 4", 4, 4, 4, 1, 1},
		{"one gpu keeps one task", nil, "resources:\n  limits:\n    nvidia.com/gpu: 1", 1, 1, 1, 1, 1},
		{"gpus from requests", nil, "resources:\n  requests:\n    amd.com/gpu: 2", 2, 2, 2, 1, 1},
		{"limits win over requests", nil, "resources:\n  limits:\n    nvidia.com/gpu: 2\n  requests:\n    nvidia.com/gpu: 8", 2, 2, 2, 1, 1},
		{"explicit", map[string]string{"flux-framework.org/tasks-per-node": "2", "flux-framework.org/cores-per-node": "8", "flux-framework.org/gpus-per-node": "4"}, "", 2, 8, 4, 4, 2},
		{"intel i915 gpus", nil, "resources:\n  limits:\n    gpu.intel.com/i915: 2", 2, 2, 2, 1, 1},
		{"intel xe gpus", nil, "resources:\n  limits:\n    gpu.intel.com/xe: 4", 4, 4, 4, 1, 1},
		{"cores from the cpu limit", nil, "resources:\n  limits:\n    cpu: 32\n  requests:\n    cpu: 4", 1, 32, 0, 32, 0},
		{"cores from the cpu request", nil, "resources:\n  requests:\n    cpu: 6", 1, 6, 0, 6, 0},
		{"fractional cpu counts down", nil, "resources:\n  limits:\n    cpu: 2500m", 1, 2, 0, 2, 0},
		{"less than one cpu is one core", nil, "resources:\n  limits:\n    cpu: 100m", 1, 1, 0, 1, 0},
		{"cores shared by tasks", map[string]string{"flux-framework.org/tasks-per-node": "8"}, "resources:\n  limits:\n    cpu: 32", 8, 32, 0, 4, 0},
		{"indivisible cores count down per task", map[string]string{"flux-framework.org/tasks-per-node": "8"}, "resources:\n  limits:\n    cpu: 30", 8, 30, 0, 3, 0},
		{"gpus and cpus", nil, "resources:\n  limits:\n    cpu: 64\n    nvidia.com/gpu: 8", 8, 64, 8, 8, 1},
		{"a cpu request below the tasks counts as the tasks", map[string]string{"flux-framework.org/tasks-per-node": "8"}, "resources:\n  requests:\n    cpu: 2", 8, 8, 0, 1, 0},
		{"explicit cores win over the cpu limit", map[string]string{"flux-framework.org/cores-per-node": "4"}, "resources:\n  limits:\n    cpu: 32", 1, 4, 0, 4, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rj := "w:1:3"
			if tc.container != "" {
				rj += ":" + tc.container
			}
			p, found := build(read(t, jobsetYAML(tc.annotations, rj)), settings.Defaults())
			if p == nil {
				t.Fatalf("Build failed: %v", errorsOf(found))
			}
			got := []int{p.TasksPerNode, p.Groups[0].Cores, p.Groups[0].GPUs, p.CoresPerTask, p.GPUsPerTask, p.Tasks}
			want := []int{tc.tasks, tc.cores, tc.gpus, tc.perTaskC, tc.perTG, 3 * tc.tasks}
			if !slices.Equal(got, want) {
				t.Errorf("tasks, cores, gpus, cores/task, gpus/task, total tasks = %v, want %v", got, want)
			}
		})
	}
}

func TestJobDefaultsOnlyWhenUnset(t *testing.T) {
	js := read(t, jobsetYAML(nil, "w:1:2"))
	p, _ := build(js, settings.Defaults())
	want := "[completionMode=Indexed parallelism=2 backoffLimit=0 restartPolicy=Never]"
	wantNetwork := "[enableDNSHostnames=true publishNotReadyAddresses=true]"
	if got, network := fmt.Sprint(p.Groups[0].Set), fmt.Sprint(p.SetNetwork); got != want || network != wantNetwork {
		t.Errorf("set = %s, network %s; want %s, network %s", got, network, want, wantNetwork)
	}
	places := map[string]jobset.Place{"completionMode": jobset.InJob, "parallelism": jobset.InJob, "backoffLimit": jobset.InJob, "restartPolicy": jobset.InPod}
	for _, d := range p.Groups[0].Set {
		if d.In != places[d.Field] {
			t.Errorf("%s is set in place %d, want %d", d, d.In, places[d.Field])
		}
	}
	text := jobsetOf(nil, job("w:1:2").JobField("parallelism", 2).JobField("completionMode", "Indexed").JobField("backoffLimit", 0)).YAML()
	p, _ = build(read(t, text), settings.Defaults())
	if got := fmt.Sprint(p.Groups[0].Set); got != "[restartPolicy=Never]" {
		t.Errorf("set = %s, want only restartPolicy", got)
	}
	text = jobsetOf(nil, jobsettest.Job("w").JobField("parallelism", 3)).YAML()
	p, _ = build(read(t, text), settings.Defaults())
	if got := fmt.Sprint(p.Groups[0].Set); !strings.Contains(got, "completions=3") || strings.Contains(got, "parallelism") {
		t.Errorf("set = %s with parallelism 3 and no completions, want completions=3 and no parallelism", got)
	}
}

// Issue 14, point 6: the transform removes its own earlier rendering
// (recognised by shape) before the JobSet is read, so what reaches Build
// with one of its names, or with the entrypoint in front of the command,
// is the user's: it is reported, never taken for an earlier rendering
// and silently replaced.
func TestLookalikeRenderingRefused(t *testing.T) {
	text := jobsetOf(nil, job("w:1:2").
		ContainerField("command", []any{EntrypointPath, "run"}).
		ContainerField("volumeMounts", []any{map[string]any{"name": "flux-config", "mountPath": "/data"}}).
		PodField("initContainers", []any{map[string]any{"name": "flux-installer", "image": "view"}}).
		PodField("volumes", []any{map[string]any{"name": "flux-config", "emptyDir": map[string]any{}}})).YAML()
	p, found := build(read(t, text), settings.Defaults())
	if p != nil {
		t.Fatal("built a plan")
	}
	pod := "spec.replicatedJobs[0].template.spec.template.spec"
	for _, path := range []string{pod + ".initContainers[0].name", pod + ".volumes[0].name", pod + ".containers[0].volumeMounts[0].name", pod + ".containers[0].command[0]"} {
		if !slices.ContainsFunc(found, func(f finding.Finding) bool { return f.Severity == finding.Error && f.Path == path }) {
			t.Errorf("no error at %s: %v", path, errorsOf(found))
		}
	}
}

func TestBuildErrors(t *testing.T) {
	for _, tc := range []struct {
		name, text, want string
	}{
		{"gpus differ", jobsetYAML(nil, "a:1:1:resources:\n  limits:\n    nvidia.com/gpu: 2", "b:1:1:resources:\n  limits:\n    nvidia.com/gpu: 4"), "set flux-framework.org/gpus-per-node"},
		{"a million gpus", jobsetYAML(nil, "w:1:2:resources:\n  limits:\n    nvidia.com/gpu: 1000000"), "more than the 256 a Flux node may have"},
		{"a million cpus", jobsetYAML(nil, "w:1:2:resources:\n  limits:\n    cpu: 1000000"), "more than the 65536 a Flux node may have"},
		{"fewer cores than tasks", jobsetYAML(map[string]string{"flux-framework.org/tasks-per-node": "8"}, "w:1:2:resources:\n  limits:\n    cpu: 4"), "set flux-framework.org/cores-per-node to 8"},
		{"gpus indivisible by tasks", jobsetYAML(map[string]string{"flux-framework.org/tasks-per-node": "4"}, "w:1:2:resources:\n  limits:\n    nvidia.com/gpu: 2"), "must be a multiple of tasks-per-node"},
		{"hostname", jobsettest.New(strings.Repeat("j", 52)).Jobs(job("w:1:2")).YAML(), "more than the 57"},
		{"too many brokers", jobsetYAML(nil, "w:1001:1000"), "more than 1000000 brokers"},
		{"jobset name", jobsettest.New("9js").Jobs(job("w:1:2")).YAML(), "DNS-1035"},
		{"env valueFrom", jobsetYAML(nil, "w:1:2:env:\n- name: FLUX_VIEW_IMAGE\n  valueFrom:\n    configMapKeyRef: {name: x, key: y}"), "must be a literal value"},
		{"env conflict", jobsetYAML(nil, "a:1:1:env:\n- name: FLUX_QUEUE_POLICY\n  value: easy", "b:1:1:env:\n- name: FLUX_QUEUE_POLICY\n  value: fcfs"), "the whole instance needs one value"},
		{"launcher with tasks-per-node", jobsetYAML(map[string]string{"flux-framework.org/launcher": "true", "flux-framework.org/tasks-per-node": "2"}, "w:1:2"), "tasks-per-node shapes the flux run of the command, but launcher is true (metadata.annotations[flux-framework.org/launcher])"},
		{"launcher with run-options", jobsetYAML(map[string]string{"flux-framework.org/launcher": "true", "flux-framework.org/run-options": "-o pmi=pmix"}, "w:1:2"), "run-options shapes the flux run of the command, but launcher is true"},
		{"launcher and interactive", jobsetYAML(map[string]string{"flux-framework.org/launcher": "true", "flux-framework.org/interactive": "true"}, "w:1:2"), "interactive and launcher are both true"},
		{"launcher without command", jobsetOf(map[string]string{"flux-framework.org/launcher": "true"}, job("w:1:2").ContainerField("command", nil)).YAML(), "launcher is true (metadata.annotations[flux-framework.org/launcher]) but the container has no command"},
		{"flux-path with a view image", jobsetYAML(map[string]string{"flux-framework.org/flux-path": "/opt/flux", "flux-framework.org/view-image": "ghcr.io/x/view:1"}, "w:1:2"), "flux-path says the image carries Flux, but view-image is \"ghcr.io/x/view:1\" (metadata.annotations[flux-framework.org/view-image])"},
		{"mount overlap", jobsetYAML(nil, "w:1:2:volumeMounts:\n- name: x\n  mountPath: /mnt/flux"), "overlaps a path jobset-flux mounts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, found := build(read(t, tc.text), settings.Defaults())
			errs := strings.Join(errorsOf(found), "\n")
			if p != nil || !strings.Contains(errs, tc.want) {
				t.Errorf("plan %v, errors:\n%s\nwant an error containing %q", p != nil, errs, tc.want)
			}
		})
	}
}

func TestOwnShmMountWins(t *testing.T) {
	p, found := build(read(t, jobsetYAML(nil, "w:1:2:volumeMounts:\n- name: shm\n  mountPath: /dev/shm/")), settings.Defaults())
	if p == nil || !p.Groups[0].OwnShm {
		t.Fatalf("want OwnShm, got plan %v: %v", p, errorsOf(found))
	}
}

// TestGroupsHaveTheirOwnResources: a GPU-less launcher and 8-GPU workers
// are each described as they are, and the command runs on the workers
// only, with -g per task; groups that agree on GPUs all run it, with the
// -c the smallest of them can give.
func TestGroupsHaveTheirOwnResources(t *testing.T) {
	text := jobsetYAML(nil,
		"launcher:1:1:resources:\n  limits:\n    cpu: 2",
		"workers:2:2:resources:\n  limits:\n    cpu: 32\n    nvidia.com/gpu: 8")
	p, found := build(read(t, text), settings.Defaults())
	if p == nil {
		t.Fatalf("Build failed: %v", errorsOf(found))
	}
	l, w := p.Groups[0], p.Groups[1]
	if l.Cores != 2 || l.GPUs != 0 || l.RunsJob || w.Cores != 32 || w.GPUs != 8 || !w.RunsJob {
		t.Errorf("launcher %d cores %d GPUs (runs %v), workers %d cores %d GPUs (runs %v); want 2/0/false and 32/8/true", l.Cores, l.GPUs, l.RunsJob, w.Cores, w.GPUs, w.RunsJob)
	}
	got := []int{p.JobNodes, p.TasksPerNode, p.Tasks, p.CoresPerTask, p.GPUsPerTask}
	if want := []int{4, 8, 32, 4, 1}; !slices.Equal(got, want) {
		t.Errorf("-N, tasks per node, -n, -c, -g = %v, want %v", got, want)
	}
	if !slices.ContainsFunc(found, func(f finding.Finding) bool {
		return f.Severity == finding.Info && f.Message == `flux run places the command's 32 tasks on the 4 pods of "workers", not on "launcher" (no GPUs)`
	}) {
		t.Errorf("no info saying where the command runs: %+v", found)
	}

	// No GPUs anywhere: every group runs the job, -c fits the smaller.
	p, found = build(read(t, jobsetYAML(map[string]string{"flux-framework.org/tasks-per-node": "2"},
		"a:1:1:resources:\n  limits:\n    cpu: 8", "b:1:3:resources:\n  requests:\n    cpu: 4")), settings.Defaults())
	if p == nil {
		t.Fatalf("Build failed: %v", errorsOf(found))
	}
	got = []int{p.Groups[0].Cores, p.Groups[1].Cores, p.JobNodes, p.Tasks, p.CoresPerTask, p.GPUsPerTask}
	if want := []int{8, 4, 4, 8, 2, 0}; !slices.Equal(got, want) || !p.Groups[0].RunsJob || !p.Groups[1].RunsJob {
		t.Errorf("cores a, cores b, -N, -n, -c, -g = %v (runs %v %v), want %v and both run", got, p.Groups[0].RunsJob, p.Groups[1].RunsJob, want)
	}
	if !slices.ContainsFunc(found, func(f finding.Finding) bool {
		return f.Message == `flux run -c 2 is what replicatedJob "b"'s 4 cores give each of 2 tasks, so the job uses 4 of the 8 cores of "a"'s pods`
	}) {
		t.Errorf("no info saying -c leaves cores of a unused: %+v", found)
	}

	// A launcher whose CPU limit cannot hold the tasks per node runs
	// none, since the workers can: no error, and an info says why.
	p, found = build(read(t, jobsetYAML(map[string]string{"flux-framework.org/tasks-per-node": "32"},
		"launcher:1:1:resources:\n  limits:\n    cpu: 1", "workers:1:4:resources:\n  limits:\n    cpu: 32")), settings.Defaults())
	if p == nil {
		t.Fatalf("Build failed: %v", errorsOf(found))
	}
	got = []int{p.Groups[0].Cores, p.Groups[1].Cores, p.JobNodes, p.Tasks, p.CoresPerTask}
	if want := []int{1, 32, 4, 128, 1}; !slices.Equal(got, want) || p.Groups[0].RunsJob || !p.Groups[1].RunsJob {
		t.Errorf("cores launcher, cores workers, -N, -n, -c = %v (runs %v %v), want %v and only the workers run", got, p.Groups[0].RunsJob, p.Groups[1].RunsJob, want)
	}
	if !slices.ContainsFunc(found, func(f finding.Finding) bool {
		return f.Message == `flux run places the command's 128 tasks on the 4 pods of "workers", not on "launcher" (its CPU limit is below tasks-per-node: 1 cores, 32 tasks)`
	}) {
		t.Errorf("no info saying the launcher runs no task: %+v", found)
	}

	// An explicit gpus-per-node describes every node alike.
	p, _ = build(read(t, jobsetYAML(map[string]string{"flux-framework.org/gpus-per-node": "2"}, "a:1:1", "b:1:1:resources:\n  limits:\n    nvidia.com/gpu: 8")), settings.Defaults())
	if p == nil || p.Groups[0].GPUs != 2 || p.Groups[1].GPUs != 2 || p.JobNodes != 2 || p.GPUsPerTask != 1 {
		t.Errorf("explicit gpus-per-node: plan %+v, want 2 GPUs on both groups, -N 2, -g 1", p)
	}
}

// TestAcceleratorWarnings: an extended resource that looks like an
// accelerator but is not counted is a warning with its field path, unless
// gpus-per-node says how many GPUs there are.
func TestAcceleratorWarnings(t *testing.T) {
	text := jobsetYAML(nil, "w:1:2:resources:\n  limits:\n    google.com/tpu: 4\n    memory: 1Gi")
	p, found := build(read(t, text), settings.Defaults())
	if p == nil {
		t.Fatalf("Build failed: %v", errorsOf(found))
	}
	path := "spec.replicatedJobs[0].template.spec.template.spec.containers[0].resources.limits[google.com/tpu]"
	var warnings []string
	for _, f := range found {
		if f.Severity == finding.Warning {
			warnings = append(warnings, f.Path+": "+f.Message)
		}
	}
	if len(warnings) != 1 || !strings.HasPrefix(warnings[0], path+": is not counted as GPUs") || !strings.Contains(warnings[0], "gpu.intel.com/i915") {
		t.Errorf("warnings %q, want one at %s", warnings, path)
	}
	_, found = build(read(t, jobsetYAML(map[string]string{"flux-framework.org/gpus-per-node": "4"}, "w:1:2:resources:\n  limits:\n    google.com/tpu: 4")), settings.Defaults())
	if slices.ContainsFunc(found, func(f finding.Finding) bool { return f.Severity == finding.Warning }) {
		t.Errorf("gpus-per-node is set, yet: %+v", found)
	}
}

// TestUnusedCommandsWarned: only rank 0's command runs, so a wrapped
// container of another replicatedJob with a command of its own gets a
// warning at that command; one that repeats the leader's, or has none,
// does not.
func TestUnusedCommandsWarned(t *testing.T) {
	// Each replicatedJob has its own command: launcher and same keep
	// [run]; none has none; workers sleeps; argsonly has args only.
	text := jobsetOf(nil, job("launcher:1:1"), job("same:1:2"),
		job("none:1:1").ContainerField("command", nil),
		job("workers:2:1").ContainerField("command", []any{"sleep", "infinity"}),
		job("argsonly:1:1").ContainerField("command", nil).ContainerField("args", []any{"--serve"})).YAML()
	p, found := build(read(t, text), settings.Defaults())
	if p == nil {
		t.Fatalf("Build failed: %v", errorsOf(found))
	}
	var paths []string
	for _, f := range found {
		if f.Severity == finding.Warning && strings.Contains(f.Message, "will never run its own command") {
			paths = append(paths, f.Path)
			if !strings.Contains(f.Message, `Flux runs only rank 0's command (container "app" of replicatedJob "launcher")`) {
				t.Errorf("message %q does not say whose command runs", f.Message)
			}
		}
	}
	want := []string{
		"spec.replicatedJobs[3].template.spec.template.spec.containers[0].command",
		"spec.replicatedJobs[4].template.spec.template.spec.containers[0].args",
	}
	if !slices.Equal(paths, want) {
		t.Errorf("warnings at %q, want %q", paths, want)
	}
}

// TestLauncher: the command is the initial program, so no flux run is
// planned, and groups whose GPUs differ (which no single flux run could
// span) are fine: each is described as it is.
func TestLauncher(t *testing.T) {
	text := jobsetYAML(map[string]string{"flux-framework.org/launcher": "true"},
		"driver:1:1:resources:\n  limits:\n    cpu: 1", "w:2:3:resources:\n  limits:\n    cpu: 4\n    nvidia.com/gpu: 2")
	p, found := build(read(t, text), settings.Defaults())
	if p == nil {
		t.Fatalf("errors: %v", errorsOf(found))
	}
	if !p.Settings.Launcher || p.Interactive || p.Tasks != 0 || p.JobNodes != 0 {
		t.Errorf("launcher %v interactive %v tasks %d nodes %d, want a launcher plan with no flux run", p.Settings.Launcher, p.Interactive, p.Tasks, p.JobNodes)
	}
	if g := p.Groups; g[0].Cores != 1 || g[0].GPUs != 0 || g[1].Cores != 4 || g[1].GPUs != 2 {
		t.Errorf("groups %+v, want driver 1 core and workers 4 cores, 2 GPUs", g)
	}
	// Set in the function config and switched off by an annotation.
	off := jobsetYAML(map[string]string{"flux-framework.org/launcher": "false", "flux-framework.org/tasks-per-node": "1"}, "w:1:2")
	cfg := settings.Layer{Kind: settings.FromConfig, Values: map[string]settings.Raw{"launcher": {Value: "true", Path: "data.launcher"}}}
	if p, found := build(read(t, off), resolved(t, cfg)); p == nil || p.Settings.Launcher {
		t.Errorf("annotation launcher=false over config true: plan %v, errors %v", p != nil, errorsOf(found))
	}
}

// TestImageFlux: view-image none or a flux-path means the image's own Flux.
func TestImageFlux(t *testing.T) {
	for _, tc := range []struct {
		ann  map[string]string
		path string
	}{
		{map[string]string{"flux-framework.org/view-image": "none"}, ""},
		{map[string]string{"flux-framework.org/flux-path": "/opt/flux"}, "/opt/flux"},
		{map[string]string{"flux-framework.org/view-image": "none", "flux-framework.org/flux-path": "/usr"}, "/usr"},
	} {
		p, found := build(read(t, jobsetYAML(tc.ann, "w:1:2")), settings.Defaults())
		if p == nil || !p.ImageFlux || p.Settings.FluxPath != tc.path || p.ViewImage != "" {
			t.Errorf("%v: plan %+v, errors %v; want image Flux at %q", tc.ann, p, errorsOf(found), tc.path)
		}
	}
}

// An image with its own Flux keeps its /opt/software (Flux itself may be
// a Spack installation there): the render mounts no software tree, so a
// user's mount there is theirs to make; with a view it collides.
func TestImageFluxFreesSoftwareDir(t *testing.T) {
	rj := "w:1:2:volumeMounts:\n- name: spack\n  mountPath: /opt/software"
	if p, found := build(read(t, jobsetYAML(map[string]string{"flux-framework.org/view-image": "none"}, rj)), settings.Defaults()); p == nil {
		t.Errorf("view-image none: refused a mount at /opt/software: %v", errorsOf(found))
	}
	_, found := build(read(t, jobsetYAML(nil, rj)), settings.Defaults())
	if errs := errorsOf(found); len(errs) != 1 || !strings.Contains(errs[0], "overlaps a path jobset-flux mounts") {
		t.Errorf("with a view: errors %v, want the mount refused", errs)
	}
}
