package main

import (
	"archive/tar"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

const imagesDir = "../../../images" // hack/kube/images

var clampAt = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// capNetRaw is a security.capability value (VFS_CAP_REVISION_2, effective)
// granting cap_net_raw, as Debian's ping carries.
var capNetRaw = string([]byte{1, 0, 0, 2, 0, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// tree makes a small root file system: directories, a sticky /tmp, a plain
// and an executable file, a symlink, two hard links of one file, a FIFO,
// an old file, and (as root) a file of another group and one with a
// capability.
func tree(t *testing.T, root string) {
	t.Helper()
	for _, d := range []string{"usr/bin", "etc", "tmp"} {
		must(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	must(t, syscall.Chmod(filepath.Join(root, "tmp"), 0o1777)) // os.Chmod has no raw sticky bit
	must(t, os.WriteFile(filepath.Join(root, "etc/hosts"), []byte("127.0.0.1 localhost\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "usr/bin/tool"), []byte("#!/bin/sh\necho tool\n"), 0o755))
	must(t, os.Link(filepath.Join(root, "usr/bin/tool"), filepath.Join(root, "usr/bin/tool-link")))
	must(t, os.Symlink("tool", filepath.Join(root, "usr/bin/alias")))
	must(t, syscall.Mkfifo(filepath.Join(root, "etc/fifo"), 0o600))
	if os.Getuid() == 0 {
		must(t, os.WriteFile(filepath.Join(root, "etc/shadow"), []byte("root:*:1::::::\n"), 0o640))
		must(t, os.Chown(filepath.Join(root, "etc/shadow"), 0, 42))
		must(t, os.WriteFile(filepath.Join(root, "usr/bin/ping"), []byte("ping"), 0o755))
		if err := syscall.Setxattr(filepath.Join(root, "usr/bin/ping"), "security.capability", []byte(capNetRaw), 0); err != nil {
			t.Logf("no capability on this file system (%v): not checked", err)
			os.Remove(filepath.Join(root, "usr/bin/ping"))
		}
	}
	old := time.Date(2023, 6, 10, 12, 0, 0, 0, time.UTC)
	must(t, os.Chtimes(filepath.Join(root, "etc/hosts"), old, old))
}

// writeSpec writes a spec of two images over layers a (tree) and b (a
// normalized tree from "git"), and one layer no image uses.
func writeSpec(t *testing.T, dir string) string {
	t.Helper()
	tree(t, filepath.Join(dir, "src", "a"))
	must(t, os.MkdirAll(filepath.Join(dir, "src", "b", "etc"), 0o700))
	must(t, os.WriteFile(filepath.Join(dir, "src", "b", "etc", "conf"), []byte("b\n"), 0o600))
	spec := `{"mtime": "2026-01-01T00:00:00Z",
	  "layers": {"a": {"root": "${SRC}/a"}, "b": {"root": "${SRC}/b", "normalize": true}, "c": {"root": "${SRC}/a", "rootOwned": true},
	    "unused": {"root": "/nonexistent"}},
	  "images": [
	    {"ref": "jobset-flux.test/two:1", "layers": ["a", "b"], "config": {"Cmd": ["bash"], "Labels": {"version": "${VERSION}"}}},
	    {"ref": "docker.io/library/one:1", "layers": ["a"], "config": {"Entrypoint": ["/usr/bin/tool"], "User": "65534:65534"}},
	    {"ref": "docker.io/library/three:1", "layers": ["c"], "config": {}}
	  ]}`
	path := filepath.Join(dir, "images.json")
	must(t, os.WriteFile(path, []byte(spec), 0o644))
	t.Setenv("SRC", filepath.Join(dir, "src"))
	t.Setenv("VERSION", "1.2.3")
	return path
}

// images reads a layout's images by reference.
func images(t *testing.T, dir string) map[string]v1.Image {
	t.Helper()
	p, err := layout.FromPath(dir)
	must(t, err)
	idx, err := p.ImageIndex()
	must(t, err)
	im, err := idx.IndexManifest()
	must(t, err)
	out := map[string]v1.Image{}
	var refs []string
	for _, d := range im.Manifests {
		ref := d.Annotations[refAnnotation]
		refs = append(refs, ref)
		if d.Platform == nil || d.Platform.OS != "linux" || d.Platform.Architecture != "amd64" {
			t.Errorf("%s: platform %v, want linux/amd64", ref, d.Platform)
		}
		img, err := idx.Image(d.Digest)
		must(t, err)
		out[ref] = img
	}
	if !sort.StringsAreSorted(refs) {
		t.Errorf("index.json order %v: want sorted by reference", refs)
	}
	return out
}

func digest(t *testing.T, img v1.Image) string {
	t.Helper()
	d, err := img.Digest()
	must(t, err)
	return d.String()
}

// entries reads a layer's tar headers by name.
func entries(t *testing.T, l v1.Layer) map[string]*tar.Header {
	t.Helper()
	rc, err := l.Uncompressed()
	must(t, err)
	defer rc.Close()
	out := map[string]*tar.Header{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		must(t, err)
		out[h.Name] = h
	}
}

// TestRun: the layout holds both images, sorted, the shared layer once,
// OCI media types, the spec's configuration with ${VERSION} expanded, and
// the refs file; the tarball holds each image's config under its tag.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	must(t, run(writeSpec(t, dir), out, filepath.Join(dir, "images.tar")))
	refs, err := os.ReadFile(filepath.Join(out, "refs.txt"))
	if err != nil || string(refs) != "docker.io/library/one:1\ndocker.io/library/three:1\njobset-flux.test/two:1\n" {
		t.Errorf("refs.txt %q (%v), want the three references sorted", refs, err)
	}
	imgs := images(t, filepath.Join(out, "oci"))
	one, two := imgs["docker.io/library/one:1"], imgs["jobset-flux.test/two:1"]
	if one == nil || two == nil || len(imgs) != 3 {
		t.Fatalf("layout images %v: want one:1, two:1 and three:1", imgs)
	}
	m1, err := one.Manifest()
	must(t, err)
	m2, err := two.Manifest()
	must(t, err)
	if len(m1.Layers) != 1 || len(m2.Layers) != 2 || m1.Layers[0].Digest != m2.Layers[0].Digest {
		t.Errorf("layers %v and %v: want layer a shared", m1.Layers, m2.Layers)
	}
	if m2.MediaType != types.OCIManifestSchema1 || m2.Config.MediaType != types.OCIConfigJSON || m2.Layers[1].MediaType != types.OCILayer {
		t.Errorf("media types %s, %s, %s: want OCI's", m2.MediaType, m2.Config.MediaType, m2.Layers[1].MediaType)
	}
	cf, err := two.ConfigFile()
	must(t, err)
	if cf.OS != "linux" || cf.Architecture != "amd64" || cf.Config.Cmd[0] != "bash" || cf.Config.Labels["version"] != "1.2.3" ||
		!cf.Created.IsZero() || len(cf.History) != 0 {
		t.Errorf("config %+v: want linux/amd64, Cmd [bash], label version 1.2.3, no time, no history", cf)
	}
	blobs, err := os.ReadDir(filepath.Join(out, "oci", "blobs", "sha256"))
	must(t, err)
	if len(blobs) != 3+3+3 { // layers a, b and c, three configs, three manifests
		t.Errorf("%d blobs, want 9 (each layer once)", len(blobs))
	}
	if _, err := os.Stat(filepath.Join(out, ".layers")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the layers' work directory is left: %v", err)
	}
	for ref, img := range imgs {
		tag, err := name.NewTag(ref)
		must(t, err)
		loaded, err := tarball.ImageFromPath(filepath.Join(dir, "images.tar"), &tag)
		if err != nil {
			t.Errorf("tarball: %s: %v", ref, err)
			continue
		}
		// A docker archive keeps the config and layers, not the manifest.
		got, err := loaded.ConfigName()
		must(t, err)
		want, err := img.ConfigName()
		must(t, err)
		if got != want {
			t.Errorf("tarball: %s has config %s, the layout's %s", ref, got, want)
		}
	}
}

// TestLayerEntries: names without "./", parents first, numeric owners as
// in the tree, modes incl. the sticky bit, old times kept and new ones
// clamped, hard links as links, the capability kept, and the normalized
// tree root-owned 0755/0644.
func TestLayerEntries(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	must(t, run(writeSpec(t, dir), out, ""))
	layers, err := images(t, filepath.Join(out, "oci"))["jobset-flux.test/two:1"].Layers()
	must(t, err)
	a := entries(t, layers[0])
	want := map[string]struct {
		typ  byte
		mode int64
	}{
		"etc/": {tar.TypeDir, 0o755}, "etc/fifo": {tar.TypeFifo, 0o600}, "etc/hosts": {tar.TypeReg, 0o644},
		"tmp/": {tar.TypeDir, 0o1777}, "usr/": {tar.TypeDir, 0o755}, "usr/bin/": {tar.TypeDir, 0o755},
		"usr/bin/alias": {tar.TypeSymlink, 0o777}, "usr/bin/tool": {tar.TypeReg, 0o755}, "usr/bin/tool-link": {tar.TypeLink, 0o755},
	}
	for n, w := range want {
		h, ok := a[n]
		if !ok {
			t.Errorf("layer a has no %s (entries %v)", n, keys(a))
			continue
		}
		if h.Typeflag != w.typ || (h.Typeflag != tar.TypeSymlink && h.Mode&0o7777 != w.mode) || h.Uname != "" || h.Gname != "" {
			t.Errorf("%s: type %c mode %o owner names %q/%q, want type %c mode %o, numeric owners only", n, h.Typeflag, h.Mode, h.Uname, h.Gname, w.typ, w.mode)
		}
	}
	if h := a["etc/hosts"]; h != nil && !h.ModTime.Equal(time.Date(2023, 6, 10, 12, 0, 0, 0, time.UTC)) {
		t.Errorf("etc/hosts mtime %v: an older time must stay", h.ModTime)
	}
	if h := a["usr/bin/tool"]; h != nil && !h.ModTime.Equal(clampAt) {
		t.Errorf("usr/bin/tool mtime %v, want clamped to %v", h.ModTime, clampAt)
	}
	if h := a["usr/bin/tool-link"]; h != nil && h.Linkname != "usr/bin/tool" {
		t.Errorf("hard link to %q, want usr/bin/tool", h.Linkname)
	}
	if h := a["etc/shadow"]; os.Getuid() == 0 && (h == nil || h.Gid != 42) {
		t.Errorf("etc/shadow %+v: want gid 42 (owners as in the tree)", h)
	}
	if h := a["usr/bin/ping"]; h != nil && h.PAXRecords["SCHILY.xattr.security.capability"] != capNetRaw {
		t.Errorf("usr/bin/ping: PAX records %q, want its security.capability", h.PAXRecords)
	}
	three, err := images(t, filepath.Join(out, "oci"))["docker.io/library/three:1"].Layers()
	must(t, err)
	for n, h := range entries(t, three[0]) {
		if h.Uid != 0 || h.Gid != 0 || (n == "tmp/" && h.Mode&0o7777 != 0o1777) {
			t.Errorf("root-owned %s: %d:%d mode %o, want 0:0 and its own mode", n, h.Uid, h.Gid, h.Mode)
		}
	}
	for n, h := range entries(t, layers[1]) {
		mode := int64(0o644)
		if h.Typeflag == tar.TypeDir {
			mode = 0o755
		}
		if h.Uid != 0 || h.Gid != 0 || h.Mode&0o7777 != mode {
			t.Errorf("normalized %s: %d:%d mode %o, want 0:0 mode %o", n, h.Uid, h.Gid, h.Mode, mode)
		}
	}
}

// TestReproducible: the same inputs give the same digests in another
// directory, also after files were touched later than the clamp; a changed
// file changes its layer's and image's digests and no other image's.
func TestReproducible(t *testing.T) {
	dir := t.TempDir()
	spec := writeSpec(t, dir)
	must(t, run(spec, filepath.Join(dir, "first"), ""))
	now := time.Now()
	must(t, os.Chtimes(filepath.Join(dir, "src", "a", "usr/bin/tool"), now, now))
	must(t, run(spec, filepath.Join(dir, "second"), ""))
	first, second := images(t, filepath.Join(dir, "first", "oci")), images(t, filepath.Join(dir, "second", "oci"))
	for ref := range first {
		if digest(t, first[ref]) != digest(t, second[ref]) {
			t.Errorf("%s: %s, then %s from the same inputs", ref, digest(t, first[ref]), digest(t, second[ref]))
		}
	}
	a, _ := os.ReadFile(filepath.Join(dir, "first", "oci", "index.json"))
	b, _ := os.ReadFile(filepath.Join(dir, "second", "oci", "index.json"))
	if string(a) != string(b) {
		t.Errorf("index.json differs between two runs:\n%s\n%s", a, b)
	}
	must(t, os.WriteFile(filepath.Join(dir, "src", "b", "etc", "conf"), []byte("changed\n"), 0o600))
	must(t, run(spec, filepath.Join(dir, "third"), ""))
	third := images(t, filepath.Join(dir, "third", "oci"))
	if digest(t, third["jobset-flux.test/two:1"]) == digest(t, first["jobset-flux.test/two:1"]) {
		t.Error("two:1 kept its digest after a file of its layer b changed")
	}
	if digest(t, third["docker.io/library/one:1"]) != digest(t, first["docker.io/library/one:1"]) {
		t.Error("one:1 changed digest, yet none of its files changed")
	}
}

func TestSpecErrors(t *testing.T) {
	dir := t.TempDir()
	spec := `{"mtime": "yesterday", "layers": {"a": {"root": "${UNSET_FOR_TEST}/a"}},
	  "images": [{"ref": "x.test/a:1", "layers": ["a", "missing"]}, {"ref": "x.test/a:1", "layers": ["a"]}]}`
	path := filepath.Join(dir, "images.json")
	must(t, os.WriteFile(path, []byte(spec), 0o644))
	if _, _, err := readSpec(path); err == nil || !strings.Contains(err.Error(), "UNSET_FOR_TEST not set") {
		t.Errorf("readSpec: %v, want an error naming UNSET_FOR_TEST", err)
	}
	t.Setenv("UNSET_FOR_TEST", "/x")
	_, _, err := readSpec(path)
	for _, want := range []string{`no layer "missing"`, "listed twice", "mtime"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("readSpec: %v, want an error saying %q", err, want)
		}
	}
	// A layer root that is not there fails the build and names the layer.
	t.Setenv("SRC", filepath.Join(dir, "nothing"))
	t.Setenv("VERSION", "1")
	must(t, os.WriteFile(path, []byte(`{"mtime": "2026-01-01T00:00:00Z", "layers": {"a": {"root": "${SRC}/a"}},
	  "images": [{"ref": "x.test/a:1", "layers": ["a"]}]}`), 0o644))
	if err := run(path, filepath.Join(dir, "out"), ""); err == nil || !strings.Contains(err.Error(), "layer a") {
		t.Errorf("run with a missing root: %v, want an error naming layer a", err)
	}
}

// TestImagesSpec checks the project's own spec: images.txt lists exactly
// its roles and references (tests read images.txt without a build), the
// roles the tests rely on are there, every reference is full, and layer
// roots use only the variables build.sh sets.
func TestImagesSpec(t *testing.T) {
	for name, v := range map[string]string{"BASE_ROOT": "/b", "VIEW": "/v", "STANDINS": "/s", "STAGE": "/t", "MPI_LAYER": "/m"} {
		t.Setenv(name, v)
	}
	spec, _, err := readSpec(filepath.Join(imagesDir, "images.json"))
	if err != nil {
		t.Fatal(err)
	}
	var fromSpec []string
	roles := map[string]bool{}
	for _, img := range spec.Images {
		fromSpec = append(fromSpec, img.Role+" "+img.Ref)
		roles[img.Role] = true
		if host, _, _ := strings.Cut(img.Ref, "/"); !strings.Contains(host, ".") {
			t.Errorf("%s: not a full reference", img.Ref)
		}
	}
	data, err := os.ReadFile(filepath.Join(imagesDir, "images.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var fromFile []string
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			fromFile = append(fromFile, strings.Join(strings.Fields(line), " "))
		}
	}
	sort.Strings(fromSpec)
	sort.Strings(fromFile)
	if strings.Join(fromSpec, "\n") != strings.Join(fromFile, "\n") {
		t.Errorf("images.txt:\n%s\nimages.json says:\n%s", strings.Join(fromFile, "\n"), strings.Join(fromSpec, "\n"))
	}
	for _, role := range []string{"view-full", "view-core-only", "debian", "pause"} {
		if !roles[role] {
			t.Errorf("no image with role %s", role)
		}
	}
	for name, ls := range spec.Layers {
		if rel, ok := strings.CutPrefix(ls.Root, "/s/"); ok {
			if _, err := os.Stat(filepath.Join(imagesDir, "standins", rel)); err != nil {
				t.Errorf("layer %s: %v", name, err)
			}
		}
	}
}

func keys(m map[string]*tar.Header) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
