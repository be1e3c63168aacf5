// Package testenv is the main module's rule for tests that need something
// from the machine (a tool, root): under CI=true, which .ci/run sets, a
// missing need is a failure, because a skipped check passes silently;
// elsewhere the test is skipped with the reason. The integration modules
// under test/ have the same rule in test/testsupport, which the main
// module cannot require: its go.mod would need a replace directive, and
// those break `go install` of the function at a version.
package testenv

import (
	"bufio"
	"bytes"
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

// FirstDifference describes where got and want first differ, by line,
// for a test's failure message.
func FirstDifference(got, want []byte) string {
	g := bufio.NewScanner(bytes.NewReader(got))
	w := bufio.NewScanner(bytes.NewReader(want))
	g.Buffer(nil, 1<<20)
	w.Buffer(nil, 1<<20)
	for line := 1; ; line++ {
		gok, wok := g.Scan(), w.Scan()
		switch {
		case !gok && !wok:
			if !bytes.Equal(got, want) {
				return "the texts differ only in line endings or a final newline"
			}
			return "no difference"
		case !gok:
			return fmt.Sprintf("line %d: output ends; want %q", line, w.Text())
		case !wok:
			return fmt.Sprintf("line %d: got %q past the end of the expected text", line, g.Text())
		case g.Text() != w.Text():
			return fmt.Sprintf("line %d:\n  got:  %q\n  want: %q", line, g.Text(), w.Text())
		}
	}
}
