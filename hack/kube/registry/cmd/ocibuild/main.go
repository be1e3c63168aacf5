// Command ocibuild writes the OCI image layout described by a spec file
// (hack/kube/images/images.json): each layer once from a directory tree,
// then each image as a configuration and manifest over its layers, named in
// index.json by its full reference.
//
//	ocibuild -spec images.json -out DIR
//
// DIR gets oci/ (the layout) and refs.txt (one reference per line). Layer
// roots in the spec may name environment variables (${VIEW}/full), set by
// the caller (hack/kube/images/build.sh).
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

	"github.com/jobset-flux/jobset-flux/hack/kube/registry/oci"
)

// Spec is the images.json document.
type Spec struct {
	// MTime clamps every entry's modification time (RFC 3339).
	MTime  string               `json:"mtime"`
	Gzip   bool                 `json:"gzip"`
	Layers map[string]LayerSpec `json:"layers"`
	Images []ImageSpec          `json:"images"`
}

// LayerSpec is one layer: a directory tree.
type LayerSpec struct {
	Root      string `json:"root"`
	Normalize bool   `json:"normalize,omitempty"`
	// Comment says what the layer holds; not used.
	Comment string `json:"comment,omitempty"`
}

// ImageSpec is one image: its reference, its role for the tests, its
// layers bottom first and its container configuration.
type ImageSpec struct {
	Ref     string              `json:"ref"`
	Role    string              `json:"role"`
	Layers  []string            `json:"layers"`
	Config  oci.ContainerConfig `json:"config"`
	Comment string              `json:"comment,omitempty"`
}

func main() {
	specPath := flag.String("spec", "", "the images spec (JSON)")
	out := flag.String("out", "", "output directory: gets oci/ and refs.txt")
	flag.Parse()
	if *specPath == "" || *out == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: ocibuild -spec images.json -out DIR")
		os.Exit(2)
	}
	if err := run(*specPath, *out); err != nil {
		fmt.Fprintln(os.Stderr, "ocibuild:", err)
		os.Exit(1)
	}
}

func run(specPath, out string) error {
	spec, err := readSpec(specPath)
	if err != nil {
		return err
	}
	mtime, err := time.Parse(time.RFC3339, spec.MTime)
	if err != nil {
		return fmt.Errorf("%s: mtime: %w", specPath, err)
	}
	layout := oci.Layout{Dir: filepath.Join(out, "oci")}
	if err := layout.Init(); err != nil {
		return err
	}
	layers, err := writeLayers(layout, spec, oci.LayerOptions{Gzip: spec.Gzip, MTime: mtime})
	if err != nil {
		return err
	}
	var refs []string
	for _, img := range spec.Images {
		var ls []oci.Layer
		var size int64
		for _, name := range img.Layers {
			ls = append(ls, layers[name])
			size += layers[name].Size
		}
		desc, err := layout.AddImage(oci.ImageSpec{Ref: img.Ref, Config: img.Config}, ls)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "ocibuild: %s %s (%d layers, %.1f MB)\n", img.Ref, desc.Digest, len(ls), float64(size)/1e6)
		refs = append(refs, img.Ref)
	}
	sort.Strings(refs)
	return os.WriteFile(filepath.Join(out, "refs.txt"), []byte(strings.Join(refs, "\n")+"\n"), 0o644)
}

// readSpec reads and checks the spec: every image's layers exist, no
// reference appears twice, every layer root's variables are set.
func readSpec(path string) (Spec, error) {
	var spec Spec
	data, err := os.ReadFile(path)
	if err != nil {
		return Spec{}, fmt.Errorf("read spec: %w", err)
	}
	if err := json.Unmarshal(data, &spec); err != nil {
		return Spec{}, fmt.Errorf("parse %s: %w", path, err)
	}
	var problems []error
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
	for name, ls := range spec.Layers {
		root, err := expand(ls.Root)
		if err != nil {
			problems = append(problems, fmt.Errorf("layer %s: %w", name, err))
		}
		ls.Root = root
		spec.Layers[name] = ls
	}
	if err := errors.Join(problems...); err != nil {
		return Spec{}, fmt.Errorf("%s: %w", path, err)
	}
	return spec, nil
}

// expand replaces ${NAME} in s with the environment's value; an unset or
// empty variable is an error, not an empty string (a root of "/full").
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
		return "", fmt.Errorf("%s: %s not set", s, strings.Join(missing, ", "))
	}
	return out, nil
}

// writeLayers writes the layers the images use, in name order, once each.
func writeLayers(layout oci.Layout, spec Spec, opts oci.LayerOptions) (map[string]oci.Layer, error) {
	used := map[string]bool{}
	for _, img := range spec.Images {
		for _, name := range img.Layers {
			used[name] = true
		}
	}
	names := make([]string, 0, len(used))
	for name := range used {
		names = append(names, name)
	}
	sort.Strings(names)
	layers := map[string]oci.Layer{}
	for _, name := range names {
		ls := spec.Layers[name]
		o := opts
		o.Normalize = ls.Normalize
		start := time.Now()
		ly, err := layout.WriteLayer(ls.Root, o)
		if err != nil {
			return nil, fmt.Errorf("layer %s: %w", name, err)
		}
		fmt.Fprintf(os.Stderr, "ocibuild: layer %s: %s, %.1f MB tar, %.1f MB blob, %.1fs\n",
			name, ly.Digest, float64(ly.TarSize)/1e6, float64(ly.Size)/1e6, time.Since(start).Seconds())
		layers[name] = ly
	}
	return layers, nil
}
