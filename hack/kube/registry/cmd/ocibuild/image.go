package main

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// refAnnotation names a manifest in index.json (the image spec's
// org.opencontainers.image.ref.name); here it is always the full reference.
const refAnnotation = "org.opencontainers.image.ref.name"

// platform is the one platform every image is for.
var platform = v1.Platform{OS: "linux", Architecture: "amd64"}

// tarArgs are GNU tar's flags for a reproducible layer: entries sorted by
// name, numeric owners as in the tree, no access or change times, times
// clamped to the spec's mtime (files a build wrote just now get it, files
// as Debian shipped them keep their older times; writeLayerFile clamps
// the .pyc files' records of those times alike), and
// security.capability kept (ping's cap_net_raw). Hard links stay links;
// sockets are left out.
func tarArgs(root string, mtime time.Time, ls LayerSpec) []string {
	args := []string{"--create", "--file=-", "--directory=" + root, "--sort=name", "--format=posix",
		"--numeric-owner", "--pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime",
		"--mtime=" + mtime.UTC().Format(time.RFC3339), "--clamp-mtime",
		"--xattrs", "--xattrs-include=security.capability"}
	if ls.Normalize || ls.RootOwned {
		args = append(args, "--owner=0", "--group=0")
	}
	if ls.Normalize {
		args = append(args, "--mode=u=rwX,go=rX")
	}
	return append(args, "--null", "--files-from=-")
}

// buildLayers writes each layer the images use, once, in name order, as
// a gzip file in work, and opens it as a layer.
func buildLayers(spec Spec, mtime time.Time, work string) (map[string]v1.Layer, error) {
	used := map[string]bool{}
	for _, img := range spec.Images {
		for _, n := range img.Layers {
			used[n] = true
		}
	}
	names := make([]string, 0, len(used))
	for n := range used {
		names = append(names, n)
	}
	sort.Strings(names)
	layers := map[string]v1.Layer{}
	for _, n := range names {
		start := time.Now()
		ls := spec.Layers[n]
		path := filepath.Join(work, n+".tar.gz")
		if err := writeLayerFile(ls.Root, path, tarArgs(ls.Root, mtime, ls), mtime); err != nil {
			return nil, fmt.Errorf("layer %s: %w", n, err)
		}
		l, err := tarball.LayerFromFile(path, tarball.WithMediaType(types.OCILayer))
		if err != nil {
			return nil, fmt.Errorf("layer %s: %w", n, err)
		}
		d, err := l.Digest()
		if err != nil {
			return nil, fmt.Errorf("layer %s: %w", n, err)
		}
		size, _ := l.Size()
		fmt.Fprintf(os.Stderr, "ocibuild: layer %s: %s, %.1f MB gzip, %.1fs\n", n, d, float64(size)/1e6, time.Since(start).Seconds())
		layers[n] = l
	}
	return layers, nil
}

// writeLayerFile runs tar over root's top-level entries (so entry names
// have no "./" prefix and the tree's root is no entry of its own), clamps
// its .pyc files' records of their sources' times as tar clamped the
// sources (clampPycs), and gzips the result into path. Go's gzip writes
// no name and no time.
func writeLayerFile(root, path string, args []string, mtime time.Time) error {
	entries, err := os.ReadDir(root)
	if err != nil {
		return err
	}
	var list strings.Builder
	for _, e := range entries {
		list.WriteString(e.Name() + "\x00")
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := bufio.NewWriterSize(f, 1<<20)
	gz, _ := gzip.NewWriterLevel(buf, gzip.BestSpeed) // a valid level: no error
	var stderr strings.Builder
	cmd := exec.Command("tar", args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	pr, pw := io.Pipe()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(list.String()), pw, &stderr
	copied := make(chan error, 1)
	go func() {
		err := clampPycs(pr, gz, mtime)
		if err == nil {
			// tar pads its archive past the end the reader stops at.
			_, err = io.Copy(io.Discard, pr)
		}
		pr.CloseWithError(err) // on an error, tar's writes fail rather than block
		copied <- err
	}()
	err = cmd.Run()
	pw.Close()
	if err = errors.Join(err, <-copied); err != nil {
		return fmt.Errorf("tar in %s: %w\n%s", root, err, stderr.String())
	}
	if err := gz.Close(); err != nil {
		return err
	}
	if err := buf.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// builtImage is an image and its reference.
type builtImage struct {
	ref string
	img v1.Image
}

// buildImages assembles each image from nothing: OCI media types, its
// layers bottom first, linux/amd64 and the spec's configuration, no
// creation time and no history, so the same layers give the same digest.
// The result is sorted by reference.
func buildImages(spec Spec, layers map[string]v1.Layer) ([]builtImage, error) {
	var out []builtImage
	for _, s := range spec.Images {
		img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
		var adds []mutate.Addendum
		for _, n := range s.Layers {
			adds = append(adds, mutate.Addendum{Layer: layers[n], MediaType: types.OCILayer})
		}
		img, err := mutate.Append(img, adds...)
		if err != nil {
			return nil, fmt.Errorf("image %s: %w", s.Ref, err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			return nil, fmt.Errorf("image %s: %w", s.Ref, err)
		}
		cf = cf.DeepCopy()
		cf.OS, cf.Architecture = platform.OS, platform.Architecture
		cf.Config = s.Config
		cf.History = nil
		if img, err = mutate.ConfigFile(img, cf); err != nil {
			return nil, fmt.Errorf("image %s: %w", s.Ref, err)
		}
		out = append(out, builtImage{s.Ref, img})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ref < out[j].ref })
	return out, nil
}

// writeLayout writes a new layout at dir holding the images, each named
// by its reference; blobs shared between images are stored once.
func writeLayout(dir string, images []builtImage) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("layout %s: %w", dir, err)
	}
	for _, b := range images {
		err := p.AppendImage(b.img, layout.WithAnnotations(map[string]string{refAnnotation: b.ref}), layout.WithPlatform(platform))
		if err != nil {
			return fmt.Errorf("layout %s: image %s: %w", dir, b.ref, err)
		}
		d, err := b.img.Digest()
		if err != nil {
			return err
		}
		m, err := b.img.Manifest()
		if err != nil {
			return err
		}
		var size int64
		for _, l := range m.Layers {
			size += l.Size
		}
		fmt.Fprintf(os.Stderr, "ocibuild: %s %s (%d layers, %.1f MB)\n", b.ref, d, len(m.Layers), float64(size)/1e6)
	}
	return nil
}

// writeTarball writes the images, tagged with their references, as one
// archive `docker load` reads.
func writeTarball(path string, images []builtImage) error {
	refs := map[name.Reference]v1.Image{}
	for _, b := range images {
		tag, err := name.NewTag(b.ref, name.StrictValidation)
		if err != nil {
			return fmt.Errorf("tarball: %w", err)
		}
		refs[tag] = b.img
	}
	if err := tarball.MultiRefWriteToFile(path, refs); err != nil {
		return fmt.Errorf("tarball %s: %w", path, err)
	}
	return nil
}
