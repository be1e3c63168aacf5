package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// instanceTimeout bounds one JobSet from apply to its end: pod start-up
// (the view copy), broker quorum and the job, with other tests' pods on
// the same 2-CPU node. Idle, an instance takes 15-30 s; with every test
// running and the machine shared (load 25) the 8-pod multi-job example
// took 3.5 minutes.
const instanceTimeout = 8 * time.Minute

// TestGrid boots instances of several shapes (1-3 replicatedJobs,
// replicas 1-3, completions 1-4) on the real cluster, each in a tenant
// namespace (Pod Security restricted, quota, LimitRange, default-deny
// NetworkPolicy; tenant_test.go) with containers that meet it and the
// render's network-policy: every broker joins
// (one task per node prints its rank and host), ranks follow the hostlist,
// and the leader's exit code is the job's. A non-zero leader fails the
// JobSet with no pod restarted or retried and no Job created twice.
func TestGrid(t *testing.T) {
	t.Parallel()
	requireCluster(t)
	shapes := []struct {
		name   string
		groups []group
		exit   int // the exit code of the task on the last rank
	}{
		{"one", []group{{name: "w", replicas: 1, completions: 1}}, 0},
		{"column", []group{{name: "w", replicas: 1, completions: 4}}, 0},
		{"row", []group{{name: "w", replicas: 3, completions: 1}}, 5},
		{"two", []group{{name: "a", replicas: 2, completions: 2}, {name: "b", replicas: 1, completions: 3}}, 0},
		{"three", []group{{name: "a", replicas: 1, completions: 2}, {name: "b", replicas: 2, completions: 1}, {name: "c", replicas: 1, completions: 3}}, 3},
	}
	for _, s := range shapes {
		for _, mode := range viewMountsFor("grid/" + s.name) {
			t.Run(mode+"/"+s.name, func(t *testing.T) {
				t.Parallel()
				runShape(t, mode, s.name, s.groups, s.exit)
			})
		}
	}
}

func runShape(t *testing.T, mode, name string, groups []group, exit int) {
	start := time.Now()
	n := newTenantNamespace(t, "grid-"+mode+"-"+name)
	hosts := hostnames(name, groups...)
	script := fmt.Sprintf(`echo "task $FLUX_TASK_RANK of $FLUX_JOB_SIZE on $(hostname)"; [ "$FLUX_TASK_RANK" != %d ] || exit %d`, len(hosts)-1, exit)
	command := []string{"bash", "-c", script}
	tenant := make([]group, len(groups))
	for i, g := range groups {
		g.container = restrictedContainer(nil)
		g.container["command"] = command
		tenant[i] = g
	}
	n.apply(render(t, jobSet(t, name, withMode(mode, map[string]string{"flux-framework.org/network-policy": "true"}), command, tenant...)))
	want := jobSetCompleted
	if exit != 0 {
		want = jobSetFailed
	}
	h := n.expectEnd(name, want, instanceTimeout)
	checkStored(t, n, name)
	leader, ok := h.last.pod(groups[0].name, 0, 0)
	if !ok {
		t.Fatalf("no leader pod")
	}
	out := n.logs(leader.Metadata.Name, "app")
	for rank, host := range hosts {
		line := fmt.Sprintf("task %d of %d on %s", rank, len(hosts), host)
		if c := countLines(out, line); c != 1 {
			t.Errorf("the leader's log has %q %d times, want once", line, c)
		}
	}
	if code := exitCode(leader, "app"); code != exit {
		t.Errorf("leader exit %d, want the job's %d", code, exit)
	}
	checkViewMount(t, mode, leader, out)
	checkNoRetries(t, n, h, groups)
	t.Logf("%s mode, %d pods, %s from apply to %s", mode, len(hosts), time.Since(start).Round(time.Second), want)
	if exit != 0 {
		logFollowers(t, h)
	}
}

// checkNoRetries fails the test on any sign of a restart or retry, and
// unless exactly one pod per index and one Job per replicatedJob replica
// were seen by the polls and created according to the Job controller's
// events (which also count a pod no poll saw).
func checkNoRetries(t *testing.T, n *namespace, h *history, groups []group) {
	t.Helper()
	for _, r := range h.retries() {
		t.Errorf("retry: %s", r)
	}
	for job, c := range n.podsCreated() {
		if want := completionsOf(groups, job); c != want {
			t.Errorf("the Job controller created %d pods for Job %s, want %d", c, job, want)
		}
	}
	wantPods, wantJobs := 0, 0
	for _, g := range groups {
		wantPods += g.replicas * g.completions
		wantJobs += g.replicas
	}
	if len(h.pods) != wantPods || len(h.jobs) != wantJobs {
		t.Errorf("saw %d pods and %d Jobs, want %d and %d:\n%s", len(h.pods), len(h.jobs), wantPods, wantJobs, h.summary())
	}
}

// completionsOf is the completions of the group whose Jobs are named
// <jobset>-<group>-<index>.
func completionsOf(groups []group, job string) int {
	for _, g := range groups {
		if strings.Contains(job, "-"+g.name+"-") {
			return g.completions
		}
	}
	return -1
}

// logFollowers records how the followers of a failed leader ended: the
// JobSet controller deletes the Jobs still active when the JobSet fails.
func logFollowers(t *testing.T, h *history) {
	var lines []string
	for _, p := range h.last.pods() {
		deleting := ""
		if p.Metadata.DeletionTimestamp != nil {
			deleting = " (being deleted)"
		}
		lines = append(lines, fmt.Sprintf("%s %s exit %d%s", p.Metadata.Name, p.Status.Phase, exitCode(p, "app"), deleting))
	}
	t.Logf("pods when the JobSet failed:\n%s", strings.Join(lines, "\n"))
}

// exitCode is a container's exit code, -1 while it has none.
func exitCode(p object, container string) int {
	for _, c := range p.Status.ContainerStatuses {
		if c.Name == container && c.State.Terminated != nil {
			return c.State.Terminated.ExitCode
		}
	}
	return -1
}

// TestSecurityContext: runAsUser/runAsGroup/fsGroup 1001 with
// runAsNonRoot, as restricted namespaces require: the brokers and the
// tasks run as 1001, and the Secret's file lands with fsGroup's group and
// group read, which the entrypoint's private copy makes harmless. Then the
// same with the restricted Pod Security Standard enforced on the namespace
// (seccomp RuntimeDefault, no capabilities, no privilege escalation): the
// API server admits every pod and Flux runs under seccomp.
func TestSecurityContext(t *testing.T) {
	t.Parallel()
	requireCluster(t)
	for _, tc := range []struct {
		name string
		pod  map[string]any
		ctr  map[string]any
	}{
		{"nonroot", map[string]any{"runAsUser": 1001, "runAsGroup": 1001, "fsGroup": 1001, "runAsNonRoot": true}, nil},
		{"restricted", map[string]any{"runAsUser": 1001, "runAsGroup": 1001, "fsGroup": 1001, "runAsNonRoot": true, "seccompProfile": map[string]any{"type": "RuntimeDefault"}},
			map[string]any{"allowPrivilegeEscalation": false, "capabilities": map[string]any{"drop": []any{"ALL"}}}},
	} {
		for _, mode := range viewMountsFor("security/" + tc.name) {
			t.Run(mode+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				runSecurityContext(t, mode, tc.name, tc.pod, tc.ctr)
			})
		}
	}
}

// runSecurityContext is one TestSecurityContext case in one view-mount
// mode: podSec and ctrSec are the pod's and the container's
// securityContext (ctrSec nil: none, and no Pod Security Standard).
func runSecurityContext(t *testing.T, mode, name string, podSec, ctrSec map[string]any) {
	n := newNamespace(t, "sec-"+mode+"-"+name)
	if ctrSec != nil {
		// The API server's PodSecurity admission judges every pod
		// the Job controller creates here.
		if out, err := kubectl(context.Background(), nil, "label", "namespace", n.name, "pod-security.kubernetes.io/enforce=restricted"); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	}
	ctr := map[string]any{"name": "app", "image": appImage, "command": []string{"bash", "-c",
		`echo "uid $(id -u) gid $(id -g) on $(hostname) groups $(id -G)"; [ "$FLUX_TASK_RANK" != 0 ] || stat -Lc 'cert %a %u:%g' /mnt/flux/curve/curve.cert`}}
	if ctrSec != nil {
		ctr["securityContext"] = ctrSec
	}
	groups := []group{{name: "w", replicas: 1, completions: 2, container: ctr, pod: map[string]any{"securityContext": podSec}}}
	js := "sec"
	n.apply(render(t, jobSet(t, js, withMode(mode, nil), nil, groups...)))
	h := n.expectEnd(js, jobSetCompleted, instanceTimeout)
	leader, _ := h.last.pod("w", 0, 0)
	out := n.logs(leader.Metadata.Name, "app")
	checkViewMount(t, mode, leader, out)
	for _, host := range hostnames(js, groups...) {
		if !strings.Contains(out, "uid 1001 gid 1001 on "+host+" groups 1001") {
			t.Errorf("no task ran as 1001:1001 with group 1001 first on %s:\n%s", host, out)
		}
	}
	// kubelet: Secret files are root-owned, fsGroup's group, mode
	// defaultMode (0444 from the function) with group read.
	if !strings.Contains(out, "cert 444 0:1001\n") {
		t.Errorf("the mounted certificate is not 0444 root:1001:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "uid ") || strings.HasPrefix(l, "cert ") {
			t.Logf("job: %s", l)
		}
	}
}

// checkStored reads the JobSet back from the API server, after the JobSet
// webhooks defaulted and admitted it, and the headless Service the
// controller made for it: the fields Flux depends on are as rendered.
func checkStored(t *testing.T, n *namespace, name string) {
	t.Helper()
	out, err := n.run(nil, "get", "jobsets.jobset.x-k8s.io", name, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var js struct {
		Spec struct {
			Network struct {
				EnableDNSHostnames       *bool  `json:"enableDNSHostnames"`
				PublishNotReadyAddresses *bool  `json:"publishNotReadyAddresses"`
				Subdomain                string `json:"subdomain"`
			} `json:"network"`
			ReplicatedJobs []struct {
				Name     string `json:"name"`
				Template struct {
					Spec struct {
						CompletionMode string `json:"completionMode"`
						BackoffLimit   *int   `json:"backoffLimit"`
						Completions    *int   `json:"completions"`
						Parallelism    *int   `json:"parallelism"`
						Template       struct {
							Spec struct {
								RestartPolicy string `json:"restartPolicy"`
							} `json:"spec"`
						} `json:"template"`
					} `json:"spec"`
				} `json:"template"`
			} `json:"replicatedJobs"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(out, &js); err != nil {
		t.Fatal(err)
	}
	net := js.Spec.Network
	if net.EnableDNSHostnames == nil || !*net.EnableDNSHostnames || net.PublishNotReadyAddresses == nil || !*net.PublishNotReadyAddresses {
		t.Errorf("stored network %s, want DNS hostnames and not-ready addresses published", out)
	}
	for _, rj := range js.Spec.ReplicatedJobs {
		s := rj.Template.Spec
		if s.CompletionMode != "Indexed" || s.BackoffLimit == nil || *s.BackoffLimit != 0 || s.Template.Spec.RestartPolicy != "Never" ||
			s.Completions == nil || s.Parallelism == nil || *s.Completions != *s.Parallelism {
			t.Errorf("stored replicatedJob %s is not Indexed, backoffLimit 0, restartPolicy Never, parallelism = completions:\n%s", rj.Name, out)
		}
	}
	subdomain := net.Subdomain
	if subdomain == "" {
		subdomain = name
	}
	svc, err := n.run(nil, "get", "service", subdomain, "-o", "jsonpath={.spec.clusterIP} {.spec.publishNotReadyAddresses}")
	if err != nil || string(svc) != "None true" {
		t.Errorf("service %s: %q (%v), want a headless Service publishing not-ready addresses", subdomain, svc, err)
	}
}
