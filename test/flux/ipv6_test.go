package flux

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jobset-flux/jobset-flux/test/flux/internal/kubelet"
	"github.com/jobset-flux/jobset-flux/test/testsupport"
)

// TestIPv6: on a single-stack IPv6 pod network (no IPv4 address on any
// pod, DNS with AAAA records only) an instance rendered with ip-family
// ipv6 forms and Completes: every broker binds its pod's global IPv6
// address (not the link-local one the kernel also gives eth0), and the
// followers reach rank 0 by its name's IPv6 address.
func TestIPv6(t *testing.T) {
	t.Parallel()
	requireEnv(t)
	groups := []group{{name: "w", replicas: 1, completions: 3}}
	rendered := render(t, jobSet(t, "six", map[string]string{"flux-framework.org/ip-family": "ipv6"}, testsupport.TBONCommand(fluxBin), groups...))
	r := startWith(t, kubelet.Options{Images: images(nil), IPv6: true}, decode(t, rendered))
	res := r.wait(instanceTimeout)
	leader := r.c.Pod("six-w-0-0")
	out := logs(leader, "app")
	defer func() {
		if t.Failed() {
			dump(t, res)
		}
	}()
	if res.State != "Completed" {
		t.Fatalf("JobSet %s (%s), want Completed", res.State, res.Reason)
	}
	for rank, host := range []string{"six-w-0-0", "six-w-0-1", "six-w-0-2"} {
		if line := "task " + string(rune('0'+rank)) + " on " + host; strings.Count(out, line+"\n") != 1 {
			t.Errorf("the leader's log lacks %q once:\n%s", line, out)
		}
	}
	// Rank 0 listens on its global address only (not link-local, not
	// IPv4) and its two children reached it from theirs.
	listen, peers := testsupport.TBONSocketsIn(out)
	if len(listen) != 1 || listen[0] != leader.IP {
		t.Errorf("rank 0 listens on %q, want only its global address %s:\n%s", listen, leader.IP, out)
	}
	for _, follower := range []string{"six-w-0-1", "six-w-0-2"} {
		if ip := r.c.Pod(follower).IP; !slices.Contains(peers, ip) {
			t.Errorf("no TBON connection from %s (%s) on rank 0:\n%s", follower, ip, out)
		}
	}
	if regexp.MustCompile(`(?i)fe80:`).MatchString(out) {
		t.Errorf("a broker bound or reached a link-local address:\n%s", out)
	}
	if !strings.Contains(out, "parent tcp://six-w-0-0.six:8050\n") {
		t.Errorf("rank 1 did not reach rank 0 by its name:\n%s", out)
	}
	t.Logf("rank 0's TBON sockets: listen %q, peers %q", listen, peers)
}

// TestIPv6WithoutIPFamily: the same instance rendered without ip-family
// on the IPv6 pod network cannot bind (eth0 has no IPv4 address, and
// Flux binds IPv4 unless told): every broker exits at once with the
// error, and the JobSet Fails instead of waiting.
func TestIPv6WithoutIPFamily(t *testing.T) {
	t.Parallel()
	requireEnv(t)
	groups := []group{{name: "w", replicas: 1, completions: 2}}
	rendered := render(t, jobSet(t, "four", nil, testsupport.TBONCommand(fluxBin), groups...))
	start := time.Now()
	r := startWith(t, kubelet.Options{Images: images(nil), IPv6: true}, decode(t, rendered))
	res := r.wait(instanceTimeout)
	took := time.Since(start)
	out := logs(r.c.Pod("four-w-0-0"), "app")
	if res.State != "Failed" || took > time.Minute {
		dump(t, res)
		t.Fatalf("JobSet %s after %s, want Failed within a minute", res.State, took.Round(time.Second))
	}
	if !strings.Contains(out, "eth0") {
		dump(t, res)
		t.Errorf("the leader's log does not name the interface it could not bind:\n%s", out)
	}
	t.Logf("Failed %s after the start; the leader's error: %q", took.Round(time.Second), regexp.MustCompile(`(?m)^.*eth0.*$`).FindString(out))
}
