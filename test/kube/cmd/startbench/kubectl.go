package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"
)

// cluster is how the benchmark reaches the test cluster: kubectl and a
// kubeconfig, nothing else (test/kube's module has no client-go).
type cluster struct {
	kubectl, kubeconfig string
}

// run runs kubectl with a bound and returns its stdout; the error carries
// stderr, so a failure says why.
func (c *cluster) run(timeout time.Duration, stdin []byte, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := c.command(ctx, args...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

func (c *cluster) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, c.kubectl, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+c.kubeconfig)
	return cmd
}

// ready fails unless the API server answers /readyz.
func (c *cluster) ready() error {
	if out, err := c.run(30*time.Second, nil, "get", "--raw", "/readyz"); err != nil {
		return fmt.Errorf("the cluster is not ready (make kube-up): %w\n%s", err, out)
	}
	return nil
}

// newNamespace creates a namespace named prefix-<random> and waits for its
// default ServiceAccount: pods cannot be created before it exists, and
// that wait must not be counted in a run.
func (c *cluster) newNamespace(prefix string) (string, error) {
	suffix := make([]byte, 3)
	_, _ = rand.Read(suffix)
	ns := prefix + "-" + hex.EncodeToString(suffix)
	if _, err := c.run(30*time.Second, nil, "create", "namespace", ns); err != nil {
		return "", err
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		_, err := c.run(30*time.Second, nil, "get", "-n", ns, "serviceaccount", "default")
		if err == nil {
			return ns, nil
		}
		if time.Now().After(deadline) {
			return ns, fmt.Errorf("namespace %s: no default ServiceAccount after 60s: %w", ns, err)
		}
	}
}

// deleteNamespace deletes the namespace and waits until it is gone, so
// that the next run does not share the node with this one's teardown.
func (c *cluster) deleteNamespace(ns string) error {
	_, err := c.run(4*time.Minute, nil, "delete", "namespace", ns, "--wait=true", "--timeout=200s")
	return err
}

// staleNamespace matches the namespaces newNamespace makes for runs.
var staleNamespace = regexp.MustCompile(`^sb-x?[bfiomt][0-9]+-[0-9a-f]{6}$`)

// cleanStale deletes the namespaces of an earlier benchmark that was
// killed before it could delete them, so they do not load this one's node.
func (c *cluster) cleanStale() error {
	out, err := c.run(30*time.Second, nil, "get", "namespaces", "-o", "name")
	if err != nil {
		return err
	}
	for _, l := range strings.Fields(string(out)) {
		if ns := strings.TrimPrefix(l, "namespace/"); staleNamespace.MatchString(ns) {
			fmt.Fprintf(os.Stderr, "startbench: deleting %s, left by an earlier run\n", ns)
			if err := c.deleteNamespace(ns); err != nil {
				return err
			}
		}
	}
	return nil
}

// event is one watch event kubectl printed, stamped when it was read.
type event struct {
	at     time.Time
	kind   string // ADDED, MODIFIED, DELETED
	object json.RawMessage
}

// watch streams `kubectl get RESOURCE -w --output-watch-events -o json`
// in a namespace. kubectl lists what exists first and then watches from
// that resource version, so nothing is lost when the watch starts late;
// each event is stamped on arrival, which is the apiserver's own time of
// the change plus a few milliseconds, with no polling interval.
type watch struct {
	cmd    *exec.Cmd
	cancel context.CancelFunc
	events chan event
	stderr bytes.Buffer
	done   chan error
}

func (c *cluster) watch(ns, resource string) (*watch, error) {
	ctx, cancel := context.WithCancel(context.Background())
	w := &watch{cancel: cancel, events: make(chan event, 1024), done: make(chan error, 1)}
	w.cmd = c.command(ctx, "get", "-n", ns, resource, "--watch", "--output-watch-events", "-o", "json")
	w.cmd.Stderr = &w.stderr
	out, err := w.cmd.StdoutPipe()
	if err != nil {
		cancel()
		return nil, fmt.Errorf("watch %s: %w", resource, err)
	}
	if err := w.cmd.Start(); err != nil {
		cancel()
		return nil, fmt.Errorf("watch %s: %w", resource, err)
	}
	go w.read(out)
	return w, nil
}

// read decodes the stream of JSON events until kubectl ends.
func (w *watch) read(r io.Reader) {
	defer close(w.events)
	dec := json.NewDecoder(bufio.NewReader(r))
	for {
		var e struct {
			Type   string          `json:"type"`
			Object json.RawMessage `json:"object"`
		}
		if err := dec.Decode(&e); err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			w.done <- err
			return
		}
		w.events <- event{at: time.Now(), kind: e.Type, object: e.Object}
	}
}

// stop ends kubectl; the events channel closes once it has exited.
func (w *watch) stop() {
	w.cancel()
	_ = w.cmd.Wait()
}
