package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// The flux-installer's copy: the view into the flux-install emptyDir (its
// view/ directory; the entrypoint later adds run/, the broker's small
// private state, which is not the copy) and the Spack tree into
// flux-software. Both are disk-backed emptyDirs under the kubelet's pods
// directory.
var copyDirs = []string{"flux-install/view", "flux-software"}

// diskUsage is what one pod's view copy wrote to the node's disk.
type diskUsage struct {
	Pod       string `json:"pod"`
	Bytes     int64  `json:"bytes"`     // apparent size (du -sb)
	Allocated int64  `json:"allocated"` // blocks on disk (du -sB1)
	Files     int    `json:"files"`     // entries: files, links, directories
}

// measure walks dirs like du: every inode once, symlinks not followed.
func measure(dirs ...string) (diskUsage, error) {
	var u diskUsage
	seen := map[[2]uint64]bool{}
	for _, dir := range dirs {
		if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
			continue // view-mount image: no software emptyDir
		}
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			st, ok := info.Sys().(*syscall.Stat_t)
			if !ok {
				return fmt.Errorf("%s: no stat data", path)
			}
			key := [2]uint64{uint64(st.Dev), st.Ino}
			if seen[key] {
				return nil
			}
			seen[key] = true
			u.Files++
			u.Bytes += info.Size()
			u.Allocated += st.Blocks * 512
			return nil
		})
		if err != nil {
			return u, fmt.Errorf("measure %s: %w", dir, err)
		}
	}
	return u, nil
}

// disk measures every pod's view copy in the kubelet's pods directory
// (<pods>/<uid>/volumes/kubernetes.io~empty-dir/<volume>): in image mode
// only the view link, and the pod's image volume is measured by
// imageVolumes. It must run while the pods run: the kubelet removes a
// pod's emptyDirs as soon as the pod has terminated.
func (b *bench) disk(t *tracker) ([]diskUsage, error) {
	var out []diskUsage
	for name, uid := range t.uids {
		base := filepath.Join(b.kubeletDir, uid, "volumes", "kubernetes.io~empty-dir")
		if _, err := os.Stat(base); err != nil {
			return nil, fmt.Errorf("pod %s: its emptyDirs: %w (is -kubelet-pods the kubelet's pods directory?)", name, err)
		}
		var dirs []string
		for _, d := range copyDirs {
			dirs = append(dirs, filepath.Join(base, d))
		}
		u, err := measure(dirs...)
		if err != nil {
			return nil, fmt.Errorf("pod %s: %w", name, err)
		}
		u.Pod = name
		out = append(out, u)
	}
	return out, nil
}

// imageVolumes measures the writable layer of every image volume the
// cluster's containerd has mounted (view-mount image): each is an overlay
// of the view image's unpacked layers, shared by every pod on the node,
// under an upper directory of its own per pod, which is all a pod adds to
// the node's disk for its view. The mounts live in containerd's private
// mount namespace: its mountinfo names them, under the CRI's
// image-volumes state directory, with their upperdir.
func (b *bench) imageVolumes() ([]diskUsage, error) {
	pid, err := os.ReadFile(filepath.Join(b.stateDir, "run", "containerd.pid"))
	if err != nil {
		return nil, fmt.Errorf("containerd's PID: %w", err)
	}
	info, err := os.ReadFile(filepath.Join("/proc", strings.TrimSpace(string(pid)), "mountinfo"))
	if err != nil {
		return nil, fmt.Errorf("containerd's mounts: %w", err)
	}
	var out []diskUsage
	for _, m := range imageVolumeMounts(string(info)) {
		u, err := measure(m.upper)
		if err != nil {
			return nil, err
		}
		u.Pod = m.target
		out = append(out, u)
	}
	return out, nil
}

// overlayMount is one image volume: where it is mounted, its upperdir.
type overlayMount struct{ target, upper string }

// imageVolumeMounts picks the overlay mounts under an image-volumes
// directory out of a mountinfo text (proc(5): the mount point is the fifth
// field; after the " - " separator come the type, the source and the
// superblock options, upperdir among them).
func imageVolumeMounts(mountinfo string) []overlayMount {
	var out []overlayMount
	for _, line := range strings.Split(mountinfo, "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		fields, tail := strings.Fields(pre), strings.Fields(post)
		if !ok || len(fields) < 5 || len(tail) < 3 || tail[0] != "overlay" || !strings.Contains(fields[4], "/image-volumes/") {
			continue
		}
		for _, opt := range strings.Split(tail[2], ",") {
			if dir, ok := strings.CutPrefix(opt, "upperdir="); ok {
				out = append(out, overlayMount{target: fields[4], upper: dir})
			}
		}
	}
	return out
}
