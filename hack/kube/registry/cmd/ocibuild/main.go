// Command ocibuild writes the OCI image layout a spec file describes
// (hack/kube/images/images.json for the test cluster, hack/image/*.json for
// the function and the Argo CD sidecar): each layer once, a reproducible tar
// of a directory tree, then each image assembled over its layers with
// go-containerregistry and named in index.json by its full reference.
//
//	ocibuild -spec SPEC.json -out DIR [-tarball FILE]
//
// DIR gets oci/ (the layout) and refs.txt (one reference per line, sorted).
// -tarball also writes every image, tagged, as a `docker load` archive.
// ${NAME} anywhere in the spec is the environment's NAME; an unset or empty
// one is an error, not an empty string (a layer root of "/full").
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Spec is a spec file.
type Spec struct {
	// MTime clamps every entry's modification time (RFC 3339).
	MTime  string               `json:"mtime"`
	Layers map[string]LayerSpec `json:"layers"`
	Images []ImageSpec          `json:"images"`
}

// LayerSpec is one layer: a directory tree.
type LayerSpec struct {
	Root string `json:"root"`
	// Normalize makes every entry root-owned, 0755 (directories and files
	// with an execute bit) or 0644: for trees checked out of git, whose
	// owners and group/other bits depend on the clone.
	Normalize bool `json:"normalize,omitempty"`
	// RootOwned makes every entry root-owned and keeps its mode: for trees
	// a build staged as whichever user ran it.
	RootOwned bool `json:"rootOwned,omitempty"`
	// Comment says what the layer holds; not used.
	Comment string `json:"comment,omitempty"`
}

// ImageSpec is one image: its reference, its role for the tests, its
// layers bottom first and its container configuration.
type ImageSpec struct {
	Ref     string    `json:"ref"`
	Role    string    `json:"role,omitempty"`
	Layers  []string  `json:"layers"`
	Config  v1.Config `json:"config"`
	Comment string    `json:"comment,omitempty"`
}

func main() {
	specPath := flag.String("spec", "", "the images spec (JSON)")
	out := flag.String("out", "", "output directory: gets oci/ and refs.txt")
	tarPath := flag.String("tarball", "", "also write the images as a docker load archive here")
	flag.Parse()
	if *specPath == "" || *out == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: ocibuild -spec SPEC.json -out DIR [-tarball FILE]")
		os.Exit(2)
	}
	if err := run(*specPath, *out, *tarPath); err != nil {
		fmt.Fprintln(os.Stderr, "ocibuild:", err)
		os.Exit(1)
	}
}

func run(specPath, out, tarPath string) error {
	spec, mtime, err := readSpec(specPath)
	if err != nil {
		return err
	}
	work := filepath.Join(out, ".layers")
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	defer os.RemoveAll(work)
	layers, err := buildLayers(spec, mtime, work)
	if err != nil {
		return err
	}
	images, err := buildImages(spec, layers)
	if err != nil {
		return err
	}
	if err := writeLayout(filepath.Join(out, "oci"), images); err != nil {
		return err
	}
	if tarPath != "" {
		if err := writeTarball(tarPath, images); err != nil {
			return err
		}
	}
	var refs []string
	for _, img := range images {
		refs = append(refs, img.ref)
	}
	return os.WriteFile(filepath.Join(out, "refs.txt"), []byte(strings.Join(refs, "\n")+"\n"), 0o644)
}

// readSpec reads the spec with ${NAME} expanded and checks it: a valid
// mtime, every image's layers exist, no reference appears twice.
func readSpec(path string) (Spec, time.Time, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Spec{}, time.Time{}, fmt.Errorf("read spec: %w", err)
	}
	text, err := expand(string(data))
	if err != nil {
		return Spec{}, time.Time{}, fmt.Errorf("%s: %w", path, err)
	}
	var spec Spec
	if err := json.Unmarshal([]byte(text), &spec); err != nil {
		return Spec{}, time.Time{}, fmt.Errorf("parse %s: %w", path, err)
	}
	var problems []error
	mtime, err := time.Parse(time.RFC3339, spec.MTime)
	if err != nil {
		problems = append(problems, fmt.Errorf("mtime: %w", err))
	}
	refs := map[string]bool{}
	for _, img := range spec.Images {
		if refs[img.Ref] {
			problems = append(problems, fmt.Errorf("image %s listed twice", img.Ref))
		}
		refs[img.Ref] = true
		for _, name := range img.Layers {
			if _, ok := spec.Layers[name]; !ok {
				problems = append(problems, fmt.Errorf("image %s: no layer %q", img.Ref, name))
			}
		}
	}
	if err := errors.Join(problems...); err != nil {
		return Spec{}, time.Time{}, fmt.Errorf("%s: %w", path, err)
	}
	return spec, mtime, nil
}

// expand replaces ${NAME} with the environment's value; unset or empty
// variables are an error naming them all.
func expand(s string) (string, error) {
	var missing []string
	out := os.Expand(s, func(name string) string {
		v := os.Getenv(name)
		if v == "" {
			missing = append(missing, name)
		}
		return v
	})
	if len(missing) > 0 {
		sort.Strings(missing)
		return "", fmt.Errorf("%s not set", strings.Join(missing, ", "))
	}
	return out, nil
}
