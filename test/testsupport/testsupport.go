// Package testsupport holds what every integration test module needs: the
// CI rule for missing tools, the repository root, a tree copy and a
// first-difference message.
package testsupport

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// CI reports whether the tests run in CI (CI=true, set by .ci/run), where
// nothing a test needs may be missing.
func CI() bool { return os.Getenv("CI") == "true" }

// SkipOrFail stops the test because something it needs is missing: a
// failure under CI=true (CI must never skip), a skip elsewhere.
func SkipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if CI() {
		t.Fatalf("%s (CI=true: a missing tool is a failure)", msg)
	}
	t.Skipf("%s (skipped; CI=true makes this a failure)", msg)
}

// MainModule is the first line of the repository root's go.mod.
const MainModule = "module github.com/jobset-flux/jobset-flux"

// RepoRoot is the nearest directory at or above the working directory whose
// go.mod declares the main module.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil {
			first, _, _ := strings.Cut(string(data), "\n")
			if strings.TrimSpace(first) == MainModule {
				return dir, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod declaring " + MainModule + " above the working directory")
		}
		dir = parent
	}
}

// Executable returns an error unless path is a regular executable file.
func Executable(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() || info.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", path)
	}
	return nil
}

// CopyTree copies the directories, regular files (with their permission
// bits) and symbolic links under src into dst, keeping those keep accepts
// (by slash-separated path relative to src; nil keeps all). A directory
// keep refuses is left out whole.
func CopyTree(t testing.TB, src, dst string, keep func(rel string) bool) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if rel != "." && keep != nil && !keep(filepath.ToSlash(rel)) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case info.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(target, data, info.Mode().Perm())
		}
		return fmt.Errorf("%s: not a directory, regular file or symbolic link", p)
	})
	if err != nil {
		t.Fatalf("copy %s to %s: %v", src, dst, err)
	}
}

// FirstDifference describes the first line where got and want differ.
func FirstDifference(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		switch {
		case i >= len(g):
			return fmt.Sprintf("line %d: got ends; want %q", i+1, w[i])
		case i >= len(w):
			return fmt.Sprintf("line %d: got %q past the end of want", i+1, g[i])
		case g[i] != w[i]:
			return fmt.Sprintf("line %d:\n  got:  %q\n  want: %q", i+1, g[i], w[i])
		}
	}
	if got != want {
		return "the texts differ only in line endings"
	}
	return "no difference"
}

// WithoutEntrypointLines is a container log without the entrypoint's own
// "jobset-flux: " lines: the entrypoint watches its broker while the job
// runs, so its line saying the instance has formed can fall between two
// lines of the job's output.
func WithoutEntrypointLines(log string) string {
	return without(log, func(line string) bool { return strings.HasPrefix(line, "jobset-flux: ") })
}

// brokerLine matches a broker's own log line at a log-stderr-level the
// user raised: "<6>broker.info[0]: ...".
var brokerLine = regexp.MustCompile(`^<[0-7]>`)

// WithoutBrokerLines is a container log without the brokers' own log
// lines: another process writes them to the same stream, so one can fall
// between two lines of the job's output.
func WithoutBrokerLines(log string) string {
	return without(log, brokerLine.MatchString)
}

// without is log with the lines drop matches taken out.
func without(log string, drop func(line string) bool) string {
	var b strings.Builder
	for line := range strings.Lines(log) {
		if !drop(line) {
			b.WriteString(line)
		}
	}
	return b.String()
}
