package kubelet_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
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
	return runYAMLWith(t, kubelet.Options{Shim: shim}, doc, timeout)
}

// runYAMLWith is runYAML with more options; the host image, the test's log
// and a short grace period are filled in when unset.
func runYAMLWith(t *testing.T, opts kubelet.Options, doc string, timeout time.Duration) (kubelet.JobSetResult, *kubelet.Cluster, error) {
	t.Helper()
	objs, err := kubelet.Decode([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	c, err := kubelet.Start(withDefaults(t, opts), objs)
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

func withDefaults(t *testing.T, opts kubelet.Options) kubelet.Options {
	if opts.Images == nil {
		opts.Images = map[string]kubelet.Image{"host": kubelet.HostImage(nil)}
	}
	if opts.Logf == nil {
		opts.Logf = t.Logf
	}
	if opts.Grace == 0 {
		opts.Grace = 500 * time.Millisecond
	}
	return opts
}

// claimDir is a host directory standing in for a claim's volume, writable
// by any pod user as a provisioned volume would be made for them.
func claimDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}

const claimWriter = `apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: first}
spec:
  replicatedJobs:
  - name: w
    template:
      spec:
        completions: 2
        parallelism: 2
        completionMode: Indexed
        backoffLimit: 0
        template:
          spec:
            restartPolicy: Never
            securityContext: {runAsUser: 1001, runAsGroup: 1001, fsGroup: 2002}
            volumes: [{name: data, persistentVolumeClaim: {claimName: state}}]
            containers:
            - name: app
              image: host
              volumeMounts: [{name: data, mountPath: /var/lib/state}]
              command: [sh, -c, 'echo "written by $JOB_COMPLETION_INDEX" > /var/lib/state/pod-$JOB_COMPLETION_INDEX']
`

const claimReader = `apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: second}
spec:
  replicatedJobs:
  - name: r
    template:
      spec:
        backoffLimit: 0
        template:
          spec:
            restartPolicy: Never
            volumes:
            - {name: ro-source, persistentVolumeClaim: {claimName: state, readOnly: true}}
            - {name: rw-source, persistentVolumeClaim: {claimName: state}}
            containers:
            - name: source
              image: host
              volumeMounts: [{name: ro-source, mountPath: /state}]
              command: [sh, -c, 'cat /state/pod-0 /state/pod-1; if touch /state/x 2>/dev/null; then echo writable; fi']
            - name: mount
              image: host
              volumeMounts: [{name: rw-source, mountPath: /state, readOnly: true}]
              command: [sh, -c, 'cat /state/pod-0; if touch /state/y 2>/dev/null; then echo writable; fi']
`

// TestClaims: what the pods of one run write through a claim is in its
// host directory after Close, and the next run, given the same Claims,
// reads it.
func TestClaims(t *testing.T) {
	shim := buildShim(t)
	dir := claimDir(t)
	claims := map[string]string{"state": dir}
	res, _, err := runYAMLWith(t, kubelet.Options{Shim: shim, Claims: claims}, claimWriter, time.Minute)
	if err != nil || res.State != "Completed" {
		t.Fatalf("writer JobSet %s, %v", res.State, err)
	}
	for i := range 2 {
		path := filepath.Join(dir, fmt.Sprintf("pod-%d", i))
		b, err := os.ReadFile(path)
		if err != nil || string(b) != fmt.Sprintf("written by %d\n", i) {
			t.Errorf("%s after Close: %q, %v", path, b, err)
		}
		if st, err := os.Stat(path); err == nil && st.Sys().(*syscall.Stat_t).Uid != 1001 {
			t.Errorf("%s: owner %d, want the pod's user", path, st.Sys().(*syscall.Stat_t).Uid)
		}
	}
	// The directory is the test's: neither chowned nor given fsGroup.
	st, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if sys := st.Sys().(*syscall.Stat_t); sys.Uid != 0 || sys.Gid != 0 || st.Mode().Perm() != 0o777 || st.Mode()&os.ModeSetgid != 0 {
		t.Errorf("claim directory changed: %v %d:%d", st.Mode(), sys.Uid, sys.Gid)
	}

	res, _, err = runYAMLWith(t, kubelet.Options{Shim: shim, Claims: claims}, claimReader, time.Minute)
	if err != nil || res.State != "Completed" {
		t.Errorf("reader JobSet %s, %v", res.State, err)
	}
	p := res.Pods[0]
	for name, want := range map[string]string{"source": "written by 0\nwritten by 1\n", "mount": "written by 0\n"} {
		if r, _ := p.Result(name); r.Log != want {
			t.Errorf("container %s (a read-only mount of the claim) logged %q, want %q", name, r.Log, want)
		}
	}
	for _, f := range []string{"x", "y"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("a read-only mount of the claim wrote %s", f)
		}
	}
}

const claimPolicies = `apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: vcp}
spec:
  volumeClaimPolicies:
  - templates:
    - metadata: {name: state}
      spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
    - metadata: {name: cache}
      spec: {accessModes: [ReadWriteMany], resources: {requests: {storage: 1Gi}}}
    retentionPolicy: {whenDeleted: Retain}
  replicatedJobs:
  - name: leader
    template:
      spec:
        backoffLimit: 0
        template:
          spec:
            restartPolicy: Never
            containers:
            - name: app
              image: host
              volumeMounts: [{name: state, mountPath: /mnt/state}]
              command: [sh, -c, 'echo leader > /mnt/state/leader']
  - name: worker
    template:
      spec:
        backoffLimit: 0
        template:
          spec:
            restartPolicy: Never
            initContainers:
            - name: warm
              image: host
              volumeMounts: [{name: cache, mountPath: /cache}]
              command: [sh, -c, 'echo warm > /cache/warm']
            containers:
            - name: app
              image: host
              command: [sh, -c, 'test ! -e /mnt/state']
`

// TestVolumeClaimPolicies: a replicatedJob whose containers or init
// containers mount a volumeClaimPolicies template by name gets the
// controller's volume for the claim <template>-<JobSet>; one that does not
// mount it gets none.
func TestVolumeClaimPolicies(t *testing.T) {
	shim := buildShim(t)
	state, cache := claimDir(t), claimDir(t)
	res, _, err := runYAMLWith(t, kubelet.Options{Shim: shim, Claims: map[string]string{"state-vcp": state, "cache-vcp": cache}}, claimPolicies, time.Minute)
	if err != nil || res.State != "Completed" {
		t.Errorf("JobSet %s, %v", res.State, err)
		for _, p := range res.Pods {
			t.Logf("%s: %+v", p.Hostname, p.Results())
		}
	}
	for path, want := range map[string]string{filepath.Join(state, "leader"): "leader\n", filepath.Join(cache, "warm"): "warm\n"} {
		if b, err := os.ReadFile(path); err != nil || string(b) != want {
			t.Errorf("%s: %q, %v", path, b, err)
		}
	}
	for _, p := range res.Pods {
		var got []string
		for _, v := range p.Spec().Volumes {
			if v.PersistentVolumeClaim != nil {
				got = append(got, v.Name+"="+v.PersistentVolumeClaim.ClaimName)
			}
		}
		want := map[string]string{"leader": "state=state-vcp", "worker": "cache=cache-vcp"}[p.ReplicatedJob]
		if strings.Join(got, " ") != want {
			t.Errorf("%s: claim volumes %q, want %q", p.Hostname, got, want)
		}
	}
}

// TestClaimErrors: Start refuses a pod volume naming a claim that has no
// directory, and the JobSets the webhook would reject.
func TestClaimErrors(t *testing.T) {
	pod := func(volumes, mounts string) string {
		return jobSetYAML("", `            restartPolicy: Never
            volumes: `+volumes+`
            containers: [{name: app, image: host, command: ["true"], volumeMounts: `+mounts+`}]
`)
	}
	withPolicy := func(doc string) string {
		return strings.Replace(doc, "spec:\n  replicatedJobs:", "spec:\n  volumeClaimPolicies: [{templates: [{metadata: {name: state}}]}]\n  replicatedJobs:", 1)
	}
	tests := []struct {
		name   string
		doc    string
		claims map[string]string
		want   []string
	}{
		{"a claim not in Claims", pod("[{name: data, persistentVolumeClaim: {claimName: nope}}]", "[{name: data, mountPath: /d}]"),
			map[string]string{"other": t.TempDir()}, []string{"volume data", "PersistentVolumeClaim default/nope not found"}},
		{"a template's claim not in Claims", withPolicy(pod("[]", "[{name: state, mountPath: /d}]")),
			nil, []string{"volume state", "PersistentVolumeClaim default/state-k not found"}},
		{"a claim whose directory is missing", pod("[{name: data, persistentVolumeClaim: {claimName: gone}}]", "[{name: data, mountPath: /d}]"),
			map[string]string{"gone": filepath.Join(t.TempDir(), "missing")}, []string{"volume data", "PersistentVolumeClaim gone", "no such file"}},
		{"a template no container mounts", withPolicy(pod("[]", "[]")),
			map[string]string{"state-k": t.TempDir()}, []string{"mounts volumeClaimPolicies template state"}},
		{"a volume named like a template", withPolicy(pod("[{name: state, emptyDir: {}}]", "[{name: state, mountPath: /d}]")),
			map[string]string{"state-k": t.TempDir()}, []string{"volume state conflicts"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := kubelet.Decode([]byte(tt.doc))
			if err != nil {
				t.Fatal(err)
			}
			c, err := kubelet.Start(withDefaults(t, kubelet.Options{Claims: tt.claims}), objs)
			if err == nil {
				c.Close()
				t.Fatal("Start succeeded")
			}
			t.Logf("Start: %v", err)
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestCloseIsGraceful: Close stops running pods as deleting the JobSet
// does, so a container that handles SIGTERM gets to save its state in a
// claim; one that ignores SIGTERM is killed after the grace period. Only
// the saver is waited for: the other may still be starting when Close
// signals it, which must not kill it early.
func TestCloseIsGraceful(t *testing.T) {
	shim := buildShim(t)
	dir := claimDir(t)
	doc := jobSetYAML("        backoffLimit: 0", `            restartPolicy: Never
            volumes: [{name: data, persistentVolumeClaim: {claimName: state}}]
            containers:
            - name: saver
              image: host
              volumeMounts: [{name: data, mountPath: /state}]
              command: [bash, -c, 'trap "echo saved > /state/saved; exit 0" TERM; touch /state/ready; sleep 1000 & wait']
            - name: stubborn
              image: host
              command: [sh, -c, 'trap "" TERM; sleep 1000']
`)
	objs, err := kubelet.Decode([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	const grace = 2 * time.Second
	c, err := kubelet.Start(withDefaults(t, kubelet.Options{Shim: shim, Claims: map[string]string{"state": dir}, Grace: grace}), objs)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "ready")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			c.Close()
			t.Fatal("the container did not start")
		}
	}
	start := time.Now()
	if err := c.Close(); err != nil {
		t.Error(err)
	}
	took := time.Since(start)
	if b, err := os.ReadFile(filepath.Join(dir, "saved")); err != nil || string(b) != "saved\n" {
		t.Errorf("the SIGTERM handler's file: %q, %v", b, err)
	}
	if took < grace || took > grace+10*time.Second {
		t.Errorf("Close took %v; the container ignoring SIGTERM should be killed after the grace period %v", took, grace)
	}
	res, err := c.Wait(context.Background())
	if err != nil {
		t.Error(err)
	}
	p := res[0].Pods[0]
	t.Logf("after Close: JobSet %s, pod %s", res[0].State, p.Phase())
	if r, _ := p.Result("saver"); r.ExitCode != 0 {
		t.Errorf("saver: exit %d, want 0 from its SIGTERM handler", r.ExitCode)
	}
	if r, _ := p.Result("stubborn"); r.ExitCode != 128+int(syscall.SIGKILL) {
		t.Errorf("stubborn: exit %d, want SIGKILL's", r.ExitCode)
	}
}
