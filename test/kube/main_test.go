// Package kube runs JobSets rendered by jobset-flux on a real Kubernetes
// cluster (hack/kube: kube-apiserver, the Job and JobSet controllers with
// the JobSet webhooks, kubelet with containerd and runc, CNI and CoreDNS)
// and asserts what the cluster does with them. See docs/contributing/kubernetes-tests.md.
package kube

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jobset-flux/jobset-flux/test/testsupport"
)

// env is what every test needs, set up once by TestMain.
var env struct {
	err        error  // why the cluster is not usable
	repo       string // the repository root
	kubectl    string // $KUBECTL
	kubeconfig string // $KUBECONFIG
	function   string // bin/jobset-flux
	kustomize  string // bin/kustomize
	dnsServer  string // the cluster DNS address pods get in resolv.conf
	ipFamily   string // the cluster's address family: ipv4 or ipv6
	api        *apiClient
}

func TestMain(m *testing.M) {
	// The node runs several small JobSets at once far below its pod limit;
	// most of a test's wall time is waiting (for pods, for an instance
	// that must not form), not CPU, so more tests than the 2 CPUs run at a
	// time; -parallel on the command line still wins (parsed after this).
	if f := flag.Lookup("test.parallel"); f != nil {
		_ = f.Value.Set("6")
	}
	flag.Parse()
	env.err = setup()
	meter.start(time.Second)
	code := m.Run()
	meter.stop()
	fmt.Fprint(os.Stderr, meter.report())
	if f := flag.Lookup("test.run"); code == 0 && f != nil && f.Value.String() == "" {
		if unknown := unknownImageModeCases(); len(unknown) > 0 {
			fmt.Fprintf(os.Stderr, "imageModeCases names cases no test has: %s\n", strings.Join(unknown, ", "))
			code = 1
		}
	}
	os.Exit(code)
}

func setup() error {
	repo, err := testsupport.RepoRoot()
	if err != nil {
		return err
	}
	env.repo = repo
	env.function = envOr("JOBSET_FLUX_BIN", filepath.Join(repo, "bin/jobset-flux"))
	env.kustomize = envOr("JOBSET_FLUX_KUSTOMIZE", filepath.Join(repo, "bin/kustomize"))
	for _, bin := range []string{env.function, env.kustomize} {
		if err := testsupport.Executable(bin); err != nil {
			return fmt.Errorf("%w (run make build kustomize)", err)
		}
	}
	if err := clusterEnv(repo); err != nil {
		return err
	}
	if env.api, err = newAPIClient(env.kubeconfig); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if out, err := env.api.get(ctx, "/readyz"); err != nil {
		return fmt.Errorf("the cluster is not ready (make kube-up): %w\n%s", err, out)
	}
	env.ipFamily, err = clusterFamily(ctx)
	return err
}

// clusterEnv finds kubectl and the kubeconfig: from the environment
// (make test-kube sets both), else from hack/kube/cluster.sh env.
func clusterEnv(repo string) error {
	env.kubectl, env.kubeconfig = os.Getenv("KUBECTL"), os.Getenv("KUBECONFIG")
	if env.kubectl == "" || env.kubeconfig == "" {
		script := filepath.Join(repo, "hack/kube/cluster.sh")
		out, err := exec.Command("bash", script, "env").Output()
		if err != nil {
			return fmt.Errorf("KUBECTL/KUBECONFIG unset and %s env failed: %w", script, err)
		}
		for _, word := range strings.Fields(string(out)) {
			k, v, ok := strings.Cut(word, "=")
			if !ok {
				continue
			}
			v = strings.Trim(v, `"'`)
			switch k {
			case "KUBECTL":
				env.kubectl = v
			case "KUBECONFIG":
				env.kubeconfig = v
			}
		}
	}
	if env.kubectl == "" || env.kubeconfig == "" {
		return errors.New("no kubectl or kubeconfig: set KUBECTL and KUBECONFIG (bash hack/kube/cluster.sh env)")
	}
	return testsupport.Executable(env.kubectl)
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// requireCluster fails the test under CI=true and skips it elsewhere when
// there is no cluster to run on.
func requireCluster(t *testing.T) {
	t.Helper()
	if env.err != nil {
		testsupport.SkipOrFail(t, "kubernetes cluster: %v", env.err)
	}
}
