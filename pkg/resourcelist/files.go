package resourcelist

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"syscall"

	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/kio"
)

// Standalone mode: the objects of plain YAML files (or of stdin) make the
// list's items, and a config file its functionConfig.

// YAMLFiles returns path when it is a file, or the *.yaml and *.yml files
// directly in it, sorted, when it is a directory.
func YAMLFiles(path string) ([]string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return []string{path}, nil
	}
	var files []string
	for _, pattern := range []string{"*.yaml", "*.yml"} {
		m, err := filepath.Glob(filepath.Join(path, pattern))
		if err != nil {
			return nil, err
		}
		files = append(files, m...)
	}
	sort.Strings(files)
	return files, nil
}

// Objects reads the objects of a multi-document YAML file, each List
// document as its items (unwrapLists); name says which in an error.
func Objects(name string, data []byte) (fn.KubeObjects, error) {
	r := &kio.ByteReader{Reader: bytes.NewReader(data), OmitReaderAnnotations: true}
	nodes, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	nodes = unwrapLists(r, nodes)
	for _, n := range nodes {
		// As Parse does: {a} must not come out as an empty string.
		yamltree.SpellEmptyNulls(n.YNode())
	}
	return fn.MoveToKubeObjects(nodes), nil
}

// ReadFile reads a regular file of at most limit bytes. Anything else is
// refused before it is read: /dev/zero or /dev/urandom would be read until
// memory runs out, and a FIFO with no writer would block forever (it is
// opened without blocking, and refused once fstat shows what it is).
func ReadFile(name string, limit int64) ([]byte, error) {
	return ReadFileHint(name, limit, "")
}

// ErrTooLarge is wrapped by the errors of ReadFileHint and ReadLimited
// for an input over the limit.
var ErrTooLarge = errors.New("input over the size limit")

// tooLarge is the error for an input over the limit: its message says how
// large the input is and how to raise the limit; it wraps ErrTooLarge.
type tooLarge struct{ msg string }

func (e *tooLarge) Error() string { return e.msg }
func (e *tooLarge) Unwrap() error { return ErrTooLarge }

func overLimit(format string, args ...any) error {
	return &tooLarge{fmt.Sprintf(format, args...)}
}

// ReadFileHint is ReadFile whose error for a file over the limit ends with
// hint (how to raise the limit), when not empty.
func ReadFileHint(name string, limit int64, hint string) ([]byte, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (it is a %s); give the path of a file", name, fileType(info.Mode()))
	}
	if info.Size() > limit {
		return nil, overLimit("%s is %d bytes; at most %d are read%s", name, info.Size(), limit, hintSuffix(hint))
	}
	// The size can change between fstat and read: ReadLimited reads one
	// byte more than allowed to tell.
	return ReadLimited(f, name, limit, hint)
}

// ReadLimited reads r to its end, or fails once it has given more than
// limit bytes: stdin has no size to check first, and a producer that
// never stops must not make the function hold all it writes. When r is a
// regular file (stdin redirected from one), its size decides at once,
// before anything is read, and sizes the buffer. Otherwise the buffer
// doubles up to limit+1 bytes and no further, so refusing an endless
// input costs at most about one and a half times the limit.
func ReadLimited(r io.Reader, name string, limit int64, hint string) ([]byte, error) {
	size := int64(64 << 10)
	if f, ok := r.(*os.File); ok {
		if rest, known := remaining(f); known {
			if rest > limit {
				return nil, overLimit("%s is %d bytes; at most %d are read%s", name, rest, limit, hintSuffix(hint))
			}
			size = rest + 1 // one more, to see the end (or growth since)
		}
	}
	buf := make([]byte, 0, min(size, limit+1))
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) > limit {
				return nil, overLimit("%s is more than %d bytes; at most %d are read%s", name, limit, limit, hintSuffix(hint))
			}
			grown := make([]byte, len(buf), min(2*int64(cap(buf))+1, limit+1))
			copy(grown, buf)
			buf = grown
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", name, err)
		}
	}
}

// remaining is how many bytes a regular file holds from its offset on.
func remaining(f *os.File) (int64, bool) {
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		return 0, false
	}
	off, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0, false
	}
	return max(info.Size()-off, 0), true
}

func hintSuffix(hint string) string {
	if hint == "" {
		return ""
	}
	return "; " + hint
}

func fileType(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "FIFO"
	case m&os.ModeCharDevice != 0:
		return "character device"
	case m&os.ModeDevice != 0:
		return "device"
	case m&os.ModeSocket != 0:
		return "socket"
	case m.IsDir():
		return "directory"
	}
	return "special file"
}
