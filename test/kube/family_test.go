package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jobset-flux/jobset-flux/test/testsupport"
)

// The cluster's address families, as ip-family names them.
const (
	ipv4               = "ipv4"
	ipv6               = "ipv6"
	ipFamilyAnnotation = "flux-framework.org/ip-family"
)

// clusterFamily is the cluster's address family: that of the kubernetes
// Service, whose family is the first of the cluster's Service range
// (hack/kube/cluster.sh up starts ipv4, or ipv6 with KUBE_IP_FAMILY=ipv6).
func clusterFamily(ctx context.Context) (string, error) {
	out, err := env.api.get(ctx, "/api/v1/namespaces/default/services/kubernetes")
	if err != nil {
		return "", fmt.Errorf("the kubernetes Service: %w\n%s", err, out)
	}
	var svc struct {
		Spec struct {
			IPFamilies []string `json:"ipFamilies"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(out, &svc); err != nil || len(svc.Spec.IPFamilies) == 0 {
		return "", fmt.Errorf("the kubernetes Service names no ipFamilies (%v):\n%s", err, out)
	}
	switch svc.Spec.IPFamilies[0] {
	case "IPv4":
		return ipv4, nil
	case "IPv6":
		return ipv6, nil
	}
	return "", fmt.Errorf("the kubernetes Service's family is %q", svc.Spec.IPFamilies[0])
}

// hostCIDR is the CIDR that holds the one address ip.
func hostCIDR(ip string) string {
	if testsupport.IsIPv6(ip) {
		return ip + "/128"
	}
	return ip + "/32"
}

// TestClusterFamily: an instance speaks the cluster's address family.
// make test runs test/kube on an IPv4 cluster, and this test with the
// examples and TestAcrossNodes again on a single-stack IPv6 one
// (test-kube-ipv6), where the tests' JobSets carry ip-family ipv6 (jobSet,
// exampleBase). On either, three brokers rendered for the family form and
// Complete: every pod has one address, of the family; rank 0 listens on its
// pod's address only (never IPv6 link-local) and its children connected
// from theirs, rank 1 by rank 0's name. On IPv6 the same JobSet rendered
// without ip-family cannot bind (eth0 has no IPv4 address, and Flux binds
// IPv4 unless told): it Fails as soon as its brokers start (under a
// minute on an idle machine), a broker's log naming the interface, instead
// of waiting out its start-timeout.
func TestClusterFamily(t *testing.T) {
	t.Parallel()
	requireCluster(t)
	groups := []group{{name: "w", replicas: 1, completions: 3}}
	t.Run(env.ipFamily, func(t *testing.T) {
		t.Parallel()
		const js = "fam"
		n := newNamespace(t, "family-"+env.ipFamily)
		n.apply(render(t, jobSet(t, js, nil, testsupport.TBONCommand(fluxBin), groups...)))
		h := n.expectEnd(js, jobSetCompleted, instanceTimeout)
		// Each pod's address, by its hostname (the JobSet's pod
		// names end in a random suffix).
		ips := map[string]string{}
		var leaderPod string
		for i := range groups[0].completions {
			o, ok := h.last.pod(groups[0].name, 0, i)
			if !ok {
				t.Errorf("pod %d of the Completed JobSet is gone", i)
				continue
			}
			if len(o.Status.PodIPs) != 1 || testsupport.IsIPv6(o.Status.PodIPs[0].IP) != (env.ipFamily == ipv6) {
				t.Errorf("pod %s has addresses %v, want one %s address", o.Metadata.Name, o.Status.PodIPs, env.ipFamily)
			}
			ips[fmt.Sprintf("%s-w-0-%d", js, i)] = o.Status.PodIP
			if i == 0 {
				leaderPod = o.Metadata.Name
			}
		}
		leader := js + "-w-0-0"
		out := n.logs(leaderPod, "app")
		listen, peers := testsupport.TBONSocketsIn(out)
		if len(listen) != 1 || listen[0] != ips[leader] {
			t.Errorf("rank 0 listens on %q, want only its pod's address %s:\n%s", listen, ips[leader], out)
		}
		for _, follower := range []string{js + "-w-0-1", js + "-w-0-2"} {
			if !slices.Contains(peers, ips[follower]) {
				t.Errorf("rank 0 has no TBON connection from %s (%s), only from %q:\n%s", follower, ips[follower], peers, out)
			}
		}
		if strings.Contains(strings.ToLower(out), "fe80:") {
			t.Errorf("a broker bound or reached a link-local address:\n%s", out)
		}
		if want := "parent tcp://" + leader + "." + js + ":8050\n"; !strings.Contains(out, want) {
			t.Errorf("rank 1 did not reach rank 0 by its name (%q):\n%s", strings.TrimSpace(want), out)
		}
		t.Logf("%s: pods %v; rank 0 listens on %q, its children connected from %q", env.ipFamily, ips, listen, peers)
	})
	if env.ipFamily != ipv6 {
		return
	}
	t.Run("ipv6-without-ip-family", func(t *testing.T) {
		t.Parallel()
		const js = "nofam"
		n := newNamespace(t, "family-none")
		// A start-timeout far beyond the wait: under load the pods can
		// spend minutes in their init container, so the wait is timed from
		// apply and only has to end well before the start-timeout could.
		const startTimeout, bound = "10m", 5 * time.Minute
		doc := jobSet(t, js, map[string]string{"flux-framework.org/start-timeout": startTimeout, ipFamilyAnnotation: ""}, testsupport.TBONCommand(fluxBin), groups...)
		if strings.Contains(doc, ipFamilyAnnotation) {
			t.Fatalf("the JobSet still sets ip-family:\n%s", doc)
		}
		start := time.Now()
		n.apply(render(t, doc))
		state, msg, h := n.waitEnd(js, bound)
		took := time.Since(start)
		if state != jobSetFailed || took > bound {
			t.Fatalf("JobSet %q (%s) %s after apply, want Failed within %s, long before the start-timeout (%s)", state, msg, took.Round(time.Second), bound, startTimeout)
		}
		told := false
		var logs []string
		for _, p := range h.pods {
			out, err := n.run(nil, "logs", p.name, "-c", "app")
			if err != nil {
				continue
			}
			logs = append(logs, string(out))
			told = told || strings.Contains(string(out), "eth0")
		}
		if !told {
			t.Errorf("no broker's log names the interface it could not bind (eth0):\n%s", strings.Join(logs, "\n---\n"))
		}
		t.Logf("without ip-family: Failed %s after apply (%s)", took.Round(time.Second), msg)
	})
}
