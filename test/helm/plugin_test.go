package helm

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The Helm 4 plugin installs, is listed as a postrenderer/v1 plugin, and
// carries the release's version (the Makefile's VERSION), so that
// `helm plugin list` says which jobset-flux release it came with.
func TestPluginMetadata(t *testing.T) {
	h := newHelm(t, 4)
	list := h.must("plugin", "list")
	cmd := exec.Command("make", "-s", "--no-print-directory", "-C", env.repo, "print-image-vars")
	cmd.Env = withoutMake(os.Environ())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("make print-image-vars: %v\n%s", err, stderr.String())
	}
	version := regexp.MustCompile(`(?m)^VERSION=(.+)$`).FindStringSubmatch(string(out))
	if version == nil {
		t.Fatalf("make print-image-vars printed no VERSION:\n%s", out)
	}
	row := regexp.MustCompile(`(?m)^jobset-flux\s+(\S+)\s+postrenderer/v1\s`).FindStringSubmatch(list)
	if row == nil {
		t.Fatalf("helm plugin list does not list jobset-flux as a postrenderer/v1 plugin:\n%s", list)
	}
	if row[1] != version[1] {
		t.Errorf("plugin.yaml version %s, the Makefile's VERSION %s: change deploy/helm/jobset-flux/plugin.yaml", row[1], version[1])
	}
	script := filepath.Join(env.repo, "deploy/helm/jobset-flux/post-render.sh")
	if fi, err := os.Stat(script); err != nil || fi.Mode()&0o111 == 0 {
		t.Errorf("%s is not executable (%v): Helm 4 runs it", script, err)
	}
}

// withoutMake drops make's own variables and the release's, so that make
// prints the Makefile's defaults.
func withoutMake(environ []string) []string {
	var out []string
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "VERSION", "IMAGE", "IMAGE_REPO", "COMMIT":
			continue
		}
		out = append(out, kv)
	}
	return out
}
