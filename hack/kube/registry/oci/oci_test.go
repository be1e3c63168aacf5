package oci

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

var clampAt = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// tree makes a small root file system: directories, a plain and an
// executable file, a symlink, two hard links of one file and a FIFO, and
// (as root) a file with another owner.
func tree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(root, "usr/bin"), 0o755))
	must(t, os.MkdirAll(filepath.Join(root, "etc"), 0o755))
	must(t, os.Mkdir(filepath.Join(root, "tmp"), 0o755))
	must(t, syscall.Chmod(filepath.Join(root, "tmp"), 0o1777)) // os.Chmod has no raw sticky bit
	must(t, os.WriteFile(filepath.Join(root, "etc/hosts"), []byte("127.0.0.1 localhost\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "usr/bin/tool"), []byte("#!/bin/sh\necho tool\n"), 0o755))
	must(t, os.Link(filepath.Join(root, "usr/bin/tool"), filepath.Join(root, "usr/bin/tool-link")))
	must(t, os.Symlink("tool", filepath.Join(root, "usr/bin/alias")))
	must(t, syscall.Mkfifo(filepath.Join(root, "etc/fifo"), 0o600))
	if os.Getuid() == 0 {
		must(t, os.WriteFile(filepath.Join(root, "etc/shadow"), []byte("root:*:1::::::\n"), 0o640))
		must(t, os.Chown(filepath.Join(root, "etc/shadow"), 0, 42))
	}
	// An old file keeps its time; a new one is clamped.
	old := time.Date(2023, 6, 10, 12, 0, 0, 0, time.UTC)
	must(t, os.Chtimes(filepath.Join(root, "etc/hosts"), old, old))
	return root
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func newLayout(t *testing.T) Layout {
	t.Helper()
	l := Layout{Dir: filepath.Join(t.TempDir(), "oci")}
	must(t, l.Init())
	return l
}

// readLayer returns a layer's tar entries, checking that the blob's digest
// is its content's and the diff_id the uncompressed tar's.
func readLayer(t *testing.T, l Layout, ly Layer) []*tar.Header {
	t.Helper()
	path, err := l.BlobPath(ly.Digest)
	must(t, err)
	data, err := os.ReadFile(path)
	must(t, err)
	if got := sha256.Sum256(data); "sha256:"+hex.EncodeToString(got[:]) != ly.Digest || int64(len(data)) != ly.Size {
		t.Fatalf("blob %s: content digest or size (%d) differ from its descriptor (%d)", ly.Digest, len(data), ly.Size)
	}
	f, err := os.Open(path)
	must(t, err)
	defer f.Close()
	var r io.Reader = f
	if ly.MediaType == MediaTypeLayerGzip {
		gz, err := gzip.NewReader(f)
		must(t, err)
		r = gz
	}
	diff := sha256.New()
	tr := tar.NewReader(io.TeeReader(r, diff))
	var hdrs []*tar.Header
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		must(t, err)
		hdrs = append(hdrs, h)
	}
	io.Copy(io.Discard, r)
	if got := "sha256:" + hex.EncodeToString(diff.Sum(nil)); got != ly.DiffID {
		t.Errorf("diff_id %s, uncompressed tar is %s", ly.DiffID, got)
	}
	return hdrs
}

func TestWriteLayerEntries(t *testing.T) {
	root := tree(t)
	l := newLayout(t)
	ly, err := l.WriteLayer(root, LayerOptions{Gzip: true, MTime: clampAt})
	must(t, err)
	hdrs := readLayer(t, l, ly)
	want := []struct {
		name string
		typ  byte
		mode int64
	}{
		{"etc/", tar.TypeDir, 0o755}, {"etc/fifo", tar.TypeFifo, 0o600}, {"etc/hosts", tar.TypeReg, 0o644},
		{"etc/shadow", tar.TypeReg, 0o640}, {"tmp/", tar.TypeDir, 0o1777}, {"usr/", tar.TypeDir, 0o755},
		{"usr/bin/", tar.TypeDir, 0o755}, {"usr/bin/alias", tar.TypeSymlink, 0o777},
		{"usr/bin/tool", tar.TypeReg, 0o755}, {"usr/bin/tool-link", tar.TypeLink, 0o755},
	}
	if os.Getuid() != 0 {
		want = append(want[:3], want[4:]...)
	}
	if len(hdrs) != len(want) {
		t.Fatalf("%d entries, want %d", len(hdrs), len(want))
	}
	for i, h := range hdrs {
		w := want[i]
		if h.Name != w.name || h.Typeflag != w.typ || (h.Typeflag != tar.TypeSymlink && h.Mode != w.mode) {
			t.Errorf("entry %d: %s type %c mode %o, want %s type %c mode %o", i, h.Name, h.Typeflag, h.Mode, w.name, w.typ, w.mode)
		}
		if h.Uname != "" || h.Gname != "" {
			t.Errorf("%s: owner names %q/%q, want numeric owners only", h.Name, h.Uname, h.Gname)
		}
		switch h.Name {
		case "etc/hosts":
			if !h.ModTime.Equal(time.Date(2023, 6, 10, 12, 0, 0, 0, time.UTC)) {
				t.Errorf("etc/hosts mtime %v: an older time must stay", h.ModTime)
			}
		case "etc/shadow":
			if h.Gid != 42 {
				t.Errorf("etc/shadow gid %d, want 42 (owners as in the tree)", h.Gid)
			}
		case "usr/bin/tool":
			if !h.ModTime.Equal(clampAt) {
				t.Errorf("usr/bin/tool mtime %v, want clamped to %v", h.ModTime, clampAt)
			}
		case "usr/bin/tool-link":
			if h.Linkname != "usr/bin/tool" {
				t.Errorf("hard link to %q, want usr/bin/tool", h.Linkname)
			}
		case "usr/bin/alias":
			if h.Linkname != "tool" {
				t.Errorf("symlink to %q, want tool", h.Linkname)
			}
		}
	}
}

// TestWriteLayerReproducible: the same tree gives the same digests, even
// with new modification times after the clamp, in another layout.
func TestWriteLayerReproducible(t *testing.T) {
	root := tree(t)
	first, err := newLayout(t).WriteLayer(root, LayerOptions{Gzip: true, MTime: clampAt})
	must(t, err)
	later := time.Now()
	must(t, os.Chtimes(filepath.Join(root, "usr/bin/tool"), later, later))
	second, err := newLayout(t).WriteLayer(root, LayerOptions{Gzip: true, MTime: clampAt})
	must(t, err)
	if first.Digest != second.Digest || first.DiffID != second.DiffID {
		t.Errorf("same tree, digests %s/%s then %s/%s", first.Digest, first.DiffID, second.Digest, second.DiffID)
	}
	plain, err := newLayout(t).WriteLayer(root, LayerOptions{MTime: clampAt})
	must(t, err)
	if plain.DiffID != first.DiffID || plain.MediaType != MediaTypeLayer || plain.Digest != plain.DiffID {
		t.Errorf("plain tar layer: %+v, want the gzip layer's diff_id %s as digest and diff_id", plain, first.DiffID)
	}
}

func TestWriteLayerNormalize(t *testing.T) {
	root := tree(t)
	l := newLayout(t)
	ly, err := l.WriteLayer(root, LayerOptions{Normalize: true})
	must(t, err)
	for _, h := range readLayer(t, l, ly) {
		want := int64(0o644)
		if h.Typeflag == tar.TypeDir || h.Name == "usr/bin/tool" || h.Name == "usr/bin/tool-link" {
			want = 0o755
		}
		if h.Typeflag == tar.TypeSymlink {
			want = 0o777
		}
		if h.Uid != 0 || h.Gid != 0 || h.Mode != want || h.ModTime.Unix() != 0 {
			t.Errorf("%s: %d:%d mode %o mtime %v, want 0:0 mode %o, mtime 0", h.Name, h.Uid, h.Gid, h.Mode, h.ModTime, want)
		}
	}
}

func TestAddImage(t *testing.T) {
	l := newLayout(t)
	ly, err := l.WriteLayer(tree(t), LayerOptions{Gzip: true, MTime: clampAt})
	must(t, err)
	cfg := ContainerConfig{Env: []string{"PATH=/usr/bin"}, Cmd: []string{"bash"}}
	for _, ref := range []string{"jobset-flux.test/b:1", "docker.io/library/a:1", "jobset-flux.test/b:1"} {
		_, err := l.AddImage(ImageSpec{Ref: ref, Config: cfg}, []Layer{ly})
		must(t, err)
	}
	idx, err := l.ReadIndex()
	must(t, err)
	if len(idx.Manifests) != 2 || idx.Manifests[0].Annotations[AnnotationRefName] != "docker.io/library/a:1" ||
		idx.Manifests[1].Annotations[AnnotationRefName] != "jobset-flux.test/b:1" {
		t.Fatalf("index.json manifests %+v: want a:1 then b:1, once each", idx.Manifests)
	}
	m, err := l.ReadManifest(idx.Manifests[0])
	must(t, err)
	if m.MediaType != MediaTypeManifest || len(m.Layers) != 1 || m.Layers[0].Digest != ly.Digest || m.Layers[0].MediaType != MediaTypeLayerGzip {
		t.Errorf("manifest %+v: want one gzip layer %s", m, ly.Digest)
	}
	path, err := l.BlobPath(m.Config.Digest)
	must(t, err)
	data, err := os.ReadFile(path)
	must(t, err)
	var img Image
	must(t, json.Unmarshal(data, &img))
	if img.OS != "linux" || img.Architecture != "amd64" || len(img.RootFS.DiffIDs) != 1 || img.RootFS.DiffIDs[0] != ly.DiffID ||
		img.Config.Cmd[0] != "bash" || img.Config.Env[0] != "PATH=/usr/bin" {
		t.Errorf("config %s: want linux/amd64, diff_ids [%s], Cmd [bash], Env [PATH=/usr/bin]", data, ly.DiffID)
	}
	if _, err := os.Stat(filepath.Join(l.Dir, "oci-layout")); err != nil {
		t.Error(err)
	}
}

func TestBlobPathRefusesBadDigests(t *testing.T) {
	l := Layout{Dir: "/x"}
	for _, d := range []string{"sha256:../../etc/passwd", "sha512:" + hex.EncodeToString(make([]byte, 32)), "sha256:ABC", ""} {
		if p, err := l.BlobPath(d); err == nil {
			t.Errorf("BlobPath(%q) = %s, want an error", d, p)
		}
	}
}
