package kube

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// observeFor is how long a test watches an instance that must not form or
// end: several times the brokers' 5 s connect timeout and longer than any
// healthy 2-pod instance takes here.
const observeFor = 60 * time.Second

// failingLeader is a 2-pod JobSet whose leader's job exits 3 after every
// task ran, rendered by the function; a test then changes one field of
// the render and applies it.
func failingLeader(t *testing.T, name string) docs {
	t.Helper()
	cmd := []string{"bash", "-c", `echo "task $FLUX_TASK_RANK on $(hostname) restart-attempt $RESTART_ATTEMPT"; exit 3`}
	ctr := map[string]any{"name": "app", "image": appImage, "command": cmd, "env": []any{map[string]any{
		"name": "RESTART_ATTEMPT", "valueFrom": map[string]any{"fieldRef": map[string]any{"fieldPath": "metadata.labels['jobset.sigs.k8s.io/restart-attempt']"}},
	}}}
	return decode(t, render(t, jobSet(t, name, nil, nil, group{name: "w", replicas: 1, completions: 2, container: ctr})))
}

// TestRetryJoinsDeadInstance: a Job that retries a failed pod (a
// backoffLimit above 0, backoffLimitPerIndex, or a podFailurePolicy that
// ignores the failure) starts a new leader after the instance has ended:
// the followers already exited 0 with the old one, so the new broker waits
// for a quorum that never comes, the Job never ends and neither does the
// JobSet. The function sets backoffLimit 0; each case changes the render.
func TestRetryJoinsDeadInstance(t *testing.T) {
	t.Parallel()
	requireCluster(t)
	for _, tc := range []struct {
		name    string
		mutate  func(t *testing.T, js map[string]any)
		retries bool // false: the Job fails at once, as the function means it to
	}{
		{"backoffLimit", func(t *testing.T, js map[string]any) { set(t, js, 2, jobPath(0, "backoffLimit")...) }, true},
		{"backoffLimitPerIndex", func(t *testing.T, js map[string]any) {
			// The API defaults backoffLimit to its maximum when only
			// backoffLimitPerIndex is given: what such a Job is without
			// the function's backoffLimit 0.
			delete(at(t, js, jobPath(0)...).(map[string]any), "backoffLimit")
			set(t, js, 1, jobPath(0, "backoffLimitPerIndex")...)
		}, true},
		{"backoffLimitPerIndex-capped", func(t *testing.T, js map[string]any) {
			// The render of an input with backoffLimitPerIndex: the
			// function adds backoffLimit 0, and the Job controller fails
			// the Job on the first failed pod whatever the per-index
			// limit says.
			set(t, js, 1, jobPath(0, "backoffLimitPerIndex")...)
		}, false},
		{"podFailurePolicy", func(t *testing.T, js map[string]any) {
			set(t, js, map[string]any{"rules": []any{map[string]any{
				"action": "Ignore", "onExitCodes": map[string]any{"containerName": "app", "operator": "In", "values": []any{3}},
			}}}, jobPath(0, "podFailurePolicy")...)
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			n := newNamespace(t, "retry-"+strings.ToLower(tc.name))
			d := failingLeader(t, "retry")
			tc.mutate(t, d.find(t, "JobSet", "retry"))
			n.apply(d.encode(t))
			if tc.retries {
				expectDeadInstance(t, n, "retry")
				return
			}
			h := n.expectEnd("retry", jobSetFailed, instanceTimeout)
			checkNoRetries(t, n, h, []group{{name: "w", replicas: 1, completions: 2}})
		})
	}
}

// expectDeadInstance waits for a second pod for the leader's index and
// fails the test unless it is still running, waiting for its followers,
// observeFor/2 later with the JobSet not ended.
func expectDeadInstance(t *testing.T, n *namespace, name string) {
	t.Helper()
	leaders := map[string]bool{} // the UIDs of the leader's index's pods
	var runningSince time.Time
	h, ok := n.watch(2*instanceTimeout, func(s *snapshot) bool {
		if st, _ := s.jobSetState(name); st != "" {
			return true
		}
		p, found := s.pod("w", 0, 0)
		if found {
			leaders[p.Metadata.UID] = true
		}
		// The clock starts when a retried leader runs.
		if !found || len(leaders) < 2 || p.Status.Phase != "Running" {
			return false
		}
		if runningSince.IsZero() {
			runningSince = s.at
		}
		return s.at.Sub(runningSince) >= observeFor/2
	})
	st, msg := h.last.jobSetState(name)
	t.Logf("pods seen:\n%s", h.summary())
	switch {
	case st != "":
		t.Errorf("JobSet %s (%s): no pod was retried", st, msg)
	case !ok:
		t.Errorf("no retried leader ran for %s (%d pods for the leader's index)", observeFor/2, len(leaders))
	default:
		p, _ := h.last.pod("w", 0, 0)
		t.Logf("the retried leader %s has run %s with its followers gone; its log:\n%s", p.Metadata.Name, observeFor/2, n.logs(p.Metadata.Name, "app"))
		if f, ok := h.last.pod("w", 0, 1); ok && f.Status.Phase != "Succeeded" {
			t.Errorf("follower %s is %s, want Succeeded with the first instance", f.Metadata.Name, f.Status.Phase)
		}
	}
}

// TestMaxRestarts: a JobSet failurePolicy with maxRestarts recreates every
// Job, so each restart is a new Flux instance that runs the whole job
// again from the start, not a resumption.
func TestMaxRestarts(t *testing.T) {
	t.Parallel()
	n := newNamespace(t, "restarts")
	d := failingLeader(t, "rs")
	set(t, d.find(t, "JobSet", "rs"), map[string]any{"maxRestarts": 1}, "spec", "failurePolicy")
	n.apply(d.encode(t))
	h := n.expectEnd("rs", jobSetFailed, 2*instanceTimeout)
	t.Logf("pods seen:\n%s", h.summary())
	attempts := map[string]bool{}
	for _, p := range h.pods {
		if p.index == "0" {
			attempts[p.restartAttempt] = true
		}
	}
	if !attempts["0"] || !attempts["1"] {
		t.Errorf("leader pods seen for restart attempts %v, want 0 and 1 (a new instance per restart)", attempts)
	}
	leader, ok := h.last.pod("w", 0, 0)
	if !ok {
		t.Fatalf("no leader pod at the end")
	}
	out := n.logs(leader.Metadata.Name, "app")
	// The last attempt's instance ran the whole job again, on both pods.
	for i := range 2 {
		if want := fmt.Sprintf("task %d on rs-w-0-%d restart-attempt 1", i, i); !strings.Contains(out, want) {
			t.Errorf("the restarted instance's log lacks %q:\n%s", want, out)
		}
	}
}

// TestDependsOn: dependsOn between two replicatedJobs of one instance.
// With status Complete the gate can never open: the first replicatedJob's
// brokers wait for the second's, which are created only once the first
// completed. With status Ready neither: the function's startup probe
// makes the first's pods Ready only once the whole instance has joined,
// which needs the second's (the render refuses both).
func TestDependsOn(t *testing.T) {
	t.Parallel()
	requireCluster(t)
	for _, status := range []string{"Complete", "Ready"} {
		t.Run(status, func(t *testing.T) {
			t.Parallel()
			n := newNamespace(t, "dep-"+strings.ToLower(status))
			groups := []group{{name: "a", replicas: 1, completions: 1}, {name: "b", replicas: 1, completions: 2}}
			d := decode(t, render(t, jobSet(t, "dep", nil, []string{"bash", "-c", `echo "task $FLUX_TASK_RANK on $(hostname)"`}, groups...)))
			set(t, d.find(t, "JobSet", "dep"), []any{map[string]any{"name": "a", "status": status}}, "spec", "replicatedJobs", 1, "dependsOn")
			n.apply(d.encode(t))
			h, ended := n.watch(observeFor, func(s *snapshot) bool { st, _ := s.jobSetState("dep"); return st != "" })
			if ended {
				st, msg := h.last.jobSetState("dep")
				t.Fatalf("JobSet %s (%s): the gate was expected never to open", st, msg)
			}
			for _, name := range h.jobs {
				if name != "dep-a-0" {
					t.Errorf("Job %s created: the gate opened", name)
				}
			}
			if p, ok := h.last.pod("a", 0, 0); !ok || p.Status.Phase != "Running" {
				t.Errorf("the leader is not running, waiting for its followers")
			}
			t.Logf("after %s: only dep-a-0 exists, its broker waits for dep-b-0's, which the gate holds back", observeFor)
		})
	}
}

// TestDNSPolicy: brokers reach each other as %h.<subdomain>, which only
// the pod's DNS search path completes. dnsPolicy Default (the node's
// resolver) and None without the cluster's search path leave the
// followers unable to resolve the leader: the instance never forms. None
// with the search path (and the cluster's DNS server) works.
func TestDNSPolicy(t *testing.T) {
	t.Parallel()
	requireCluster(t)
	dns := clusterDNS(t)
	for _, tc := range []struct {
		name   string
		policy string
		config func(ns string) map[string]any
		forms  bool
	}{
		{"Default", "Default", nil, false},
		{"None-no-search", "None", func(string) map[string]any { return map[string]any{"nameservers": []any{dns.server}} }, false},
		{"None-search", "None", func(ns string) map[string]any {
			return map[string]any{"nameservers": []any{dns.server}, "searches": []any{ns + ".svc." + dns.domain}, "options": []any{map[string]any{"name": "ndots", "value": "5"}}}
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			n := newNamespace(t, "dns-"+strings.ToLower(tc.name))
			d := decode(t, render(t, jobSet(t, "dns", nil, []string{"bash", "-c", `echo "task $FLUX_TASK_RANK on $(hostname)"`}, group{name: "w", replicas: 1, completions: 2})))
			js := d.find(t, "JobSet", "dns")
			set(t, js, tc.policy, podPath(0, "dnsPolicy")...)
			if tc.config != nil {
				set(t, js, tc.config(n.name), podPath(0, "dnsConfig")...)
			}
			n.apply(d.encode(t))
			if tc.forms {
				n.expectEnd("dns", jobSetCompleted, instanceTimeout)
				return
			}
			expectNeverForms(t, n, "dns", "w")
		})
	}
}

// expectNeverForms watches the JobSet for observeFor and fails the test if
// it ends; then shows from the follower that the leader's name does not
// resolve there.
func expectNeverForms(t *testing.T, n *namespace, name, rj string) {
	t.Helper()
	h, ended := n.watch(observeFor, func(s *snapshot) bool { st, _ := s.jobSetState(name); return st != "" })
	if ended {
		st, msg := h.last.jobSetState(name)
		t.Fatalf("JobSet %s (%s), want an instance that never forms", st, msg)
	}
	f, ok := h.last.pod(rj, 0, 1)
	if !ok || f.Status.Phase != "Running" {
		t.Fatalf("the follower is not running:\n%s", h.summary())
	}
	leaderHost := fmt.Sprintf("%s-%s-0-0.%s", name, rj, name)
	out, err := n.run(nil, "exec", f.Metadata.Name, "-c", "app", "--", "bash", "-c", "cat /etc/resolv.conf; getent hosts "+leaderHost)
	t.Logf("in %s: resolv.conf and getent hosts %s (%v):\n%s", f.Metadata.Name, leaderHost, err, out)
	if err == nil {
		t.Errorf("%s resolves in the follower, yet the instance did not form", leaderHost)
	}
}

// dnsInfo is the cluster DNS server and domain the kubelet gives pods.
type dnsInfo struct{ server, domain string }

// clusterDNS reads the kubelet's clusterDNS and clusterDomain from its
// configz endpoint (through the API server's node proxy).
func clusterDNS(t *testing.T) dnsInfo {
	t.Helper()
	n := &namespace{t: t, name: "default"}
	out, err := n.run(nil, "get", "nodes", "-o", "jsonpath={.items[0].metadata.name}")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := n.run(nil, "get", "--raw", "/api/v1/nodes/"+strings.TrimSpace(string(out))+"/proxy/configz")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Kubelet struct {
			ClusterDNS    []string `json:"clusterDNS"`
			ClusterDomain string   `json:"clusterDomain"`
		} `json:"kubeletconfig"`
	}
	if err := json.Unmarshal(raw, &cfg); err != nil || len(cfg.Kubelet.ClusterDNS) == 0 {
		t.Fatalf("kubelet configz: %v\n%s", err, raw)
	}
	return dnsInfo{cfg.Kubelet.ClusterDNS[0], cfg.Kubelet.ClusterDomain}
}

// TestBrokenHostsNeverComplete is the negative control of the suite: the
// same render as a healthy 2-pod instance, with the hosts of broker.toml
// edited so no pod finds itself in them. It must not complete.
func TestBrokenHostsNeverComplete(t *testing.T) {
	t.Parallel()
	n := newNamespace(t, "broken")
	d := decode(t, render(t, jobSet(t, "neg", nil, []string{"true"}, group{name: "w", replicas: 1, completions: 2})))
	data := at(t, d.find(t, "ConfigMap", "neg-flux-entrypoint"), "data").(map[string]any)
	toml := data["broker.toml"].(string)
	broken := strings.ReplaceAll(toml, "'neg-w-0-[0-1]'", "'neg-x-0-[0-1]'")
	if broken == toml {
		t.Fatalf("broker.toml has no hosts entry 'neg-w-0-[0-1]':\n%s", toml)
	}
	data["broker.toml"] = broken
	n.apply(d.encode(t))
	h, ended := n.watch(observeFor, func(s *snapshot) bool { st, _ := s.jobSetState("neg"); return st != "" })
	st, msg := h.last.jobSetState("neg")
	t.Logf("after %s (ended %v): JobSet %q %s", time.Since(h.start).Round(time.Second), ended, st, msg)
	if st == jobSetCompleted {
		t.Errorf("a render with wrong hosts completed: the checks of this suite could not fail")
	}
	// Best effort: the failed Job's pods may already be gone.
	if p, ok := h.last.pod("w", 0, 0); ok {
		out, err := n.run(nil, "logs", p.Metadata.Name, "-c", "app")
		t.Logf("the leader's log%s:\n%s", errSuffix(err), lastLines(string(out), 4))
	}
}
