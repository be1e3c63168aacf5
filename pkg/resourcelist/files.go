package resourcelist

import (
	"bytes"
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

// Objects reads the objects of a multi-document YAML file; name says
// which in an error.
func Objects(name string, data []byte) (fn.KubeObjects, error) {
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(data), OmitReaderAnnotations: true}).Read()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
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
		return nil, fmt.Errorf("%s is %d bytes; at most %d are read", name, info.Size(), limit)
	}
	// The size can change between fstat and read: read one byte more than
	// allowed to tell.
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is more than %d bytes; at most %d are read", name, limit, limit)
	}
	return data, nil
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
