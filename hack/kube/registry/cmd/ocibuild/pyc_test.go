package main

import (
	"archive/tar"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// pycHeader is a .pyc header with Python 3.11's magic.
func pycHeader(flags, mtime, size uint32) []byte {
	h := []byte{0xa7, 0x0d, '\r', '\n', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	binary.LittleEndian.PutUint32(h[4:], flags)
	binary.LittleEndian.PutUint32(h[8:], mtime)
	binary.LittleEndian.PutUint32(h[12:], size)
	return append(h, "code"...)
}

func TestClampPyc(t *testing.T) {
	limit := uint32(clampAt.Unix())
	later, earlier := limit+86400, limit-86400
	for _, c := range []struct {
		name     string
		in, want []byte
	}{
		{"a source newer than the clamp", pycHeader(0, later, 10), pycHeader(0, limit, 10)},
		{"a source older than the clamp", pycHeader(0, earlier, 10), pycHeader(0, earlier, 10)},
		{"exactly the clamp", pycHeader(0, limit, 10), pycHeader(0, limit, 10)},
		{"hash-based, unchecked", pycHeader(1, later, 10), pycHeader(1, later, 10)},
		{"hash-based, checked", pycHeader(3, later, 10), pycHeader(3, later, 10)},
		{"no pyc magic", append([]byte("#!/b"), pycHeader(0, later, 10)[4:]...), append([]byte("#!/b"), pycHeader(0, later, 10)[4:]...)},
		{"too short", pycHeader(0, later, 10)[:12], pycHeader(0, later, 10)[:12]},
	} {
		got := bytes.Clone(c.in)
		clampPyc(got, clampAt)
		if !bytes.Equal(got, c.want) {
			t.Errorf("%s: % x, want % x", c.name, got, c.want)
		}
	}
}

// TestClampPycs: only regular .pyc files in a __pycache__ directory are
// touched; every other entry, header and content, comes through as it was.
func TestClampPycs(t *testing.T) {
	later := uint32(clampAt.Unix()) + 1000
	pyc := pycHeader(0, later, 7)
	var in bytes.Buffer
	tw := tar.NewWriter(&in)
	files := []struct {
		h    tar.Header
		body []byte
	}{
		{tar.Header{Name: "lib/", Typeflag: tar.TypeDir, Mode: 0o755}, nil},
		{tar.Header{Name: "lib/m.py", Typeflag: tar.TypeReg, Mode: 0o644}, []byte("x = 1\n")},
		{tar.Header{Name: "lib/__pycache__/m.cpython-311.pyc", Typeflag: tar.TypeReg, Mode: 0o644}, pyc},
		{tar.Header{Name: "lib/elsewhere.pyc", Typeflag: tar.TypeReg, Mode: 0o644}, pyc},
		{tar.Header{Name: "lib/__pycache__/link.cpython-311.pyc", Typeflag: tar.TypeLink, Linkname: "lib/__pycache__/m.cpython-311.pyc"}, nil},
		{tar.Header{Name: "bin/ping", Typeflag: tar.TypeReg, Mode: 0o755, PAXRecords: map[string]string{"SCHILY.xattr.security.capability": capNetRaw}}, []byte("ping")},
	}
	for _, f := range files {
		h := f.h
		h.Size = int64(len(f.body))
		h.ModTime = clampAt.Add(-time.Hour)
		must(t, tw.WriteHeader(&h))
		_, err := tw.Write(f.body)
		must(t, err)
	}
	must(t, tw.Close())

	var out bytes.Buffer
	must(t, clampPycs(&in, &out, clampAt))
	tr := tar.NewReader(&out)
	for i := 0; ; i++ {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			if i != len(files) {
				t.Errorf("%d entries, want %d", i, len(files))
			}
			break
		}
		must(t, err)
		body, err := io.ReadAll(tr)
		must(t, err)
		f := files[i]
		want := f.body
		if h.Name == "lib/__pycache__/m.cpython-311.pyc" {
			want = pycHeader(0, uint32(clampAt.Unix()), 7)
		}
		if h.Name != f.h.Name || h.Typeflag != f.h.Typeflag || h.Linkname != f.h.Linkname || h.Mode != f.h.Mode ||
			!h.ModTime.Equal(clampAt.Add(-time.Hour)) || !bytes.Equal(body, want) {
			t.Errorf("entry %d: %s %c %q mode %o %v % x, want %s %c %q mode %o % x", i, h.Name, h.Typeflag, h.Linkname, h.Mode, h.ModTime, body,
				f.h.Name, f.h.Typeflag, f.h.Linkname, f.h.Mode, want)
		}
		if f.h.PAXRecords != nil && h.PAXRecords["SCHILY.xattr.security.capability"] != capNetRaw {
			t.Errorf("%s: PAX records %q, want the capability kept", h.Name, h.PAXRecords)
		}
	}

	if err := clampPycs(strings.NewReader("not a tar stream, long enough to be read as one block of it"), io.Discard, clampAt); err == nil {
		t.Error("clampPycs of a broken stream: no error")
	}
}

// TestPycUsedFromImage: a module compiled just now, as a build compiles
// it, is loaded from its .pyc by the Python of this machine once the
// layer is unpacked (its source's time clamped by tar), instead of being
// compiled again.
func TestPycUsedFromImage(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("python3 is needed (the test cluster's images are Debian's, with Python)")
		}
		t.Skip("no python3")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "src", "a")
	must(t, os.MkdirAll(filepath.Join(src, "lib"), 0o755))
	must(t, os.WriteFile(filepath.Join(src, "lib", "probe_mod.py"), []byte("VALUE = 42\n"), 0o644))
	compile := exec.Command(python, "-m", "py_compile", filepath.Join(src, "lib", "probe_mod.py"))
	if out, err := compile.CombinedOutput(); err != nil {
		t.Fatalf("py_compile: %v\n%s", err, out)
	}
	spec := filepath.Join(dir, "images.json")
	must(t, os.WriteFile(spec, []byte(`{"mtime": "2026-01-01T00:00:00Z", "layers": {"a": {"root": "`+src+`"}},
	  "images": [{"ref": "jobset-flux.test/py:1", "layers": ["a"], "config": {}}]}`), 0o644))
	must(t, run(spec, filepath.Join(dir, "out"), ""))
	layers, err := images(t, filepath.Join(dir, "out", "oci"))["jobset-flux.test/py:1"].Layers()
	must(t, err)
	rc, err := layers[0].Uncompressed()
	must(t, err)
	defer rc.Close()
	root := filepath.Join(dir, "root")
	must(t, os.MkdirAll(root, 0o755))
	untar := exec.Command("tar", "-x", "-C", root)
	untar.Stdin = rc
	if out, err := untar.CombinedOutput(); err != nil {
		t.Fatalf("untar: %v\n%s", err, out)
	}

	// -v names where each module's code came from; -B keeps this run from
	// writing a fresh .pyc that a second look would then find.
	py := exec.Command(python, "-B", "-v", "-c", "import probe_mod; print(probe_mod.VALUE)")
	py.Env = append(os.Environ(), "PYTHONPATH="+filepath.Join(root, "lib"))
	out, err := py.CombinedOutput()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, out)
	}
	var from string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "code object from") && strings.Contains(line, "probe_mod") {
			from = line
		}
	}
	if !strings.Contains(from, filepath.Join("__pycache__", "probe_mod.")) || !strings.HasSuffix(strings.TrimSpace(from), ".pyc'") {
		t.Errorf("probe_mod's code came from %q, want its .pyc (python -v:\n%s)", from, out)
	}
}
