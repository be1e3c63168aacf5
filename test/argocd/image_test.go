package argocd

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/test/testsupport"
)

// TestSidecarImage checks the sidecar image built from
// hack/image/sidecar.json by hack/image/build.sh (make test-argocd-image sets
// SIDECAR_IMAGE and copies its files to SIDECAR_ROOT, which the other tests
// of this package then run): its user, size and entrypoint, that its shell
// has what jobset-flux-cmp runs, and that its binaries are the release's.
func TestSidecarImage(t *testing.T) {
	image := os.Getenv("SIDECAR_IMAGE")
	if image == "" || os.Getenv("SIDECAR_ROOT") == "" {
		testsupport.SkipOrFail(t, "SIDECAR_IMAGE and SIDECAR_ROOT are not set (run `make test-argocd-image`)")
	}
	if _, err := exec.LookPath("docker"); err != nil {
		testsupport.SkipOrFail(t, "no docker CLI: %v", err)
	}
	out, err := exec.Command("docker", "image", "inspect", image).Output()
	if err != nil {
		t.Fatalf("docker image inspect %s: %v\n%s", image, err, stderrOf(err))
	}
	var inspect []struct {
		Size   int64
		Config struct {
			User       string
			Entrypoint []string
			WorkingDir string
			Env        []string
		}
	}
	if err := json.Unmarshal(out, &inspect); err != nil || len(inspect) != 1 {
		t.Fatalf("docker image inspect %s: %v\n%s", image, err, out)
	}
	img := inspect[0]
	// 999 is the repo-server's argocd user, which owns the shared socket
	// directory: anything else cannot create the plugin's socket.
	if img.Config.User != "999:999" {
		t.Errorf("user %q, want 999:999", img.Config.User)
	}
	if want := []string{"/var/run/argocd/argocd-cmp-server"}; strings.Join(img.Config.Entrypoint, " ") != want[0] {
		t.Errorf("entrypoint %q, want %q", img.Config.Entrypoint, want)
	}
	limit, err := strconv.ParseInt(os.Getenv("SIDECAR_MAX_BYTES"), 10, 64)
	if err != nil {
		t.Fatalf("SIDECAR_MAX_BYTES: %v", err)
	}
	t.Logf("%s: %d bytes, user %s", image, img.Size, img.Config.User)
	if img.Size > limit {
		t.Errorf("%s is %d bytes, more than the %d allowed (SIDECAR_MAX_BYTES)", image, img.Size, limit)
	}

	// The runtime image, as the plugin's sidecar runs it: as 999, with the
	// commands jobset-flux-cmp uses on PATH.
	run := exec.Command("docker", "run", "--rm", "--network", "none", "--entrypoint", "/bin/sh", image,
		"-c", "id -u; id -g; for c in sh find grep head kustomize jobset-flux jobset-flux-cmp; do command -v $c || echo missing $c; done")
	got, err := run.Output()
	if err != nil {
		t.Fatalf("docker run %s: %v\n%s", image, err, stderrOf(err))
	}
	lines := strings.Fields(string(got))
	if len(lines) < 2 || lines[0] != "999" || lines[1] != "999" {
		t.Errorf("the image runs as %q, want uid and gid 999", lines)
	}
	if strings.Contains(string(got), "missing") {
		t.Errorf("commands missing from the image's PATH:\n%s", got)
	}

	// The copied files are the image's and the release's.
	root := os.Getenv("SIDECAR_ROOT")
	ver, err := exec.Command(filepath.Join(root, "usr", "local", "bin", "jobset-flux"), "version").CombinedOutput()
	if err != nil {
		t.Fatalf("jobset-flux version: %v\n%s", err, ver)
	}
	if want := os.Getenv("SIDECAR_VERSION"); want != "" && !strings.Contains(string(ver), want) {
		t.Errorf("the image's jobset-flux says %q, want version %s", strings.TrimSpace(string(ver)), want)
	}
	for _, f := range []string{"usr/local/bin/jobset-flux-cmp", "home/argocd/cmp-server/config/plugin.yaml"} {
		inImage, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		src := filepath.Join("..", "..", "deploy", "argocd", filepath.Base(f))
		inRepo, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if string(inImage) != string(inRepo) {
			t.Errorf("%s in the image differs from %s: %s", f, src, testsupport.FirstDifference(string(inImage), string(inRepo)))
		}
	}
	if info, err := os.Stat(filepath.Join(root, "usr", "local", "bin", "jobset-flux-cmp")); err != nil || info.Mode().Perm() != 0o755 {
		t.Errorf("jobset-flux-cmp in the image: %v %v, want mode 0755", info, err)
	}
}
