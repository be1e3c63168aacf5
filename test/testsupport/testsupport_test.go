package testsupport

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFirstDifference(t *testing.T) {
	for _, c := range []struct{ got, want, has string }{
		{"a\nb\n", "a\nc\n", "line 2:"},
		{"a", "a\nb", "line 2: got ends"},
		{"a\nb", "a", "past the end"},
		{"a\r\n", "a\n", "line 1:"},
		{"a", "a", "no difference"},
	} {
		if d := FirstDifference(c.got, c.want); !strings.Contains(d, c.has) {
			t.Errorf("FirstDifference(%q, %q) = %q, want it to contain %q", c.got, c.want, d, c.has)
		}
	}
}

func TestRepoRoot(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "test", "testsupport", "go.mod")); err != nil {
		t.Errorf("RepoRoot() = %s, which has no test/testsupport/go.mod", root)
	}
}

func TestCopyTree(t *testing.T) {
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "out")
	for p, mode := range map[string]os.FileMode{"a/x.sh": 0o755, "a/y": 0o644, "skip/z": 0o644} {
		if err := os.MkdirAll(filepath.Join(src, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, p), []byte(p), mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("x.sh", filepath.Join(src, "a", "l")); err != nil {
		t.Fatal(err)
	}
	CopyTree(t, src, dst, func(rel string) bool { return rel != "skip" })
	if info, err := os.Stat(filepath.Join(dst, "a", "x.sh")); err != nil || info.Mode().Perm() != 0o755 {
		t.Errorf("a/x.sh: %v %v, want mode 0755", info, err)
	}
	if link, err := os.Readlink(filepath.Join(dst, "a", "l")); err != nil || link != "x.sh" {
		t.Errorf("a/l: %q %v, want a link to x.sh", link, err)
	}
	if _, err := os.Stat(filepath.Join(dst, "skip")); !os.IsNotExist(err) {
		t.Errorf("skip/ was copied: %v", err)
	}
}

// TestWithoutEntrypointLines: the broker-tuning log of a warm make test,
// where the entrypoint's "joined" line fell inside the job's output.
func TestWithoutEntrypointLines(t *testing.T) {
	log := "jobset-flux: starting: flux start\nschedulable nodes: 3\njobset-flux: joined the instance: every rank is up (state run)\ntuned-workers-0-0\ntuned-workers-0-1\n<6>broker.info[0]: rc2.0: bash -c x\n"
	want := "schedulable nodes: 3\ntuned-workers-0-0\ntuned-workers-0-1\n<6>broker.info[0]: rc2.0: bash -c x\n"
	if got := WithoutEntrypointLines(log); got != want {
		t.Errorf("WithoutEntrypointLines = %q, want %q", got, want)
	}
}

// TestWithoutBrokerLines: the broker-tuning log of a CI run, where a
// broker's info line fell inside the job's output.
func TestWithoutBrokerLines(t *testing.T) {
	log := "schedulable nodes: 3\n<6>broker.info[0]: rc2.0: bash -c x\ntuned-workers-0-0\n<6>broker.info[0]:  Exited (rc=0) 15.9s\ntuned-workers-0-1\n<not a level> kept\n"
	want := "schedulable nodes: 3\ntuned-workers-0-0\ntuned-workers-0-1\n<not a level> kept\n"
	if got := WithoutBrokerLines(log); got != want {
		t.Errorf("WithoutBrokerLines = %q, want %q", got, want)
	}
}
