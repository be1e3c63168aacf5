package plan

import (
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/jobset/jobsettest"
)

// Issue 41 classes 5 and 6: pod spec fields the render leaves as written,
// judged where they break a pod that runs a broker.

const (
	pod0       = job0 + ".template.spec"
	container0 = pod0 + ".containers[0]"
)

// w is the one replicatedJob of two pods the cases below start from.
func w() *jobsettest.ReplicatedJob { return jobsettest.Job("w").Completions(2) }

// port is a container's ports list of one port.
func port(number int, fields ...any) []any {
	p := map[string]any{"containerPort": number}
	for i := 0; i+1 < len(fields); i += 2 {
		p[fields[i].(string)] = fields[i+1]
	}
	return []any{p}
}

// initContainers is a pod's initContainers: a native sidecar (restart
// Always) or a regular init container, with ports.
func initContainers(restart string, ports []any) []any {
	c := map[string]any{"name": "side", "image": "side", "ports": ports}
	if restart != "" {
		c["restartPolicy"] = restart
	}
	return []any{c}
}

func TestBrokerPortTaken(t *testing.T) {
	runKubeCases(t, []kubeCase{
		{"the app on the TBON port", jobsettest.New("js").Jobs(w().ContainerField("ports", port(8050))), finding.Error, container0 + ".ports[0].containerPort",
			[]string{"is 8050, the Flux broker's TBON port (flux-framework.org/port, by default)", "one network namespace", `container "app" cannot bind it`, "another port"}},
		{"a native sidecar on it", jobsettest.New("js").Jobs(w().PodField("initContainers", initContainers("Always", port(8050, "protocol", "TCP")))), finding.Error, pod0 + ".initContainers[0].ports[0].containerPort",
			[]string{`container "side"`}},
		{"the port as set", jobsettest.New("js").Annotation("flux-framework.org/port", "9000").Jobs(w().ContainerField("ports", port(9000))), finding.Error, container0 + ".ports[0].containerPort",
			[]string{"set at metadata.annotations[flux-framework.org/port]"}},
		{"the default port once another is set", jobsettest.New("js").Annotation("flux-framework.org/port", "9000").Jobs(w().ContainerField("ports", port(8050))), 0, "", nil},
		{"UDP on the same number", jobsettest.New("js").Jobs(w().ContainerField("ports", port(8050, "protocol", "UDP"))), 0, "", nil},
		{"a hostPort of the number maps the node's port", jobsettest.New("js").Jobs(w().ContainerField("ports", port(80, "hostPort", 8050))), 0, "", nil},
		{"a regular init container has ended before the broker", jobsettest.New("js").Jobs(w().PodField("initContainers", initContainers("", port(8050)))), 0, "", nil},
	})
}

func TestRegularSidecarWarned(t *testing.T) {
	logger := map[string]any{"name": "logger", "image": "busybox", "command": []any{"tail", "-f", "/dev/null"}}
	runKubeCases(t, []kubeCase{
		{"a regular container beside the wrapped one", jobsettest.New("js").Jobs(w().Sidecar(logger)), finding.Warning, pod0 + ".containers[1]",
			[]string{`is container "logger", a regular container besides the one jobset-flux wraps ("app")`, "JobSet never ends", "make it a native sidecar: move it to initContainers with restartPolicy: Always"}},
		{"the wrapped container chosen after it", jobsettest.New("js").Annotation("flux-framework.org/container", "logger").Jobs(w().Sidecar(logger)), finding.Warning, container0,
			[]string{`is container "app", a regular container besides the one jobset-flux wraps ("logger")`}},
		{"a native sidecar", jobsettest.New("js").Jobs(w().PodField("initContainers", initContainers("Always", nil))), 0, "", nil},
		{"outside the instance", jobsettest.New("js").Annotation("flux-framework.org/replicated-jobs", "w").Jobs(w(), jobsettest.Job("other").Sidecar(logger)), 0, "", nil},
	})
}

func TestProbesOnTheBroker(t *testing.T) {
	probe := map[string]any{"httpGet": map[string]any{"path": "/healthz", "port": 8080}}
	runKubeCases(t, []kubeCase{
		{"livenessProbe", jobsettest.New("js").Jobs(w().ContainerField("livenessProbe", probe)), finding.Error, container0 + ".livenessProbe",
			[]string{"runs as a Flux job", "kills the container, its broker with it", "remove it"}},
		{"readinessProbe", jobsettest.New("js").Jobs(w().ContainerField("readinessProbe", probe)), finding.Warning, container0 + ".readinessProbe",
			[]string{"is kept", "runs as a Flux job", "never Ready", "waitForPodsReady", "remove it"}},
		{"readinessProbe with launcher", jobsettest.New("js").Annotation("flux-framework.org/launcher", "true").Jobs(w().ContainerField("readinessProbe", probe)), finding.Warning, container0 + ".readinessProbe",
			[]string{"runs once, on rank 0"}},
		{"readinessProbe on an interactive instance", jobsettest.New("js").Annotation("flux-framework.org/interactive", "true").Jobs(w().ContainerField("command", nil).ContainerField("readinessProbe", probe)), finding.Warning, container0 + ".readinessProbe",
			[]string{"nothing of yours runs until someone submits a job"}},
		{"probes on a container jobset-flux does not wrap", jobsettest.New("js").Jobs(w().PodField("initContainers", []any{map[string]any{"name": "side", "image": "side", "restartPolicy": "Always", "livenessProbe": probe, "readinessProbe": probe}})), 0, "", nil},
	})
}

func TestWindowsPodRefused(t *testing.T) {
	runKubeCases(t, []kubeCase{
		{"os.name", jobsettest.New("js").Jobs(w().PodField("os", map[string]any{"name": "windows"})), finding.Error, pod0 + ".os.name",
			[]string{"is windows", "Linux nodes only"}},
		{"nodeSelector", jobsettest.New("js").Jobs(w().PodField("nodeSelector", map[string]any{"kubernetes.io/os": "windows"})), finding.Error, pod0 + ".nodeSelector[kubernetes.io/os]",
			[]string{"is windows", "Linux nodes only"}},
		{"linux", jobsettest.New("js").Jobs(w().PodField("os", map[string]any{"name": "linux"}).PodField("nodeSelector", map[string]any{"kubernetes.io/os": "linux"})), 0, "", nil},
	})
}

// TestViewCopyOverMemoryLimit: with the default memory-backed copy of
// the view, a wrapped container's memory limit below the copy (which the
// flux-installer, given that limit, writes) is a warning at the limit
// with both sizes and the fixes; the same limit where nothing is copied
// into memory says nothing.
func TestViewCopyOverMemoryLimit(t *testing.T) {
	limited := func(memory string) *jobsettest.ReplicatedJob {
		return w().ContainerField("resources", map[string]any{"limits": map[string]any{"memory": memory}})
	}
	at := container0 + ".resources.limits[memory]"
	found := kubeFindings(t, jobsettest.New("js").Jobs(limited("512Mi")))
	if f, ok := findingAt(found, at); !ok || f.Severity != finding.Warning || len(found) != 1 ||
		!strings.Contains(f.Message, "limits the container's memory to 512Mi, less than the copy of the Flux view (about 1Gi") ||
		!strings.Contains(f.Message, "flux-installer") || !strings.Contains(f.Message, "raise it by 1Gi or more, set view-copy-medium: disk, or set view-mount: image") {
		t.Errorf("want one warning at %s with both sizes and the fixes, got %+v", at, found)
	}
	for name, js := range map[string]*jobsettest.JobSet{
		"a limit the copy fits in": jobsettest.New("js").Jobs(limited("2Gi")),
		"the copy on the disk":     jobsettest.New("js").Annotation("flux-framework.org/view-copy-medium", "disk").Jobs(limited("512Mi")),
		"a mounted view":           jobsettest.New("js").Annotation("flux-framework.org/view-mount", "image").Jobs(limited("512Mi")),
		"the image's own Flux":     jobsettest.New("js").Annotation("flux-framework.org/view-image", "none").Jobs(limited("512Mi")),
	} {
		if found := kubeFindings(t, js); len(found) != 0 {
			t.Errorf("%s: want nothing, got %+v", name, found)
		}
	}
}
