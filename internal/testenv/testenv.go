// Package testenv is the main module's rule for tests that need something
// from the machine (a tool, root): under CI=true, which .ci/run sets, a
// missing need is a failure, because a skipped check passes silently;
// elsewhere the test is skipped with the reason. The integration modules
// under test/ have the same rule in test/testsupport, which the main
// module cannot require: its go.mod would need a replace directive, and
// those break `go install` of the function at a version.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// CI reports whether the tests run in CI (CI=true).
func CI() bool { return os.Getenv("CI") == "true" }

// SkipOrFail stops the test because something it needs is missing: a
// failure under CI=true, a skip elsewhere.
func SkipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if CI() {
		t.Fatalf("%s (CI=true: a missing tool is a failure)", msg)
	}
	t.Skipf("%s (skipped; CI=true makes this a failure)", msg)
}

// Tool returns the path of the named program on PATH, or stops the test
// by SkipOrFail.
func Tool(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		SkipOrFail(t, "%s is not installed: %v", name, err)
	}
	return path
}
