package resourcelist

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// Issue 19, class 8: a SpoolSink's pieces in a temporary file. Every
// way the file can fail ends in an error that names the item and wraps
// the cause, never a panic, and nothing is written when the failure is
// known before the first byte (Close).

// spoolList is a list of n ConfigMaps, each with a value of size bytes,
// and its text as Write writes it.
func spoolList(t *testing.T, n, size int) (string, []byte) {
	t.Helper()
	var b strings.Builder
	b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	for i := range n {
		// Written in reverse order, so that sortItems moves every item.
		fmt.Fprintf(&b, "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: cm-%03d\n  data:\n    v: %s\n", n-i, strings.Repeat("x", size))
	}
	rl, err := Parse([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	sortItems(rl.Items)
	var want bytes.Buffer
	if err := Write(&want, rl); err != nil {
		t.Fatal(err)
	}
	return b.String(), want.Bytes()
}

// spoolPut puts every item of in into s.
func spoolPut(t *testing.T, in string, s Sink) {
	t.Helper()
	rl, err := Parse([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	rc := NewMetaReader(nil)
	for i, it := range rl.Items {
		s.Put(i, rc.Read(it), it)
	}
}

// spoolWrite puts every item of in into s and writes it.
func spoolWrite(t *testing.T, in string, s Sink) ([]byte, error) {
	t.Helper()
	spoolPut(t, in, s)
	var out bytes.Buffer
	err := s.Write(&out, nil, nil)
	return out.Bytes(), err
}

// TestSpoolSameBytes: through the spool's file (pieces smaller and
// larger than its 1 MiB buffer and the 64 KiB copy buffer) the bytes are
// Write's, and the file is gone from the temporary directory at once.
func TestSpoolSameBytes(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	for _, size := range []int{10, 70 << 10, 3 << 20} {
		in, want := spoolList(t, 5, size)
		sp, err := NewSpool()
		if err != nil {
			t.Fatal(err)
		}
		if left, _ := os.ReadDir(dir); len(left) != 0 {
			t.Fatalf("the spool's file is still in %s: %v", dir, left)
		}
		got, err := spoolWrite(t, in, NewSpoolSink(sp))
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("size %d: %v; spooled output differs from Write's (%d vs %d bytes)", size, err, len(got), len(want))
		}
		if got, err := spoolWrite(t, in, NewMemorySink()); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("size %d: %v; a MemorySink's output differs from Write's (%d vs %d bytes)", size, err, len(got), len(want))
		}
	}
}

// TestSpoolCannotCreate: a temporary directory that takes no file is an
// error that says so and wraps the cause (the command then keeps the
// text in memory).
func TestSpoolCannotCreate(t *testing.T) {
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	sp, err := NewSpool()
	if sp != nil || err == nil || !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "creating the spool") {
		t.Fatalf("NewSpool in a missing directory: %v, %v", sp, err)
	}
}

// failingFile is a spool file that fails to write after writable bytes,
// or to read from failReadAt on, or reads short; it wraps a real one.
type failingFile struct {
	f          *os.File
	writable   int64
	written    int64
	failReadAt int64 // -1: reads succeed
	short      bool
	closed     bool
}

var errDisk = syscall.ENOSPC

func newFailingFile(t *testing.T) *failingFile {
	f, err := os.CreateTemp(t.TempDir(), "spool")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return &failingFile{f: f, writable: 1 << 40, failReadAt: -1}
}

func (ff *failingFile) Write(b []byte) (int, error) {
	if ff.written+int64(len(b)) > ff.writable {
		return 0, errDisk
	}
	ff.written += int64(len(b))
	return ff.f.Write(b)
}

func (ff *failingFile) ReadAt(b []byte, off int64) (int, error) {
	switch {
	case ff.failReadAt >= 0 && off+int64(len(b)) > ff.failReadAt:
		return 0, syscall.EIO
	case ff.short:
		n, _ := ff.f.ReadAt(b[:len(b)/2], off)
		return n, io.EOF
	}
	return ff.f.ReadAt(b, off)
}

func (ff *failingFile) Close() error {
	ff.closed = true
	return nil
}

// TestSpoolWriteFails: a spool that cannot be written, when a piece is
// added (larger than the buffer) or when the buffer is flushed at Close
// (small pieces), makes Write fail before it writes a byte,
// with the item and the cause; the file is closed.
func TestSpoolWriteFails(t *testing.T) {
	for _, size := range []int{10, 3 << 20} {
		in, _ := spoolList(t, 3, size)
		ff := newFailingFile(t)
		ff.writable = 0
		got, err := spoolWrite(t, in, NewSpoolSink(NewSpoolOn(ff)))
		if err == nil || !errors.Is(err, errDisk) || !strings.Contains(err.Error(), "writing to the spool") || len(got) != 0 {
			t.Fatalf("size %d: Write: %v, wrote %d bytes", size, err, len(got))
		}
		if size > 1<<20 && !strings.Contains(err.Error(), "ConfigMap cm-") {
			t.Errorf("the error does not name the item: %v", err)
		}
		if !ff.closed {
			t.Error("the spool's file was not closed")
		}
	}
}

// TestSpoolReadFails: a spool that cannot be read back (an I/O error, or
// a short read) makes Write fail with the item and the cause.
func TestSpoolReadFails(t *testing.T) {
	in, _ := spoolList(t, 3, 100)
	for _, short := range []bool{false, true} {
		ff := newFailingFile(t)
		if short {
			ff.short = true
		} else {
			ff.failReadAt = 0
		}
		_, err := spoolWrite(t, in, NewSpoolSink(NewSpoolOn(ff)))
		want := error(syscall.EIO)
		if short {
			want = io.ErrUnexpectedEOF
		}
		if err == nil || !errors.Is(err, want) || !strings.Contains(err.Error(), "reading the spool") || !strings.Contains(err.Error(), "ConfigMap cm-") {
			t.Fatalf("short %v: Write: %v", short, err)
		}
		if !ff.closed {
			t.Error("the spool's file was not closed")
		}
	}
}

// TestSpoolEdit: Edit reads a piece back from the spool and writes the
// edited one to it; a read error is returned with the cause. A
// MemorySink edits its tree.
func TestSpoolEdit(t *testing.T) {
	in, _ := spoolList(t, 2, 100)
	for _, fail := range []bool{false, true} {
		ff := newFailingFile(t)
		s := NewSpoolSink(NewSpoolOn(ff))
		spoolPut(t, in, s)
		if fail {
			ff.failReadAt = 0
		}
		err := s.Edit(0, func(o *fn.KubeObject) { o.SetAnnotation("moved", "yes") })
		if fail {
			if err == nil || !errors.Is(err, syscall.EIO) {
				t.Fatalf("Edit on a failing spool: %v", err)
			}
			s.Release()
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := s.Write(&out, nil, nil); err != nil || !strings.Contains(out.String(), "moved: yes") {
			t.Fatalf("after Edit: %v\n%s", err, out.String())
		}
	}
	for _, s := range []Sink{NewSpoolSink(nil), NewMemorySink()} {
		if err := s.Edit(3, func(*fn.KubeObject) {}); err == nil || !strings.Contains(err.Error(), "no item was put at 3") {
			t.Errorf("%T: Edit where nothing was put: %v", s, err)
		}
		s.Release()
	}
}

// stubItem is a JobSet as kpt hands it over, annotated with its file.
const stubItem = `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: jobset.x-k8s.io/v1alpha2
  kind: JobSet
  metadata:
    name: cfd-00000
    namespace: team-14
    labels:
      app.kubernetes.io/name: cfd-00000
      app.kubernetes.io/part-of: team-14
    annotations:
      flux-framework.org/enabled: "true"
      flux-framework.org/tasks-per-node: "2"
      config.kubernetes.io/index: '0'
      config.kubernetes.io/path: team-14/cfd-00000/jobset.yaml
      internal.config.kubernetes.io/index: '0'
      internal.config.kubernetes.io/path: team-14/cfd-00000/jobset.yaml
  spec:
    replicatedJobs: []
`

// TestRecordSize: what an item put in a SpoolSink costs once its text is
// spooled (the part of memory that grows with the list), with a filter
// like pkg/transform's: apiVersion, kind, name, namespace, the Flux
// annotation and the four placement annotations. 10,000 copies of a
// kpt-placed JobSet are put and the live heap measured once they are
// encoded and their trees gone: the record, its pairs and the sink's
// entry. The bound holds it near the figure of docs/contributing/performance.md
// ("Memory").
func TestRecordSize(t *testing.T) {
	rl, err := Parse([]byte(stubItem))
	if err != nil {
		t.Fatal(err)
	}
	keep := func(field, key string) bool {
		return field == "annotations" && (key == "flux-framework.org/enabled" || strings.Contains(key, "config.kubernetes.io/"))
	}
	sp, err := NewSpool()
	if err != nil {
		t.Fatal(err)
	}
	s := NewSpoolSink(sp)
	defer s.Release()
	rc := NewMetaReader(keep)
	const n = 10000
	before := liveHeap()
	records := make([]*Meta, n)
	for i := range records {
		obj := rl.Items[0].Copy()
		records[i] = rc.Read(obj)
		s.Put(i, records[i], obj)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// The copies' trees are garbage now: what is left is the records,
	// the entries (and the slices that hold them, 8 bytes each).
	per := float64(liveHeap()-before) / n
	if r := records[n-1]; r.Annotation("internal.config.kubernetes.io/path") != "team-14/cfd-00000/jobset.yaml" || records[0].Namespace != "team-14" {
		t.Fatalf("the record lost its metadata: %v", r.Annotations())
	}
	t.Logf("an item put of a kpt-placed JobSet takes %.0f bytes", per)
	if per > 500 {
		t.Errorf("an item put takes %.0f bytes, over 500", per)
	}
}
