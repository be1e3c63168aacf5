package resourcelist

// The spool (issue 19, class 8): the encoded pieces of a SpoolSink in a
// temporary file instead of memory. The list is written sorted, so no
// piece can be written before every item is known; held in memory, the
// pieces made the function's memory grow with its whole output
// (docs/contributing/performance.md, "Memory"). In a file they cost the page cache, which the
// kernel can write back and drop, not the process's heap. The file is
// unlinked as soon as it is created, so it is gone when the process ends
// however it ends; only the open descriptor keeps it.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
)

// Spool is a temporary file for a SpoolSink's pieces; see
// NewSpoolSink.
type Spool struct {
	s *spool
}

// spool is the file, a buffered writer appending to it, and the offset
// the next piece goes to. Pieces are appended under the SpoolSink's lock
// and read back (ReadAt) only after flush.
type spool struct {
	f   SpoolFile
	w   *bufio.Writer
	off int64
}

// SpoolFile is what a spool needs of its file: an *os.File, or for the
// tests one that fails.
type SpoolFile interface {
	io.Writer
	io.ReaderAt
	io.Closer
}

// NewSpool creates the spool's file in os.TempDir and unlinks it at
// once. An error (a read-only or full temporary directory) is returned
// wrapped: the caller then keeps the pieces in memory, as before the
// spool.
func NewSpool() (*Spool, error) {
	f, err := os.CreateTemp("", "jobset-flux-spool-*")
	if err != nil {
		return nil, fmt.Errorf("creating the spool: %w", err)
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, fmt.Errorf("unlinking the spool %s: %w", f.Name(), err)
	}
	return NewSpoolOn(f), nil
}

// NewSpoolOn is a spool on f, which is written from its start (appended
// to, never sought) and closed by Release.
func NewSpoolOn(f SpoolFile) *Spool {
	return &Spool{s: &spool{f: f, w: bufio.NewWriterSize(f, 1<<20)}}
}

// add appends b and returns its offset.
func (s *spool) add(b []byte) (int64, error) {
	off := s.off
	if _, err := s.w.Write(b); err != nil {
		return 0, fmt.Errorf("writing to the spool: %w", err)
	}
	s.off += int64(len(b))
	return off, nil
}

// flush writes out what the writer buffers, so that every piece added
// can be read.
func (s *spool) flush() error {
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("writing to the spool: %w", err)
	}
	return nil
}

// read fills b from off.
func (s *spool) read(b []byte, off int64) error {
	if got, err := s.f.ReadAt(b, off); got < len(b) {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("reading the spool at %d (%d bytes): %w", off, len(b), err)
	}
	return nil
}

// copyTo copies n bytes from off to w through buf.
func (s *spool) copyTo(w io.Writer, off, n int64, buf []byte) error {
	for n > 0 {
		b := buf[:min(int64(len(buf)), n)]
		got, err := s.f.ReadAt(b, off)
		if got < len(b) {
			if err == nil || errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("reading the spool at %d (%d bytes): %w", off, len(b), err)
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
		off += int64(got)
		n -= int64(got)
	}
	return nil
}

// close closes the file, which frees it (it is unlinked).
func (s *spool) close() {
	s.f.Close()
}
