package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/jobset-flux/jobset-flux/test/testsupport"
)

// busyboxLayout is a layout of two small images made of the host's static
// busybox, each with a file saying which it is; it returns the layout's
// directory and a refs file.
func busyboxLayout(t *testing.T) (string, string) {
	t.Helper()
	busybox, err := os.ReadFile("/bin/busybox")
	if err != nil {
		testsupport.SkipOrFail(t, "no /bin/busybox: install Debian's busybox-static (%v)", err)
	}
	refs := []string{"docker.io/library/busybox:1.36", "ghcr.io/converged-computing/metric-lammps:latest"}
	images := map[string]v1.Image{}
	for _, ref := range refs {
		layer, err := tarLayer(map[string]fileSpec{"bin/busybox": {0o755, busybox}, "which": {0o644, []byte(ref + "\n")}})
		if err != nil {
			t.Fatal(err)
		}
		images[ref] = imageOf(t, v1.Config{Env: []string{"PATH=/bin"}, Cmd: []string{"busybox", "sh"}}, layer)
	}
	dir := writeLayout(t, images)
	refsFile := filepath.Join(t.TempDir(), "refs.txt")
	os.WriteFile(refsFile, []byte(strings.Join(refs, "\n")+"\n"), 0o644)
	return dir, refsFile
}

// TestContainerdPull: a real containerd pulls images under their real
// names through hosts.toml files written by hosts.sh (docker.io and
// ghcr.io both sent to the registry), unpacks them, runs a container from
// each, and also pulls by the registry's own address (--plain-http).
func TestContainerdPull(t *testing.T) {
	needContainerd(t)
	layout, refsFile := busyboxLayout(t)
	log := &syncBuffer{}
	port := serve(t, layout, log)
	hosts := hostsDir(t, port, refsFile)
	c := startContainerd(t)
	for i, ref := range []string{"docker.io/library/busybox:1.36", "ghcr.io/converged-computing/metric-lammps:latest"} {
		if out, err := c.ctr("images", "pull", "--hosts-dir", hosts, ref); err != nil {
			t.Fatalf("pull %s: %v\n%s", ref, err, out)
		}
		out, err := c.ctr("run", "--rm", ref, fmt.Sprintf("t%d", i), "busybox", "cat", "/which")
		// containerd 2's ctr warns about cgroup v1 before the output.
		if err != nil || !strings.HasSuffix("\n"+out, "\n"+ref+"\n") {
			t.Errorf("run %s: %q (%v), want its own /which", ref, out, err)
		}
	}
	direct := fmt.Sprintf("127.0.0.1:%d/docker.io/library/busybox:1.36", port)
	if out, err := c.ctr("images", "pull", "--plain-http", direct); err != nil {
		t.Errorf("pull %s: %v\n%s", direct, err, out)
	}
	// hosts.toml sent each reference to its host's prefix.
	for _, want := range []string{"HEAD /v2/docker.io/library/busybox/manifests/1.36?ns=docker.io\n",
		"HEAD /v2/ghcr.io/converged-computing/metric-lammps/manifests/latest?ns=ghcr.io\n"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("registry log lacks %q:\n%s", want, log.String())
		}
	}
	// A reference the registry lacks fails here; it is not fetched elsewhere.
	if out, err := c.ctr("images", "pull", "--hosts-dir", hosts, "docker.io/library/busybox:9"); err == nil || !strings.Contains(out, "not found") {
		t.Errorf("pull of a missing tag: %v\n%s\nwant not found", err, out)
	}
}

// TestContainerdPullImages pulls every reference of a built IMAGES
// directory through hosts.toml, mounts each unpacked image to check a file
// its role needs, and runs the Flux of the view images in a container: the
// base carries every library the view needs. IMAGES is JOBSET_FLUX_IMAGES
// (check.sh sets it); without it the test builds the images under CI=true
// (cached: seconds once built) and is skipped elsewhere.
func TestContainerdPullImages(t *testing.T) {
	needContainerd(t)
	images := os.Getenv("JOBSET_FLUX_IMAGES")
	if images == "" {
		if !testsupport.CI() {
			t.Skip("JOBSET_FLUX_IMAGES is not set (hack/kube/images/check.sh sets it; CI=true builds the images)")
		}
		images = buildImages(t)
	}
	refsFile := filepath.Join(images, "refs.txt")
	data, err := os.ReadFile(refsFile)
	if err != nil {
		t.Fatal(err)
	}
	port := serve(t, filepath.Join(images, "oci"), &syncBuffer{})
	hosts := hostsDir(t, port, refsFile)
	c := startContainerd(t)
	for _, ref := range strings.Fields(string(data)) {
		start := time.Now()
		if out, err := c.ctr("images", "pull", "--hosts-dir", hosts, ref); err != nil {
			t.Errorf("pull %s: %v\n%s", ref, err, out)
			continue
		}
		t.Logf("%s: pulled and unpacked in %.1fs", ref, time.Since(start).Seconds())
		checkMounted(t, c, ref)
	}
	for _, run := range []struct {
		ref  string
		argv []string
		want string
	}{
		{"ghcr.io/converged-computing/flux-view-ubuntu:tag-jammy", []string{"/opt/view/bin/flux", "version"}, "commands:"},
		{"jobset-flux.test/flux-view-core-only:1", []string{"/opt/view/bin/flux", "version"}, "commands:"},
		// A one-broker instance running a job: the broker, its modules,
		// the Python commands and the job shell all load in the image.
		{"ghcr.io/flux-framework/flux-sched:noble", []string{"flux", "start", "flux", "run", "-n1", "echo", "flux-job-ran"}, "flux-job-ran\n"},
		{"nvcr.io/nvidia/pytorch:24.08-py3", []string{"python3", "-c", "import yaml, jsonschema, ply, _cffi_backend; print('modules-ok')"}, "modules-ok\n"},
		// The examples' stand-ins, in the image's working directory.
		{"ghcr.io/converged-computing/metric-lammps:latest", []string{"env", "FLUX_TASK_RANK=0", "FLUX_JOB_SIZE=1", "lmp", "-in", "in.reaxc.hns"}, "lmp task 0 of 1 on "},
		{"nvcr.io/nvidia/pytorch:24.08-py3", []string{"env", "FLUX_TASK_RANK=0", "python3", "train.py", "--data", "a b"}, `None ["--data", "a b"]`},
		{"docker.io/library/busybox:1.36", []string{"sh", "-c", "tail -n1 /etc/passwd && echo loading"}, "nobody:x:65534:65534:nobody:/home:/bin/false\nloading\n"},
		{"docker.io/library/ubuntu:24.04", []string{"id", "ubuntu"}, "uid=1000(ubuntu) gid=1000(ubuntu) groups=1000(ubuntu)\n"},
	} {
		out, err := c.ctr(append([]string{"run", "--rm", run.ref, "run-check"}, run.argv...)...)
		// Under load ctr once returned no output at all, exit 0, for a
		// task that prints on every path: its output copy lost the race
		// with the task's exit. One more run tells that from an image
		// that prints nothing.
		for i := 0; i < 2 && err == nil && out == ""; i++ {
			t.Logf("%s: %s: no output, exit 0: running it again", run.ref, strings.Join(run.argv, " "))
			out, err = c.ctr(append([]string{"run", "--rm", run.ref, "run-check"}, run.argv...)...)
		}
		if err != nil || !strings.Contains(out, run.want) {
			t.Errorf("%s: %s: %v\n%s\nwant %q in the output", run.ref, strings.Join(run.argv, " "), err, out, run.want)
		}
	}
	checkPause(t, c)
}

// checkPause runs the sandbox image as PID 1 of its container: it stays up
// until SIGTERM, then exits 0.
func checkPause(t *testing.T, c *containerd) {
	t.Helper()
	if out, err := c.ctr("run", "-d", "jobset-flux.test/pause:1", "pause-check"); err != nil {
		t.Errorf("run pause: %v\n%s", err, out)
		return
	}
	defer c.ctr("container", "delete", "pause-check")
	time.Sleep(time.Second)
	if out, _ := c.ctr("task", "ls"); !strings.Contains(out, "RUNNING") {
		t.Errorf("pause is not running a second after start:\n%s", out)
	}
	if out, err := c.ctr("task", "kill", "--signal", "SIGTERM", "pause-check"); err != nil {
		t.Errorf("kill pause: %v\n%s", err, out)
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if out, _ := c.ctr("task", "ls"); strings.Contains(out, "STOPPED") {
			break
		}
	}
	// ctr task delete exits 0 either way; a task's non-zero exit is a
	// warning in its output.
	if out, err := c.ctr("task", "delete", "pause-check"); err != nil || strings.Contains(out, "non-zero exit code") {
		t.Errorf("pause after SIGTERM: %v\n%s\nwant exit 0", err, out)
	}
}

// checkMounted mounts an unpacked image and checks the file its kind of
// image must have.
func checkMounted(t *testing.T, c *containerd, ref string) {
	t.Helper()
	want := "bin/bash"
	switch {
	case strings.Contains(ref, "flux-view") || strings.Contains(ref, "flux-sched"):
		want = "opt/view/bin/flux"
	case strings.Contains(ref, "busybox"):
		want = "bin/sh"
	case strings.Contains(ref, "pause"):
		want = "pause"
	case strings.Contains(ref, "metric-lammps"):
		want = "usr/local/bin/lmp"
	case strings.Contains(ref, "pytorch"):
		want = "workspace/train.py"
	}
	target := t.TempDir()
	if out, err := c.ctr("images", "mount", ref, target); err != nil {
		t.Errorf("mount %s: %v\n%s", ref, err, out)
		return
	}
	defer c.ctr("images", "unmount", target)
	if _, err := os.Lstat(filepath.Join(target, want)); err != nil {
		t.Errorf("%s: no /%s: %v", ref, want, err)
	}
}

// buildImages runs hack/kube/images/build.sh and returns its IMAGES.
func buildImages(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("bash", filepath.Join("..", "..", "..", "images", "build.sh"))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hack/kube/images/build.sh: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}
