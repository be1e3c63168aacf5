package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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
// (<pods>/<uid>/volumes/kubernetes.io~empty-dir/<volume>). It must run
// while the pods run: the kubelet removes a pod's emptyDirs as soon as
// the pod has terminated.
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
