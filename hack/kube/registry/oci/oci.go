// Package oci reads and writes OCI image layouts (the image-spec's
// "oci-layout" directory: oci-layout, index.json, blobs/sha256/...), the
// form the project's test images take on disk before the registry serves
// them to containerd.
package oci

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Media types and annotations of the OCI image spec used here.
const (
	MediaTypeIndex     = "application/vnd.oci.image.index.v1+json"
	MediaTypeManifest  = "application/vnd.oci.image.manifest.v1+json"
	MediaTypeConfig    = "application/vnd.oci.image.config.v1+json"
	MediaTypeLayer     = "application/vnd.oci.image.layer.v1.tar"
	MediaTypeLayerGzip = "application/vnd.oci.image.layer.v1.tar+gzip"
	// AnnotationRefName names a manifest in index.json; this project
	// always puts the full reference there (docker.io/library/ubuntu:24.04).
	AnnotationRefName = "org.opencontainers.image.ref.name"
	layoutVersion     = "1.0.0"
)

// Descriptor points at a blob by digest, as in every OCI document.
type Descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Platform    *Platform         `json:"platform,omitempty"`
}

// Platform is the os/architecture a manifest is for.
type Platform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
}

// Index is index.json (and an image index blob).
type Index struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType,omitempty"`
	Manifests     []Descriptor `json:"manifests"`
}

// Manifest is an image manifest.
type Manifest struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType,omitempty"`
	Config        Descriptor   `json:"config"`
	Layers        []Descriptor `json:"layers"`
}

// Image is an image configuration blob.
type Image struct {
	Architecture string          `json:"architecture"`
	OS           string          `json:"os"`
	Config       ContainerConfig `json:"config"`
	RootFS       RootFS          `json:"rootfs"`
}

// ContainerConfig is the part of an image configuration a runtime uses to
// start a container (kubelet's command/args replace Entrypoint/Cmd).
type ContainerConfig struct {
	User       string   `json:"User,omitempty"`
	Env        []string `json:"Env,omitempty"`
	Entrypoint []string `json:"Entrypoint,omitempty"`
	Cmd        []string `json:"Cmd,omitempty"`
	WorkingDir string   `json:"WorkingDir,omitempty"`
}

// RootFS lists the uncompressed digests of an image's layers, in order.
type RootFS struct {
	Type    string   `json:"type"`
	DiffIDs []string `json:"diff_ids"`
}

// Layout is an OCI image layout directory.
type Layout struct {
	Dir string
}

// BlobPath is where the blob with the given digest lives in the layout.
// It refuses digests that are not sha256 or could escape the directory.
func (l Layout) BlobPath(digest string) (string, error) {
	hex, ok := strings.CutPrefix(digest, "sha256:")
	if !ok || len(hex) != 64 || strings.Trim(hex, "0123456789abcdef") != "" {
		return "", fmt.Errorf("not a sha256 digest: %q", digest)
	}
	return filepath.Join(l.Dir, "blobs", "sha256", hex), nil
}

// ReadIndex reads index.json.
func (l Layout) ReadIndex() (Index, error) {
	var idx Index
	if err := l.readJSON(filepath.Join(l.Dir, "index.json"), &idx); err != nil {
		return Index{}, err
	}
	if idx.SchemaVersion != 2 {
		return Index{}, fmt.Errorf("%s/index.json: schemaVersion %d, want 2", l.Dir, idx.SchemaVersion)
	}
	return idx, nil
}

// ReadManifest reads the manifest blob a descriptor points at.
func (l Layout) ReadManifest(d Descriptor) (Manifest, error) {
	var m Manifest
	path, err := l.BlobPath(d.Digest)
	if err != nil {
		return Manifest{}, err
	}
	if err := l.readJSON(path, &m); err != nil {
		return Manifest{}, err
	}
	return m, nil
}

func (l Layout) readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read OCI layout: %w", err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("parse %s: %w", path, err)
	}
	return nil
}
