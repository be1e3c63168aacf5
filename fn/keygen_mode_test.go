package main

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/curve"
)

// Issue 19, class 9: keygen -o over an existing file leaves it 0600 (the
// old file's mode is not kept), and --namespace is a DNS-1123 label as
// the API server wants it.
func TestKeygenOverwriteMode(t *testing.T) {
	dir := t.TempDir()
	for _, mode := range []os.FileMode{0o644, 0o666, 0o755, 0o600, 0o400} {
		path := filepath.Join(dir, "cert-"+mode.String())
		if err := os.WriteFile(path, []byte("old contents\n"), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil { // umask-free
			t.Fatal(err)
		}
		var out, errOut bytes.Buffer
		if code := run([]string{"keygen", "-o", path}, nil, &out, &errOut); code != exitOK {
			t.Fatalf("over a %v file: exit %d: %s", mode, code, errOut.String())
		}
		info, err := os.Stat(path)
		if err != nil || info.Mode().Perm() != 0o600 {
			t.Errorf("over a %v file: mode %v, %v; want 0600", mode, info.Mode().Perm(), err)
		}
		data, _ := os.ReadFile(path)
		if _, _, err := curve.ParseCertificate(data); err != nil {
			t.Errorf("over a %v file: the file is not the new certificate: %v\n%s", mode, err, data)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 5 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

// TestKeygenRefusesNonRegular: -o replaces only a regular file. A
// symlink (not followed: its target keeps its bytes), a directory, a
// FIFO, a socket and a character device are refused with exit 3, left as
// they were, and no key is written anywhere.
func TestKeygenRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "shared")
	if err := os.WriteFile(target, []byte("not a key\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	paths := map[string]string{"a symbolic link": filepath.Join(dir, "link"), "a directory": filepath.Join(dir, "dir"),
		"a FIFO": filepath.Join(dir, "fifo"), "a socket": filepath.Join(dir, "sock"), "a character device": filepath.Join(dir, "null")}
	if err := os.Symlink(target, paths["a symbolic link"]); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(paths["a directory"], 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(paths["a FIFO"], 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", paths["a socket"])
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// A device node of /dev/null's numbers in the test's own directory
	// (only root may make one); otherwise /dev/null itself, which a
	// non-root user could not replace anyway.
	if err := syscall.Mknod(paths["a character device"], syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		paths["a character device"] = "/dev/null"
	}
	for kind, path := range paths {
		before, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		var out, errOut bytes.Buffer
		code := run([]string{"keygen", "-o", path}, nil, &out, &errOut)
		if code != exitProblem || !strings.Contains(errOut.String(), "is "+kind+", not a regular file") {
			t.Errorf("-o %s (%s): exit %d, %q; want exit %d naming it", path, kind, code, errOut.String(), exitProblem)
		}
		after, err := os.Lstat(path)
		if err != nil || after.Mode() != before.Mode() || !os.SameFile(before, after) {
			t.Errorf("-o %s (%s): replaced: %v -> %v (%v)", path, kind, before.Mode(), after.Mode(), err)
		}
	}
	if data, _ := os.ReadFile(target); string(data) != "not a key\n" {
		t.Errorf("the key was written through the symlink into %s", target)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 6 {
		t.Errorf("files left behind or lost: %v", entries)
	}
}

func TestKeygenNamespaceLabel(t *testing.T) {
	for _, ns := range []string{"a.b", "hpc.example.com", strings.Repeat("n", 64), "Hpc", "-hpc", "hpc_1"} {
		var out, errOut bytes.Buffer
		code := run([]string{"keygen", "--secret", "js-flux-curve", "--namespace", ns}, nil, &out, &errOut)
		if code != exitUsage || out.Len() != 0 || !strings.Contains(errOut.String(), "--namespace") {
			t.Errorf("--namespace %q: exit %d, %d bytes out, %q; want a usage error", ns, code, out.Len(), errOut.String())
		}
	}
	for _, ns := range []string{"hpc", "team-01", strings.Repeat("n", 63)} {
		var out, errOut bytes.Buffer
		if code := run([]string{"keygen", "--secret", "js.flux-curve", "--namespace", ns}, nil, &out, &errOut); code != exitOK {
			t.Errorf("--namespace %q: exit %d: %s", ns, code, errOut.String())
		}
	}
}
