package oci

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// Init creates the layout's skeleton (oci-layout, an empty index.json,
// blobs/sha256) unless it is already there.
func (l Layout) Init() error {
	if err := os.MkdirAll(filepath.Join(l.Dir, "blobs", "sha256"), 0o755); err != nil {
		return fmt.Errorf("create OCI layout: %w", err)
	}
	marker := filepath.Join(l.Dir, "oci-layout")
	if _, err := os.Stat(marker); errors.Is(err, fs.ErrNotExist) {
		if err := writeFileAtomic(marker, []byte(`{"imageLayoutVersion":"`+layoutVersion+`"}`)); err != nil {
			return err
		}
	}
	if _, err := os.Stat(filepath.Join(l.Dir, "index.json")); errors.Is(err, fs.ErrNotExist) {
		return l.writeIndex(Index{SchemaVersion: 2, MediaType: MediaTypeIndex, Manifests: []Descriptor{}})
	}
	return nil
}

// blobWriter stages a blob in the layout while hashing it; Commit moves it
// to its content address.
type blobWriter struct {
	layout Layout
	f      *os.File
	h      hash
	size   int64
}

type hash interface {
	io.Writer
	Sum([]byte) []byte
}

func (l Layout) newBlob() (*blobWriter, error) {
	f, err := os.CreateTemp(filepath.Join(l.Dir, "blobs", "sha256"), ".tmp-")
	if err != nil {
		return nil, fmt.Errorf("stage blob: %w", err)
	}
	return &blobWriter{layout: l, f: f, h: sha256.New()}, nil
}

func (b *blobWriter) Write(p []byte) (int, error) {
	n, err := b.f.Write(p)
	b.h.Write(p[:n])
	b.size += int64(n)
	return n, err
}

// Commit closes the staged file and renames it to blobs/sha256/<hex>.
func (b *blobWriter) Commit() (digest string, size int64, err error) {
	name := b.f.Name()
	if err := b.f.Close(); err != nil {
		os.Remove(name)
		return "", 0, fmt.Errorf("write blob: %w", err)
	}
	digest = "sha256:" + hex.EncodeToString(b.h.Sum(nil))
	path, _ := b.layout.BlobPath(digest)
	if err := os.Chmod(name, 0o644); err != nil {
		return "", 0, fmt.Errorf("write blob: %w", err)
	}
	if err := os.Rename(name, path); err != nil {
		os.Remove(name)
		return "", 0, fmt.Errorf("write blob: %w", err)
	}
	return digest, b.size, nil
}

// Abort drops a staged blob after a failure.
func (b *blobWriter) Abort() {
	b.f.Close()
	os.Remove(b.f.Name())
}

// WriteBlob stores data as a blob and returns its descriptor.
func (l Layout) WriteBlob(mediaType string, data []byte) (Descriptor, error) {
	b, err := l.newBlob()
	if err != nil {
		return Descriptor{}, err
	}
	if _, err := b.Write(data); err != nil {
		b.Abort()
		return Descriptor{}, fmt.Errorf("write blob: %w", err)
	}
	digest, size, err := b.Commit()
	if err != nil {
		return Descriptor{}, err
	}
	return Descriptor{MediaType: mediaType, Digest: digest, Size: size}, nil
}

// ImageSpec is what AddImage needs beyond the layers: the full reference
// and the container configuration.
type ImageSpec struct {
	Ref    string
	Config ContainerConfig
}

// AddImage writes the configuration and manifest of an image made of the
// given layers (in order, bottom first) and names it in index.json by its
// reference, replacing an entry of the same name. index.json stays sorted
// by reference, so the same images give the same bytes.
func (l Layout) AddImage(spec ImageSpec, layers []Layer) (Descriptor, error) {
	img := Image{Architecture: "amd64", OS: "linux", Config: spec.Config, RootFS: RootFS{Type: "layers", DiffIDs: []string{}}}
	m := Manifest{SchemaVersion: 2, MediaType: MediaTypeManifest, Layers: []Descriptor{}}
	for _, ly := range layers {
		img.RootFS.DiffIDs = append(img.RootFS.DiffIDs, ly.DiffID)
		m.Layers = append(m.Layers, ly.Descriptor)
	}
	cfg, err := l.WriteBlob(MediaTypeConfig, mustJSON(img))
	if err != nil {
		return Descriptor{}, fmt.Errorf("image %s: %w", spec.Ref, err)
	}
	m.Config = cfg
	desc, err := l.WriteBlob(MediaTypeManifest, mustJSON(m))
	if err != nil {
		return Descriptor{}, fmt.Errorf("image %s: %w", spec.Ref, err)
	}
	desc.Annotations = map[string]string{AnnotationRefName: spec.Ref}
	desc.Platform = &Platform{Architecture: img.Architecture, OS: img.OS}
	idx, err := l.ReadIndex()
	if err != nil {
		return Descriptor{}, err
	}
	kept := idx.Manifests[:0]
	for _, d := range idx.Manifests {
		if d.Annotations[AnnotationRefName] != spec.Ref {
			kept = append(kept, d)
		}
	}
	idx.Manifests = append(kept, desc)
	sort.SliceStable(idx.Manifests, func(i, j int) bool {
		return idx.Manifests[i].Annotations[AnnotationRefName] < idx.Manifests[j].Annotations[AnnotationRefName]
	})
	return desc, l.writeIndex(idx)
}

func (l Layout) writeIndex(idx Index) error {
	return writeFileAtomic(filepath.Join(l.Dir, "index.json"), mustJSON(idx))
}

// mustJSON marshals the package's own document types, which cannot fail.
func mustJSON(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
