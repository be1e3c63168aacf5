package testsupport

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// KustomizeBuild renders the kustomization in dir as a user does: with
// the kustomize binary at kustomize, exec plugins enabled, and the
// function's directory first on PATH; env adds to the environment. A
// failed build fails the test with kustomize's stderr.
func KustomizeBuild(t testing.TB, kustomize, function, dir string, env ...string) []byte {
	t.Helper()
	cmd := exec.Command(kustomize, "build", "--enable-alpha-plugins", "--enable-exec", dir)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(function)+string(os.PathListSeparator)+os.Getenv("PATH"))
	cmd.Env = append(cmd.Env, env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kustomize build %s: %v\n%s", dir, err, stderr.String())
	}
	return out
}
