package kubelet_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jobset-flux/jobset-flux/test/flux/internal/kubelet"
	"github.com/jobset-flux/jobset-flux/test/testsupport"
)

// buildShim builds podshim once per test binary.
func buildShim(t *testing.T) string {
	t.Helper()
	if os.Getuid() != 0 {
		testsupport.SkipOrFail(t, "the pod runner needs root")
	}
	bin := filepath.Join(t.TempDir(), "podshim")
	out, err := exec.Command("go", "build", "-o", bin, "../../cmd/podshim").CombinedOutput()
	if err != nil {
		t.Fatalf("build podshim: %v\n%s", err, out)
	}
	return bin
}

const twoPods = `
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: demo, namespace: team}
spec:
  network: {subdomain: net}
  replicatedJobs:
  - name: w
    replicas: 1
    template:
      spec:
        completions: 2
        parallelism: 2
        backoffLimit: 0
        completionMode: Indexed
        template:
          spec:
            restartPolicy: Never
            securityContext: {runAsUser: 1001, runAsGroup: 1001, fsGroup: 1001}
            volumes:
            - {name: cfg, configMap: {name: cfg, defaultMode: 0400}}
            - {name: scratch, emptyDir: {}}
            containers:
            - name: main
              image: host
              env: [{name: WHO, value: "pod $(JOB_COMPLETION_INDEX) $$(HOME)"}]
              volumeMounts:
              - {name: cfg, mountPath: /cfg, readOnly: true}
              - {name: scratch, mountPath: /scratch}
              command: [bash, -c]
              args:
              - |
                set -e
                echo "host=$(hostname) id=$(id -u):$(id -g) groups=$(id -G) who=$WHO"
                stat -L -c 'cfg %a %u:%g' /cfg/greeting
                cat /cfg/greeting
                getent hosts demo-w-0-0.net demo-w-0-1.net | awk '{print "resolves", $2}'
                ip -4 -o addr show eth0 | awk '{print "eth0", $4}'
                touch /scratch/x && stat -c 'scratch %g' /scratch/x
                if getent hosts demo-w-0-9.net; then echo "unexpected name"; exit 3; fi
                exit $JOB_COMPLETION_INDEX
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, namespace: team}
data: {greeting: hello}
`

func TestTwoPods(t *testing.T) {
	shim := buildShim(t)
	objs, err := kubelet.Decode([]byte(twoPods))
	if err != nil {
		t.Fatal(err)
	}
	c, err := kubelet.Start(kubelet.Options{Shim: shim, Images: map[string]kubelet.Image{"host": kubelet.HostImage(nil)}, Logf: t.Logf}, objs)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := c.Wait(ctx)
	if err != nil {
		t.Error(err)
	}
	if err := c.Close(); err != nil {
		t.Error(err)
	}
	if res[0].State != "Failed" {
		t.Errorf("JobSet state %s, want Failed (pod 1 exits 1)", res[0].State)
	}
	for _, p := range res[0].Pods {
		for _, r := range p.Results() {
			t.Logf("%s %s exit %d:\n%s", p.Hostname, r.Name, r.ExitCode, r.Log)
		}
		r, _ := p.Result("main")
		for _, want := range []string{"host=" + p.Hostname, "id=1001:1001", "groups=1001", "cfg 440 0:1001", "hello", "resolves demo-w-0-0.net.team.svc.cluster.local", "resolves demo-w-0-1.net.team.svc.cluster.local", "eth0 " + p.IP + "/16", "scratch 1001", "$(HOME)"} {
			if !strings.Contains(r.Log, want) {
				t.Errorf("%s: log lacks %q", p.Hostname, want)
			}
		}
		if r.ExitCode != p.Index {
			t.Errorf("%s: exit %d, want %d", p.Hostname, r.ExitCode, p.Index)
		}
	}
}

// run starts a cluster for the YAML, waits (at most timeout) and returns
// the first JobSet's result, the cluster (closed) and Wait's error.
func runYAML(t *testing.T, shim, doc string, timeout time.Duration) (kubelet.JobSetResult, *kubelet.Cluster, error) {
	t.Helper()
	objs, err := kubelet.Decode([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	c, err := kubelet.Start(kubelet.Options{Shim: shim, Images: map[string]kubelet.Image{"host": kubelet.HostImage(nil)}, Logf: t.Logf, Grace: 500 * time.Millisecond}, objs)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	res, werr := c.Wait(ctx)
	if err := c.Close(); err != nil {
		t.Errorf("cleanup: %v", err)
	}
	return res[0], c, werr
}

// jobSetYAML is a one-replicatedJob JobSet around a pod spec (indented
// for its place) and Job fields.
func jobSetYAML(jobFields, podSpec string) string {
	return `apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: k}
spec:
  replicatedJobs:
  - name: r
    template:
      spec:
` + jobFields + `
        template:
          spec:
` + podSpec
}

// TestSemantics holds the runner to the Kubernetes behaviour the Flux
// tests rely on.
func TestSemantics(t *testing.T) {
	shim := buildShim(t)
	t.Run("init container failure fails the pod; the app never starts", func(t *testing.T) {
		res, _, err := runYAML(t, shim, jobSetYAML("        backoffLimit: 0", `            restartPolicy: Never
            initContainers: [{name: init, image: host, command: [sh, -c, 'exit 4']}]
            containers: [{name: app, image: host, command: [sh, -c, 'echo ran']}]
`), time.Minute)
		p := res.Pods[0]
		if err != nil || res.State != "Failed" || p.Phase() != "Failed" {
			t.Errorf("JobSet %s, pod %s, %v", res.State, p.Phase(), err)
		}
		if r, ok := p.Result("init"); !ok || r.ExitCode != 4 {
			t.Errorf("init: %+v", r)
		}
		if _, ok := p.Result("app"); ok {
			t.Errorf("the app container ran after a failed init container")
		}
	})
	t.Run("readOnlyRootFilesystem, dropped capabilities, runAsNonRoot", func(t *testing.T) {
		res, _, _ := runYAML(t, shim, jobSetYAML("        backoffLimit: 0", `            restartPolicy: Never
            containers:
            - name: ro
              image: host
              securityContext: {readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
              command: [sh, -c, 'if touch /etc/x 2>/dev/null || touch /tmp/x 2>/dev/null; then echo writable; fi; grep -E "^(CapEff|NoNewPrivs)" /proc/self/status']
            - name: nonroot
              image: host
              securityContext: {runAsNonRoot: true}
              command: [sh, -c, 'echo should not run']
`), time.Minute)
		p := res.Pods[0]
		ro, _ := p.Result("ro")
		if strings.Contains(ro.Log, "writable") || !strings.Contains(ro.Log, "CapEff:\t0000000000000000") || !strings.Contains(ro.Log, "NoNewPrivs:\t1") {
			t.Errorf("read-only, unprivileged container:\n%s", ro.Log)
		}
		if nr, _ := p.Result("nonroot"); res.State != "Failed" || !strings.Contains(nr.Log, "runAsNonRoot") {
			t.Errorf("a root container with runAsNonRoot started: JobSet %s, %+v", res.State, p.Results())
		}
	})
	t.Run("parallelism 1 runs one pod at a time", func(t *testing.T) {
		res, _, err := runYAML(t, shim, jobSetYAML("        completions: 3\n        parallelism: 1\n        completionMode: Indexed", `            restartPolicy: Never
            containers: [{name: app, image: host, command: [sh, -c, 'date +%s.%N; sleep 1']}]
`), time.Minute)
		if err != nil || res.State != "Completed" {
			t.Fatalf("JobSet %s, %v", res.State, err)
		}
		var starts []float64
		for _, p := range res.Pods {
			r, _ := p.Result("app")
			var s float64
			fmt.Sscan(r.Log, &s)
			starts = append(starts, s)
		}
		for i := 1; i < len(starts); i++ {
			if starts[i]-starts[i-1] < 1 {
				t.Errorf("pod %d started %.2fs after pod %d, while it still ran", i, starts[i]-starts[i-1], i-1)
			}
		}
	})
	t.Run("backoffLimit: a failing pod is retried, then the Job fails", func(t *testing.T) {
		res, _, err := runYAML(t, shim, jobSetYAML("        backoffLimit: 2", `            restartPolicy: Never
            containers: [{name: app, image: host, command: [sh, -c, 'exit 1']}]
`), time.Minute)
		if err != nil || res.State != "Failed" || res.Pods[0].Attempts() != 3 {
			t.Errorf("JobSet %s after %d attempts, %v; want Failed after 3", res.State, res.Pods[0].Attempts(), err)
		}
	})
	t.Run("a JobSet that does not end is stopped at the timeout and cleaned up", func(t *testing.T) {
		start := time.Now()
		res, c, err := runYAML(t, shim, jobSetYAML("", `            containers: [{name: app, image: host, command: [sh, -c, 'trap "" TERM; sleep 1000']}]
`), 2*time.Second)
		if err == nil || res.State != "Running" {
			t.Errorf("Wait: %v, JobSet %s; want a timeout", err, res.State)
		}
		if d := time.Since(start); d > 15*time.Second {
			t.Errorf("stopping took %v", d)
		}
		if err := c.Leftovers(); err != nil {
			t.Error(err)
		}
	})
	t.Run("success policy Any on a target ends the JobSet and stops the rest", func(t *testing.T) {
		doc := `apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: any}
spec:
  successPolicy: {operator: Any, targetReplicatedJobs: [leader]}
  replicatedJobs:
  - name: leader
    template: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: app, image: host, command: [sh, -c, 'sleep 1']}]}}}}
  - name: forever
    template: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: app, image: host, command: [sleep, '1000']}]}}}}
`
		res, _, err := runYAML(t, shim, doc, time.Minute)
		if err != nil || res.State != "Completed" {
			t.Errorf("JobSet %s, %v", res.State, err)
		}
		if r, _ := res.Pods[1].Result("app"); r.ExitCode == 0 {
			t.Errorf("the pod of the other job was not stopped: %+v", r)
		}
	})
}
