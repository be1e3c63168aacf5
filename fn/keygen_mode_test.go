package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
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

func TestKeygenOverSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "shared")
	if err := os.WriteFile(target, []byte("not a key\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "cert")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := run([]string{"keygen", "-o", link}, nil, &out, &errOut); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if data, _ := os.ReadFile(target); string(data) != "not a key\n" {
		t.Errorf("the key was written through the symlink into %s", target)
	}
	if info, err := os.Lstat(link); err != nil || info.Mode().Perm() != 0o600 || !info.Mode().IsRegular() {
		t.Errorf("-o %s: %v, %v; want a regular 0600 file", link, info.Mode(), err)
	}
	code := run([]string{"keygen", "-o", dir}, nil, &out, &errOut)
	if code != exitProblem || !strings.Contains(errOut.String(), "is a directory") {
		t.Errorf("-o a directory: exit %d, %q", code, errOut.String())
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
