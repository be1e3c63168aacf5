package kube

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jobset-flux/jobset-flux/test/testsupport"
)

// kubectl runs $KUBECTL against the test cluster and returns its stdout;
// the error carries stderr, so a failure says why.
func kubectl(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, env.kubectl, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+env.kubeconfig)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, lastLines(stderr.String(), 3))
	}
	return stdout.Bytes(), nil
}

// lastLines keeps the last n lines of s: kubectl repeats a connection
// error once per API group before its one-line summary.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// namespace is one test's own namespace: a fresh home for a fresh JobSet,
// so no DNS record, EndpointSlice or event of another test is in view.
type namespace struct {
	t    *testing.T
	name string
}

// newNamespace creates a namespace named after prefix with a random
// suffix. When the test ends it dumps what a reader needs if the test
// failed, then deletes every JobSet in the foreground and the namespace.
func newNamespace(t *testing.T, prefix string) *namespace {
	t.Helper()
	requireCluster(t)
	suffix := make([]byte, 3)
	_, _ = rand.Read(suffix)
	n := &namespace{t: t, name: "kt-" + prefix + "-" + hex.EncodeToString(suffix)}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := kubectl(ctx, nil, "create", "namespace", n.name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.close)
	// Pods can only be created once the namespace's default ServiceAccount
	// exists; waiting here keeps that delay out of the timings.
	for ctx.Err() == nil {
		if _, err := env.api.get(ctx, "/api/v1/namespaces/"+n.name+"/serviceaccounts/default"); err == nil {
			break
		}
		time.Sleep(300 * time.Millisecond)
	}
	return n
}

// close dumps the namespace when the test failed and deletes it.
func (n *namespace) close() {
	if n.t.Failed() {
		n.dump()
	}
	if s, err := n.snapshot(); err == nil {
		n.t.Logf("namespace %s: its pods used %.1f CPU-s", n.name, meter.account(n.name, s.pods()).Seconds())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, err := kubectl(ctx, nil, "delete", "-n", n.name, "jobsets.jobset.x-k8s.io", "--all", "--ignore-not-found", "--cascade=foreground", "--wait=true", "--timeout=150s"); err != nil {
		n.t.Errorf("delete the JobSets: %v", err)
	}
	if _, err := kubectl(ctx, nil, "delete", "namespace", n.name, "--ignore-not-found", "--wait=true", "--timeout=150s"); err != nil {
		n.t.Errorf("delete namespace %s: %v", n.name, err)
	}
}

// run runs kubectl in the namespace with a 2-minute bound.
func (n *namespace) run(stdin []byte, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return kubectl(ctx, stdin, append([]string{"-n", n.name}, args...)...)
}

// apply applies rendered YAML in the namespace, unchanged.
func (n *namespace) apply(rendered []byte) {
	n.t.Helper()
	if out, err := n.run(rendered, "apply", "-f", "-"); err != nil {
		n.t.Fatalf("apply: %v\n%s", err, out)
	}
}

// dump logs the namespace's objects, events and the logs of every
// container of every pod, init containers included: what a reader of a
// CI failure needs to know why.
func (n *namespace) dump() {
	t := n.t
	t.Logf("=== namespace %s at failure", n.name)
	if out, err := n.run(nil, "get", "jobsets.jobset.x-k8s.io,jobs,pods,services,endpointslices", "-o", "wide"); err == nil {
		t.Logf("objects:\n%s", out)
	} else {
		t.Logf("objects: %v", err)
	}
	if out, err := n.run(nil, "get", "events", "--sort-by=.metadata.creationTimestamp"); err == nil {
		t.Logf("events:\n%s", out)
	}
	s, err := n.snapshot()
	if err != nil {
		t.Logf("pods: %v", err)
		return
	}
	for _, p := range s.pods() {
		for _, c := range append(p.Spec.InitContainers, p.Spec.Containers...) {
			out, err := n.run(nil, "logs", p.Metadata.Name, "-c", c.Name)
			t.Logf("--- logs %s/%s (%s)%s\n%s", p.Metadata.Name, c.Name, p.Status.Phase, errSuffix(err), out)
		}
	}
}

func errSuffix(err error) string {
	if err != nil {
		return ": " + err.Error()
	}
	return ""
}

// podsCreated counts the Job controller's SuccessfulCreate events per Job:
// every pod it ever created, also one deleted between two polls.
func (n *namespace) podsCreated() map[string]int {
	n.t.Helper()
	out, err := n.run(nil, "get", "events", "--field-selector", "reason=SuccessfulCreate,involvedObject.kind=Job", "-o", "json")
	if err != nil {
		n.t.Errorf("events: %v", err)
		return nil
	}
	var list struct {
		Items []struct {
			InvolvedObject struct {
				Name string `json:"name"`
			} `json:"involvedObject"`
			Message string `json:"message"`
			Count   int    `json:"count"`
		} `json:"items"`
	}
	if err := json.Unmarshal(out, &list); err != nil {
		n.t.Errorf("decode events: %v", err)
		return nil
	}
	m := map[string]int{}
	for _, e := range list.Items {
		if strings.HasPrefix(e.Message, "Created pod: ") {
			m[e.InvolvedObject.Name] += max(e.Count, 1)
		}
	}
	return m
}

// logs returns a container's log.
func (n *namespace) logs(pod, container string) string {
	n.t.Helper()
	out, err := n.run(nil, "logs", pod, "-c", container)
	if err != nil {
		n.t.Errorf("logs: %v", err)
	}
	return string(out)
}

// testKeySeed derives the test JobSets' CURVE keys.
const testKeySeed = "jobset-flux-test-kube-seed-0123456789abcdef"

// render runs the function in standalone mode on YAML documents and
// fails the test unless it renders.
func render(t *testing.T, docs string) []byte {
	t.Helper()
	out, stderr, code := renderRaw(t, docs)
	if code != 0 {
		t.Fatalf("jobset-flux: exit %d\n%s", code, stderr)
	}
	return out
}

// renderRaw runs the function on YAML documents and returns its stdout,
// stderr (errors and warnings, one a line) and exit code.
func renderRaw(t *testing.T, docs string) (out []byte, stderr string, code int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "in.yaml")
	if err := os.WriteFile(path, []byte(docs), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(env.function, path)
	// A seed keeps the random-key warning out of stderr, where the tests
	// look for the function's warnings on the fields they set. It is
	// public: these instances live only in the test cluster.
	cmd.Env = append(os.Environ(), "JOBSET_FLUX_KEY_SEED="+testKeySeed)
	var errBuf bytes.Buffer
	cmd.Stderr = &errBuf
	out, err := cmd.Output()
	if err != nil {
		exitErr, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("jobset-flux: %v", err)
		}
		return out, errBuf.String(), exitErr.ExitCode()
	}
	return out, errBuf.String(), 0
}

// kustomizeBuild renders a kustomization with standalone kustomize and the
// function on PATH, as the README says a user does.
func kustomizeBuild(t *testing.T, dir string) []byte {
	t.Helper()
	return testsupport.KustomizeBuild(t, env.kustomize, env.function, dir)
}
