package resourcelist

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// endless is a reader that never ends, like /dev/zero through a pipe.
type endless struct{ read int64 }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	e.read += int64(len(p))
	return len(p), nil
}

// Issue 19, class 8: stdin is read up to the limit and no further, and
// the error names the limit and how to raise it.
func TestReadLimited(t *testing.T) {
	for _, tc := range []struct {
		name  string
		input string
		limit int64
		ok    bool
	}{
		{"empty", "", 10, true},
		{"under", "abc", 10, true},
		{"exactly the limit", strings.Repeat("x", 1000), 1000, true},
		{"one byte over", strings.Repeat("x", 1001), 1000, false},
		{"far over", strings.Repeat("x", 1<<20), 1000, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// iotest-like: a reader that is not an *os.File gives no size.
			data, err := ReadLimited(io.MultiReader(strings.NewReader(tc.input)), "stdin", tc.limit, "raise it with --max-input")
			switch {
			case tc.ok && (err != nil || string(data) != tc.input):
				t.Errorf("got %d bytes, %v; want the %d bytes", len(data), err, len(tc.input))
			case !tc.ok && (err == nil || !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "at most 1000 are read; raise it with --max-input")):
				t.Errorf("got %d bytes, %v; want the limit error", len(data), err)
			}
		})
	}
	e := &endless{}
	if _, err := ReadLimited(e, "stdin", 1<<20, ""); !errors.Is(err, ErrTooLarge) {
		t.Errorf("an endless stdin: %v", err)
	}
	if e.read > 1<<20+1 {
		t.Errorf("read %d bytes of an endless stdin with a limit of %d", e.read, 1<<20)
	}
}

// A regular file on stdin is refused by its size, before it is read, and
// read from its offset on otherwise.
func TestReadLimitedRegularFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.yaml")
	if err := os.WriteFile(path, []byte(strings.Repeat("y", 5000)), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := ReadLimited(f, "stdin", 4000, ""); err == nil || !strings.Contains(err.Error(), "stdin is 5000 bytes; at most 4000 are read") {
		t.Errorf("over the limit: %v", err)
	}
	if off, _ := f.Seek(0, io.SeekCurrent); off != 0 {
		t.Errorf("read %d bytes before refusing", off)
	}
	if _, err := f.Seek(2000, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	data, err := ReadLimited(f, "stdin", 4000, "")
	if err != nil || len(data) != 3000 {
		t.Errorf("from offset 2000: %d bytes, %v; want 3000", len(data), err)
	}
}
