package main

import (
	"archive/tar"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path"
	"time"
)

// A timestamp-based .pyc file (PEP 552: flags 0) records its source's
// modification time, and Python recompiles the source whenever the two
// differ. Clamping a layer's times changes the source's time but not the
// record, so every .pyc of a file newer than the clamp (a Debian package
// built after it, anything a build compiled just now) would be stale in
// the image: each Python process would compile those modules again, and a
// read-only mount (an image volume) never keeps the result. So the record
// is clamped the way tar clamps the file.

// pycHeaderLen is the 16-byte header: magic, flags, source mtime, source
// size (all little-endian 32-bit words).
const pycHeaderLen = 16

// isPyc is whether a tar entry is a compiled module in a __pycache__
// directory, the only place Python looks for one beside its source.
func isPyc(h *tar.Header) bool {
	return h.Typeflag == tar.TypeReg && path.Ext(h.Name) == ".pyc" &&
		path.Base(path.Dir(h.Name)) == "__pycache__" && h.Size >= pycHeaderLen
}

// clampPyc clamps the source time a timestamp-based .pyc header records to
// clamp, in place. Hash-based files and anything else are left alone.
func clampPyc(data []byte, clamp time.Time) {
	if len(data) < pycHeaderLen || data[2] != '\r' || data[3] != '\n' || binary.LittleEndian.Uint32(data[4:8]) != 0 {
		return
	}
	limit := uint32(clamp.Unix())
	if binary.LittleEndian.Uint32(data[8:12]) > limit {
		binary.LittleEndian.PutUint32(data[8:12], limit)
	}
}

// clampPycs copies the tar stream r to w, every entry as it is but for
// the header of each .pyc file (clampPyc).
func clampPycs(r io.Reader, w io.Writer, clamp time.Time) error {
	tr, tw := tar.NewReader(r), tar.NewWriter(w)
	var buf bytes.Buffer
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return tw.Close()
		}
		if err != nil {
			return fmt.Errorf("reading tar: %w", err)
		}
		h.Format = tar.FormatPAX
		if err := tw.WriteHeader(h); err != nil {
			return fmt.Errorf("%s: %w", h.Name, err)
		}
		if !isPyc(h) {
			if _, err := io.Copy(tw, tr); err != nil {
				return fmt.Errorf("%s: %w", h.Name, err)
			}
			continue
		}
		buf.Reset()
		if _, err := io.Copy(&buf, tr); err != nil {
			return fmt.Errorf("%s: %w", h.Name, err)
		}
		clampPyc(buf.Bytes(), clamp)
		if _, err := tw.Write(buf.Bytes()); err != nil {
			return fmt.Errorf("%s: %w", h.Name, err)
		}
	}
}
