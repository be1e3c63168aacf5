package testsupport

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Cluster is the project's test cluster (hack/kube/cluster.sh), used,
// never started or stopped: make test-kube's session runs the modules'
// TestCluster tests with KUBECONFIG and KUBECTL set.
type Cluster struct {
	Kubectl, Kubeconfig string
}

// NeedCluster returns the cluster named by KUBECTL and KUBECONFIG, or
// fails the test under CI=true (skips it elsewhere) when there is none or
// it is not ready.
func NeedCluster(t testing.TB) *Cluster {
	t.Helper()
	c := &Cluster{Kubectl: os.Getenv("KUBECTL"), Kubeconfig: os.Getenv("KUBECONFIG")}
	if c.Kubectl == "" || c.Kubeconfig == "" {
		SkipOrFail(t, "no cluster: set KUBECTL and KUBECONFIG (eval \"$(bash hack/kube/cluster.sh env)\"); make test-kube runs these tests")
	}
	if _, err := c.Run(nil, "get", "--raw", "/readyz"); err != nil {
		SkipOrFail(t, "the cluster is not ready: %v", err)
	}
	return c
}

// Run runs kubectl, bounded by two minutes; the error carries stderr.
func (c *Cluster) Run(stdin []byte, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.Kubectl, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+c.Kubeconfig)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out.String(), nil
}

// Namespace creates the test's own namespace and deletes it, with all
// that is left in it, when the test ends; a failed test first logs its
// objects, events and pod logs.
func (c *Cluster) Namespace(t testing.TB, prefix string) string {
	t.Helper()
	suffix := make([]byte, 3)
	_, _ = rand.Read(suffix)
	ns := "kt-" + prefix + "-" + hex.EncodeToString(suffix)
	if _, err := c.Run(nil, "create", "namespace", ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := c.Run(nil, "get", "-n", ns, "jobsets.jobset.x-k8s.io,jobs,pods,configmaps,secrets", "-o", "wide")
			ev, _ := c.Run(nil, "get", "-n", ns, "events", "--sort-by=.metadata.creationTimestamp")
			logs, _ := c.Run(nil, "logs", "-n", ns, "--all-containers", "--prefix", "-l", "jobset.sigs.k8s.io/jobset-name")
			t.Logf("namespace %s at failure:\n%s\nevents:\n%s\nlogs:\n%s", ns, out, ev, logs)
		}
		if _, err := c.Run(nil, "delete", "namespace", ns, "--wait=true", "--timeout=110s"); err != nil {
			t.Errorf("delete namespace %s: %v", ns, err)
		}
	})
	return ns
}
