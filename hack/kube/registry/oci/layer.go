package oci

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// LayerOptions says how a directory becomes a layer tar.
type LayerOptions struct {
	// Gzip compresses the layer (media type ...tar+gzip); otherwise it is
	// stored as a plain tar.
	Gzip bool
	// MTime is the latest modification time an entry keeps: later times
	// (files a build wrote just now) become MTime, older ones (files as a
	// Debian package shipped them) stay, so Python's .pyc files still match
	// their sources. The zero time zeroes every mtime.
	MTime time.Time
	// Normalize makes every entry root-owned with mode 0755 (directories
	// and files with any execute bit) or 0644: for trees checked out of
	// git, whose owners and group/other bits depend on the clone, not on
	// the image.
	Normalize bool
}

// Layer is a layer blob in a layout: its descriptor and the digest of its
// uncompressed tar (the image configuration's diff_id).
type Layer struct {
	Descriptor
	DiffID string
	// TarSize is the size of the uncompressed tar.
	TarSize int64
}

// WriteLayer stores the directory tree at root as a layer: a tar with the
// entries in lexical order (parents first), numeric owners only, times
// clamped by opts.MTime, hard links kept as links, and the
// security.capability attribute kept (ping's cap_net_raw). The same tree
// gives the same digest.
func (l Layout) WriteLayer(root string, opts LayerOptions) (Layer, error) {
	b, err := l.newBlob()
	if err != nil {
		return Layer{}, err
	}
	ly, err := writeLayer(b, root, opts)
	if err != nil {
		b.Abort()
		return Layer{}, fmt.Errorf("layer from %s: %w", root, err)
	}
	ly.Digest, ly.Size, err = b.Commit()
	if err != nil {
		return Layer{}, err
	}
	return ly, nil
}

func writeLayer(blob io.Writer, root string, opts LayerOptions) (Layer, error) {
	buf := bufio.NewWriterSize(blob, 1<<20)
	var sink io.Writer = buf
	var gz *gzip.Writer
	ly := Layer{Descriptor: Descriptor{MediaType: MediaTypeLayer}}
	if opts.Gzip {
		gz, _ = gzip.NewWriterLevel(buf, gzip.BestSpeed) // a valid level: no error
		sink = gz
		ly.MediaType = MediaTypeLayerGzip
	}
	diff := sha256.New()
	counter := &countWriter{}
	tw := tar.NewWriter(io.MultiWriter(sink, diff, counter))
	if err := walkTree(tw, root, opts); err != nil {
		return Layer{}, err
	}
	if err := tw.Close(); err != nil {
		return Layer{}, err
	}
	if gz != nil {
		if err := gz.Close(); err != nil {
			return Layer{}, err
		}
	}
	if err := buf.Flush(); err != nil {
		return Layer{}, err
	}
	ly.DiffID = "sha256:" + hex.EncodeToString(diff.Sum(nil))
	ly.TarSize = counter.n
	return ly, nil
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// inode identifies a file for hard-link detection.
type inode struct{ dev, ino uint64 }

func walkTree(tw *tar.Writer, root string, opts LayerOptions) error {
	info, err := os.Stat(root)
	if err != nil {
		return err
	}
	if !info.IsDir() {
		return fmt.Errorf("%s is not a directory", root)
	}
	seen := map[inode]string{}
	// WalkDir visits entries in lexical order, a directory before its
	// contents: the order the layer must have to be reproducible.
	return filepath.WalkDir(root, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil || rel == "." {
			return err
		}
		return writeEntry(tw, path, filepath.ToSlash(rel), opts, seen)
	})
}

func writeEntry(tw *tar.Writer, path, name string, opts LayerOptions, seen map[inode]string) error {
	hdr, st, err := header(path, name, opts)
	if err != nil || hdr == nil {
		return err
	}
	if hdr.Typeflag == tar.TypeReg && st.Nlink > 1 {
		id := inode{uint64(st.Dev), st.Ino}
		if first, ok := seen[id]; ok {
			hdr.Typeflag, hdr.Linkname, hdr.Size = tar.TypeLink, first, 0
			return tw.WriteHeader(hdr)
		}
		seen[id] = name
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if hdr.Typeflag != tar.TypeReg {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if n, err := io.Copy(tw, f); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	} else if n != hdr.Size {
		return fmt.Errorf("%s changed size while being read", path)
	}
	return nil
}

// header is the tar header of one file, or nil for a file a layer cannot
// hold (a socket).
func header(path, name string, opts LayerOptions) (*tar.Header, *syscall.Stat_t, error) {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		return nil, nil, &fs.PathError{Op: "lstat", Path: path, Err: err}
	}
	hdr := &tar.Header{
		Name:    name,
		Mode:    int64(st.Mode & 0o7777),
		Uid:     int(st.Uid),
		Gid:     int(st.Gid),
		ModTime: clamp(time.Unix(st.Mtim.Sec, 0), opts.MTime),
	}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		hdr.Typeflag, hdr.Size = tar.TypeReg, st.Size
	case syscall.S_IFDIR:
		hdr.Typeflag, hdr.Name = tar.TypeDir, name+"/"
	case syscall.S_IFLNK:
		target, err := os.Readlink(path)
		if err != nil {
			return nil, nil, err
		}
		hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, target
	case syscall.S_IFCHR, syscall.S_IFBLK:
		hdr.Typeflag = tar.TypeChar
		if st.Mode&syscall.S_IFMT == syscall.S_IFBLK {
			hdr.Typeflag = tar.TypeBlock
		}
		hdr.Devmajor, hdr.Devminor = devNumbers(st.Rdev)
	case syscall.S_IFIFO:
		hdr.Typeflag = tar.TypeFifo
	default:
		return nil, nil, nil
	}
	if opts.Normalize {
		normalize(hdr)
	}
	if err := addCapability(hdr, path); err != nil {
		return nil, nil, err
	}
	return hdr, &st, nil
}

func clamp(t, limit time.Time) time.Time {
	if limit.IsZero() {
		return time.Unix(0, 0)
	}
	if t.After(limit) {
		return limit
	}
	return t
}

func normalize(hdr *tar.Header) {
	hdr.Uid, hdr.Gid = 0, 0
	switch {
	case hdr.Typeflag == tar.TypeSymlink:
		hdr.Mode = 0o777
	case hdr.Typeflag == tar.TypeDir || hdr.Mode&0o111 != 0:
		hdr.Mode = 0o755
	default:
		hdr.Mode = 0o644
	}
}

// devNumbers splits a Linux dev_t (glibc's encoding) into major and minor.
func devNumbers(rdev uint64) (int64, int64) {
	major := (rdev>>8)&0xfff | (rdev>>32)&^0xfff
	minor := rdev&0xff | (rdev>>12)&^0xff
	return int64(major), int64(minor)
}

// addCapability keeps a file capability (security.capability), which
// containerd applies when it unpacks the layer.
func addCapability(hdr *tar.Header, path string) error {
	if hdr.Typeflag != tar.TypeReg {
		return nil
	}
	const attr = "security.capability"
	buf := make([]byte, 256)
	n, err := syscall.Getxattr(path, attr, buf)
	switch {
	case errors.Is(err, syscall.ENODATA), errors.Is(err, syscall.ENOTSUP):
		return nil
	case err != nil:
		return fmt.Errorf("getxattr %s %s: %w", path, attr, err)
	}
	hdr.PAXRecords = map[string]string{"SCHILY.xattr." + attr: string(buf[:n])}
	return nil
}
