package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// refAnnotation names a manifest in index.json by its full reference.
const refAnnotation = "org.opencontainers.image.ref.name"

// newRegistry is go-containerregistry's registry holding every image the
// layout's index.json names by a full reference: its blobs read from the
// layout's files, its manifests put in through the handler itself. It
// answers only GET and HEAD: the cluster's images are what the layout
// holds, nothing pushed later.
func newRegistry(dir string, logger *log.Logger) (http.Handler, int, error) {
	p, err := layout.FromPath(dir)
	if err != nil {
		return nil, 0, err
	}
	idx, err := p.ImageIndex()
	if err != nil {
		return nil, 0, err
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, 0, err
	}
	blobs := layoutBlobs{p}
	h := registry.New(registry.Logger(logger), registry.WithBlobHandler(blobs))
	for _, d := range im.Manifests {
		ref := d.Annotations[refAnnotation]
		repo, tag, err := splitRef(ref)
		if err != nil {
			return nil, 0, fmt.Errorf("index.json: %w", err)
		}
		img, err := idx.Image(d.Digest)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", ref, err)
		}
		if err := blobs.check(img); err != nil {
			return nil, 0, fmt.Errorf("%s: %w", ref, err)
		}
		if err := putManifest(h, repo, tag, img); err != nil {
			return nil, 0, fmt.Errorf("%s: %w", ref, err)
		}
	}
	return readOnly(h), len(im.Manifests), nil
}

// splitRef splits a full reference host/path:tag into the repository it
// is served in (host/path) and its tag.
func splitRef(ref string) (repo, tag string, err error) {
	t, err := name.NewTag(ref, name.StrictValidation)
	host, _, _ := strings.Cut(ref, "/")
	if err != nil || !strings.ContainsAny(host, ".:") && host != "localhost" {
		return "", "", fmt.Errorf("%q is not a full reference (host/name:tag): %v", ref, err)
	}
	// name normalizes docker.io to index.docker.io; the repository keeps
	// the host as written, which is what hosts.sh's prefixes name.
	return host + "/" + t.RepositoryStr(), t.TagStr(), nil
}

// putManifest stores an image's manifest under repo:tag (and its digest).
func putManifest(h http.Handler, repo, tag string, img v1.Image) error {
	raw, err := img.RawManifest()
	if err != nil {
		return err
	}
	mt, err := img.MediaType()
	if err != nil {
		return err
	}
	req := httptest.NewRequest(http.MethodPut, "/v2/"+repo+"/manifests/"+tag, bytes.NewReader(raw))
	req.Header.Set("Content-Type", string(mt))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusCreated {
		return fmt.Errorf("put manifest %s:%s: %d %s", repo, tag, rec.Code, rec.Body)
	}
	return nil
}

// readOnly refuses every method but GET and HEAD.
func readOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodGet && req.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusMethodNotAllowed)
			io.WriteString(w, `{"errors":[{"code":"UNSUPPORTED","message":"this registry is read-only"}]}`)
			return
		}
		h.ServeHTTP(w, req)
	})
}

// layoutBlobs serves blobs straight from the layout's files. The layout
// is content-addressed and checked at load (check), so a request needs
// only the file's size; the library's disk handler hashes the whole blob
// on every request instead.
type layoutBlobs struct{ p layout.Path }

func (b layoutBlobs) path(h v1.Hash) string {
	return filepath.Join(string(b.p), "blobs", h.Algorithm, h.Hex)
}

// Stat is the blob's size.
func (b layoutBlobs) Stat(_ context.Context, _ string, h v1.Hash) (int64, error) {
	info, err := os.Stat(b.path(h))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, registry.ErrNotFound
	}
	if err != nil {
		return 0, err
	}
	return info.Size(), nil
}

// Get opens the blob.
func (b layoutBlobs) Get(_ context.Context, _ string, h v1.Hash) (io.ReadCloser, error) {
	f, err := os.Open(b.path(h))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, registry.ErrNotFound
	}
	return f, err
}

// check makes sure the image's config and layers are in the layout with
// the sizes its manifest gives, so a pull never fails half way.
func (b layoutBlobs) check(img v1.Image) error {
	m, err := img.Manifest()
	if err != nil {
		return err
	}
	for _, d := range append([]v1.Descriptor{m.Config}, m.Layers...) {
		size, err := b.Stat(context.Background(), "", d.Digest)
		if err != nil {
			return fmt.Errorf("blob %s: %w", d.Digest, err)
		}
		if size != d.Size {
			return fmt.Errorf("blob %s: %d bytes, the manifest says %d", d.Digest, size, d.Size)
		}
	}
	return nil
}
