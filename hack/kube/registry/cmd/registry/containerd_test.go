package main

import (
	"bytes"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jobset-flux/jobset-flux/test/testsupport"
)

// The namespace the tests' containerd works in; its cgroups (ctr run
// makes /sys/fs/cgroup/<controller>/<namespace>) are removed afterwards.
const ctrNamespace = "jobset-flux-registry-test"

// containerd is a private containerd (own root, state, socket and opt
// directory; the CRI plugin off), never the machine's or another
// engineer's.
type containerd struct {
	dir, sock string
	cmd       *exec.Cmd
}

func needContainerd(t *testing.T) {
	t.Helper()
	if os.Getuid() != 0 {
		testsupport.SkipOrFail(t, "containerd needs root")
	}
	for _, tool := range []string{"containerd", "ctr", "runc", "containerd-shim-runc-v2"} {
		if _, err := exec.LookPath(tool); err != nil {
			testsupport.SkipOrFail(t, "%s not found: install Debian's containerd and runc (.ci/apt/kube-images.txt)", tool)
		}
	}
}

func startContainerd(t *testing.T) *containerd {
	t.Helper()
	return startContainerdWith(t, `disabled_plugins = ["io.containerd.grpc.v1.cri"]`)
}

// startContainerdWith starts containerd with extra top-level configuration
// (TOML, after root/state; tables go last).
func startContainerdWith(t *testing.T, extra string) *containerd {
	t.Helper()
	dir, err := os.MkdirTemp("", "jf-ctrd-") // short: the socket path has a length limit
	if err != nil {
		t.Fatal(err)
	}
	c := &containerd{dir: dir, sock: filepath.Join(dir, "c.sock")}
	extra = strings.ReplaceAll(extra, "@DIR@", dir)
	config := fmt.Sprintf(`version = 2
root = %q
state = %q
%s
[grpc]
  address = %q
[plugins."io.containerd.internal.v1.opt"]
  path = %q
`, filepath.Join(dir, "root"), filepath.Join(dir, "state"), extra, c.sock, filepath.Join(dir, "opt"))
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(dir, "containerd.log"))
	if err != nil {
		t.Fatal(err)
	}
	c.cmd = exec.Command("containerd", "--config", filepath.Join(dir, "config.toml"))
	c.cmd.Stdout, c.cmd.Stderr = logf, logf
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.stop(t) })
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if _, err := c.ctr("version"); err == nil {
			return c
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "containerd.log"))
			t.Fatalf("containerd did not answer in 20s:\n%s", log)
		}
	}
}

func (c *containerd) ctr(args ...string) (string, error) {
	if len(args) > 0 && args[0] == "run" {
		// Its I/O FIFOs in our directory, not in the shared /run/containerd/fifo.
		args = append([]string{"run", "--fifo-dir", filepath.Join(c.dir, "fifo")}, args[1:]...)
	}
	cmd := exec.Command("ctr", append([]string{"-a", c.sock, "-n", ctrNamespace}, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("ctr %s: %w\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String(), nil
}

// stop ends containerd and removes what it made: mounts left under its
// directory, the namespace's cgroups and runc state, the directory.
func (c *containerd) stop(t *testing.T) {
	c.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		c.cmd.Process.Kill()
		<-done
	}
	if out, err := exec.Command("findmnt", "-rn", "-o", "TARGET").Output(); err == nil {
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		for i := len(lines) - 1; i >= 0; i-- { // deepest first
			if strings.HasPrefix(lines[i], c.dir+"/") {
				syscall.Unmount(lines[i], syscall.MNT_DETACH)
			}
		}
	}
	// runc's state for the namespace (its default root; the shims' sockets
	// under /run/containerd/s are the shims' own and gone with them).
	cgroups, _ := filepath.Glob("/sys/fs/cgroup/*/" + ctrNamespace)
	for _, dir := range append(cgroups, "/run/containerd/runc/"+ctrNamespace) {
		os.Remove(dir) // rmdir: only an empty cgroup or directory goes
	}
	if err := os.RemoveAll(c.dir); err != nil {
		t.Errorf("remove containerd's directory: %v", err)
	}
}

// serve runs the registry on a free loopback port for the test, its
// request log going to log.
func serve(t *testing.T, layoutDir string, w io.Writer) (port int) {
	t.Helper()
	h, _, err := newRegistry(layoutDir, log.New(w, "", 0))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().(*net.TCPAddr).Port
}

// hostsDir writes containerd's host configuration with the project's
// hosts.sh for the references in refsFile.
func hostsDir(t *testing.T, port int, refsFile string) string {
	t.Helper()
	dir := t.TempDir()
	script := filepath.Join("..", "..", "..", "images", "hosts.sh")
	if out, err := exec.Command("bash", script, dir, fmt.Sprint(port), refsFile).CombinedOutput(); err != nil {
		t.Fatalf("hosts.sh: %v\n%s", err, out)
	}
	return dir
}
