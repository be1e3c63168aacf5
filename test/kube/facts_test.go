package kube

import (
	"regexp"
	"testing"
)

// TestDNSRecords measures when a pod's own DNS record
// (<hostname>.<subdomain>, through the search path) answers, seen from
// the pod itself when its app container starts: the setup script, sourced
// before the broker starts, polls getent every 100 ms for up to 60 s. A
// broker that connects before its peer's record exists only retries
// (tbon.connect_timeout), so this is a timing fact, not a failure; the
// test fails only if a record never appears.
func TestDNSRecords(t *testing.T) {
	t.Parallel()
	n := newNamespace(t, "dnsrec")
	setup := `t0=$(date +%s%N); misses=0
until getent hosts "$(hostname).dnsrec" >/dev/null || ((misses >= 600)); do misses=$((misses + 1)); sleep 0.1; done
echo "dns: own record after $(( ($(date +%s%N) - t0) / 1000000 )) ms, $misses misses" >&2
`
	groups := []group{{name: "w", replicas: 1, completions: 3}}
	n.apply(render(t, jobSet(t, "dnsrec", map[string]string{"flux-framework.org/setup": setup}, []string{"true"}, groups...)))
	h := n.expectEnd("dnsrec", jobSetCompleted, instanceTimeout)
	line := regexp.MustCompile(`dns: own record after (\d+) ms, (\d+) misses`)
	for i := range 3 {
		p, ok := h.last.pod("w", 0, i)
		if !ok {
			t.Errorf("no pod %d", i)
			continue
		}
		m := line.FindStringSubmatch(n.logs(p.Metadata.Name, "app"))
		switch {
		case m == nil:
			t.Errorf("%s logged no DNS timing", p.Metadata.Name)
		case m[2] == "600":
			t.Errorf("%s: its own record never answered in 60 s", p.Metadata.Name)
		default:
			t.Logf("%s: %s", p.Metadata.Name, m[0])
		}
	}
}
