package image

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"sort"
	"strings"
	"testing"
	"time"
)

// maxImageSize is the size budget of the image (uncompressed, as the
// engine reports it).
const maxImageSize = 25_000_000

const entrypoint = "/usr/local/bin/jobset-flux"

type imageInspect struct {
	Architecture string
	Os           string
	Size         int64
	Config       struct {
		User       string
		Entrypoint []string
		Cmd        []string
		Env        []string
		Labels     map[string]string
	}
}

func inspectImage(t *testing.T, ref string) imageInspect {
	t.Helper()
	out := run(t, "", nil, "docker", "image", "inspect", ref)
	var list []imageInspect
	if err := json.Unmarshal(out, &list); err != nil || len(list) != 1 {
		t.Fatalf("docker image inspect %s: %v (%d images)", ref, err, len(list))
	}
	return list[0]
}

// TestImageConfig: entrypoint, user, labels and size.
func TestImageConfig(t *testing.T) {
	c := needImage(t)
	img := inspectImage(t, c.image)

	if img.Os != "linux" {
		t.Errorf("os %q, want linux", img.Os)
	}
	if u := img.Config.User; u != "65534" && u != "65534:65534" {
		t.Errorf("USER %q, want 65534 (nobody)", u)
	}
	if got := strings.Join(img.Config.Entrypoint, " "); got != entrypoint {
		t.Errorf("ENTRYPOINT %q, want [%q]", img.Config.Entrypoint, entrypoint)
	}
	if len(img.Config.Cmd) != 0 {
		t.Errorf("CMD %q, want none: kpt and kustomize run the entrypoint without arguments", img.Config.Cmd)
	}
	if img.Size <= 0 || img.Size >= maxImageSize {
		t.Errorf("image size %d bytes, want under %d", img.Size, maxImageSize)
	}
	t.Logf("%s: %d bytes (%.1f MB), user %s", c.image, img.Size, float64(img.Size)/1e6, img.Config.User)

	want := map[string]string{
		"org.opencontainers.image.source":   "https://github.com/jobset-flux/jobset-flux",
		"org.opencontainers.image.version":  c.version,
		"org.opencontainers.image.revision": c.commit,
		"org.opencontainers.image.licenses": "Apache-2.0",
		"org.opencontainers.image.title":    "jobset-flux",
	}
	for k, v := range want {
		if got := img.Config.Labels[k]; got != v {
			t.Errorf("label %s = %q, want %q", k, got, v)
		}
	}
	if img.Config.Labels["org.opencontainers.image.description"] == "" {
		t.Error("no org.opencontainers.image.description label")
	}
}

// TestImageVersion: `docker run IMAGE version` reports the Makefile's
// VERSION and COMMIT, locked down the way a cautious user would run it.
func TestImageVersion(t *testing.T) {
	c := needImage(t)
	out := string(run(t, "", nil, "docker", "run", "--rm", "--network", "none", "--read-only",
		"--cap-drop", "ALL", "--security-opt", "no-new-privileges", c.image, "version"))
	first, _, _ := strings.Cut(out, "\n")
	if want := fmt.Sprintf("jobset-flux %s (commit %s)", c.version, c.commit); first != want {
		t.Errorf("version prints %q, want %q\nfull output:\n%s", first, want, out)
	}
	for _, dep := range []string{"go: go1.", "github.com/kptdev/krm-functions-sdk/go/fn: v", "sigs.k8s.io/kustomize/kyaml: v"} {
		if !strings.Contains(out, dep) {
			t.Errorf("version output lacks %q:\n%s", dep, out)
		}
	}
}

// TestImageRunsAsNobodyWithoutNetwork looks at a running container from the
// host: its process runs as uid/gid 65534 both with the image's own USER
// and with kustomize's `--user nobody` (resolved through the image's
// /etc/passwd), and with --network none it sees only a loopback interface.
func TestImageRunsAsNobodyWithoutNetwork(t *testing.T) {
	c := needImage(t)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"image-user", nil},
		{"kustomize-user", []string{"--user", "nobody", "--security-opt=no-new-privileges"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// With stdin attached and open the function waits for its
			// ResourceList, so the container stays up to be looked at.
			args := append([]string{"run", "-d", "-i", "--network", "none"}, tc.args...)
			id := strings.TrimSpace(string(run(t, "", nil, "docker", append(args, c.image)...)))
			t.Cleanup(func() {
				if out, err := exec.Command("docker", "rm", "-f", id).CombinedOutput(); err != nil {
					t.Errorf("docker rm -f %s: %v\n%s", id, err, out)
				}
			})
			var pid, mode string
			deadline := time.Now().Add(30 * time.Second)
			for {
				out := strings.Fields(string(run(t, "", nil, "docker", "inspect", "--format",
					"{{.State.Status}} {{.State.Pid}} {{.HostConfig.NetworkMode}}", id)))
				if len(out) == 3 && out[0] == "running" && out[1] != "0" {
					pid, mode = out[1], out[2]
					break
				}
				if time.Now().After(deadline) || (len(out) > 0 && out[0] == "exited") {
					logs, _ := exec.Command("docker", "logs", id).CombinedOutput()
					t.Fatalf("container %s is not running (%v); logs:\n%s", id, out, logs)
				}
				time.Sleep(100 * time.Millisecond)
			}
			if mode != "none" {
				t.Errorf("network mode %q, want none", mode)
			}
			status, err := os.ReadFile("/proc/" + pid + "/status")
			if err != nil {
				t.Fatalf("reading the container process's status: %v", err)
			}
			for _, line := range strings.Split(string(status), "\n") {
				if f := strings.Fields(line); len(f) == 5 && (f[0] == "Uid:" || f[0] == "Gid:") {
					for _, id := range f[1:] {
						if id != "65534" {
							t.Errorf("process %s %s, want 65534 (nobody) throughout", f[0], strings.Join(f[1:], " "))
							break
						}
					}
				}
			}
			netdev, err := os.ReadFile("/proc/" + pid + "/net/dev")
			if err != nil {
				t.Fatalf("reading the container's interfaces: %v", err)
			}
			var ifaces []string
			for _, line := range strings.Split(string(netdev), "\n") {
				if name, _, ok := strings.Cut(line, ":"); ok {
					ifaces = append(ifaces, strings.TrimSpace(name))
				}
			}
			if strings.Join(ifaces, ",") != "lo" {
				t.Errorf("interfaces %v, want only lo (no network)", ifaces)
			}
		})
	}
}

// TestImageRunsResourceList: a KRM round trip straight through docker run,
// read-only root, all capabilities dropped, as nobody, no network.
func TestImageRunsResourceList(t *testing.T) {
	c := needImage(t)
	in := []byte(`apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
  - apiVersion: v1
    kind: ConfigMap
    metadata:
      name: untouched
    data:
      a: b
`)
	out, err := output(t.Context(), "", nil, in, "docker", "run", "--rm", "-i", "--network", "none",
		"--read-only", "--cap-drop", "ALL", "--user", "nobody", "--security-opt", "no-new-privileges", c.image)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kind: ResourceList", "name: untouched"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// engineFiles are what the engine adds to every container's filesystem
// (docker export shows them); they are not part of the image.
var engineFiles = map[string]bool{
	".dockerenv": true, "dev": true, "dev/console": true, "dev/pts": true, "dev/shm": true,
	"proc": true, "sys": true,
	"etc/hostname": true, "etc/hosts": true, "etc/resolv.conf": true, "etc/mtab": true,
}

// imageFiles is everything in the image: hack/image/build.sh's static base
// and the binary.
var imageFiles = []string{
	"etc",
	"etc/group",
	"etc/passwd",
	"etc/ssl",
	"etc/ssl/certs",
	"etc/ssl/certs/ca-certificates.crt",
	"tmp",
	"usr",
	"usr/local",
	"usr/local/bin",
	"usr/local/bin/jobset-flux",
}

type fileEntry struct {
	hdr  *tar.Header
	data []byte // for small regular files
}

// exportFiles lists a fresh container's filesystem (docker create + docker
// export), without the engine's own entries.
func exportFiles(t *testing.T, ref string) map[string]fileEntry {
	t.Helper()
	// The command is never run; it lets an image without one (a bare base)
	// be created.
	id := strings.TrimSpace(string(run(t, "", nil, "docker", "create", ref, "/never-run")))
	defer func() {
		if out, err := exec.Command("docker", "rm", "-f", id).CombinedOutput(); err != nil {
			t.Errorf("docker rm -f %s: %v\n%s", id, err, out)
		}
	}()
	ctx, cancel := context.WithTimeout(t.Context(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "docker", "export", id)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	files := map[string]fileEntry{}
	tr := tar.NewReader(stdout)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("docker export %s: reading tar: %v", ref, err)
		}
		name := strings.TrimSuffix(path.Clean(hdr.Name), "/")
		if engineFiles[name] || strings.HasPrefix(name, "dev/") {
			continue
		}
		e := fileEntry{hdr: hdr}
		if hdr.Typeflag == tar.TypeReg && hdr.Size < 1<<20 {
			e.data, err = io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
		}
		files[name] = e
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("docker export %s: %v\n%s", ref, err, stderr.String())
	}
	return files
}

func sortedNames(m map[string]fileEntry) []string {
	var names []string
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// TestImageFiles: the image holds the binary on top of its static base and
// nothing else: an exact, small list.
func TestImageFiles(t *testing.T) {
	c := needImage(t)
	files := exportFiles(t, c.image)
	names := sortedNames(files)

	if got, want := strings.Join(names, "\n"), strings.Join(imageFiles, "\n"); got != want {
		t.Errorf("file list (docker export, engine entries removed):\n%s\nwant exactly:\n%s", got, want)
	}

	bin, ok := files["usr/local/bin/jobset-flux"]
	switch {
	case !ok:
		t.Error("no usr/local/bin/jobset-flux")
	case bin.hdr.Typeflag != tar.TypeReg || bin.hdr.Mode&0o777 != 0o755 || bin.hdr.Uid != 0 || bin.hdr.Gid != 0:
		t.Errorf("usr/local/bin/jobset-flux: type %c mode %o owner %d:%d, want a root-owned 0755 file",
			bin.hdr.Typeflag, bin.hdr.Mode, bin.hdr.Uid, bin.hdr.Gid)
	}
	if tmp, ok := files["tmp"]; !ok || tmp.hdr.Mode&0o7777 != 0o1777 {
		t.Errorf("tmp: want a 1777 directory, got %+v", tmp.hdr)
	}
	for name, line := range map[string]string{
		"etc/passwd": "nobody:x:65534:65534:",
		"etc/group":  "nobody:x:65534:",
	} {
		if !strings.Contains("\n"+string(files[name].data), "\n"+line) {
			t.Errorf("%s has no line starting %q:\n%s", name, line, files[name].data)
		}
	}
	if crt := files["etc/ssl/certs/ca-certificates.crt"]; !bytes.Contains(crt.data, []byte("BEGIN CERTIFICATE")) {
		t.Error("etc/ssl/certs/ca-certificates.crt holds no certificate")
	}
	for _, sh := range []string{"bin/sh", "usr/bin/sh", "bin/busybox", "bin/bash"} {
		if _, ok := files[sh]; ok {
			t.Errorf("%s: the image needs no shell and must not carry one", sh)
		}
	}
}
