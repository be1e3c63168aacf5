package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/resourcelist"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
)

// Issue 19, class 8: the output text kept in a temporary file until it is
// written (resourcelist.SpoolSink), from resourcelist.Policy.SpoolFrom of input.

// spoolFrom is the default policy with the output spooled from n bytes
// of input, and read lazily from stream bytes.
func spoolFrom(n, stream int) resourcelist.Policy {
	m := resourcelist.DefaultPolicy(settings.EnabledAnnotation)
	m.SpoolFrom, m.StreamFrom = n, stream
	return m
}

// TestSpoolCataloguesSameAsMemory: every hostile case of both
// catalogues gives the same exit code, stdout and stderr with the text
// spooled as in memory, read whole and streamed.
func TestSpoolCataloguesSameAsMemory(t *testing.T) {
	cases := append(catalogue(t), brokerCatalogue(t)...)
	for _, stream := range []int{100 << 20, 0} {
		for _, c := range cases {
			in := c.input(t)
			code, out, errs := runFnWith(t, spoolFrom(0, stream), nil, in)
			mcode, mout, merrs := runFnWith(t, spoolFrom(1<<40, stream), nil, in)
			if code != mcode || out != mout || errs != merrs {
				t.Errorf("%s (streamFrom %d): spooled: exit %d, %d bytes, stderr %q\nin memory: exit %d, %d bytes, stderr %q", c.name, stream, code, len(out), errs, mcode, len(mout), merrs)
			}
		}
	}
}

// spoolList is a list with a Flux JobSet and a Deployment.
func spoolList() string {
	return "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + indentItem(deployment) + indentItem(goodJobSet)
}

// TestSpoolUnavailable: when the temporary directory takes no file (a
// read-only container), the text stays in memory: the same output, and
// a line on stderr that says so.
func TestSpoolUnavailable(t *testing.T) {
	wcode, wout, _ := runFnWith(t, spoolFrom(1<<40, 100<<20), nil, spoolList())
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	code, out, errs := runFnWith(t, spoolFrom(0, 100<<20), nil, spoolList())
	if code != wcode || out != wout || wcode != exitOK {
		t.Fatalf("exit %d (want %d), output the same: %v", code, wcode, out == wout)
	}
	if !strings.Contains(errs, "keeping the output in memory (creating the spool") {
		t.Errorf("stderr does not say the spool could not be made: %q", errs)
	}
}

// brokenSpool is a spool file that refuses to write (writes false) or
// to read back (writes true).
type brokenSpool struct {
	f      *os.File
	writes bool
}

func (b brokenSpool) Write(p []byte) (int, error) {
	if !b.writes {
		return 0, syscall.ENOSPC
	}
	return b.f.Write(p)
}

func (b brokenSpool) ReadAt(p []byte, off int64) (int, error) { return 0, syscall.EIO }
func (b brokenSpool) Close() error                            { return b.f.Close() }

// TestSpoolFailsWithErrorResult: a spool that cannot be written (the
// disk is full) or read back (an I/O error) ends the run with exit 3 and
// a ResourceList that holds no items (their text is lost) and an
// error result naming the cause; never a panic (runFn fails on one) or a
// list missing items. The offset of the first read is not part of the cause:
// it is the spooled place of the first item in sorted order (a fresh
// clone's CI run read Deployment web at 13988 first, not offset 0).
func TestSpoolFailsWithErrorResult(t *testing.T) {
	for _, tc := range []struct {
		writes bool
		cause  string
	}{{false, "writing to the spool: no space left on device"}, {true, "reading the spool at "}} {
		mem := spoolFrom(0, 100<<20)
		mem.NewSpool = func() (*resourcelist.Spool, error) {
			f, err := os.CreateTemp(t.TempDir(), "spool")
			if err != nil {
				return nil, err
			}
			return resourcelist.NewSpoolOn(brokenSpool{f, tc.writes}), nil
		}
		code, out, errs := runFnWith(t, mem, nil, spoolList())
		if code != exitProblem {
			t.Fatalf("%s: exit %d, want %d; stderr %q", tc.cause, code, exitProblem, errs)
		}
		rl, err := resourcelist.Parse([]byte(out))
		if err != nil {
			t.Fatalf("%s: the output is not a ResourceList: %v\n%s", tc.cause, err, out)
		}
		if len(rl.Items) != 0 || len(rl.Results) == 0 {
			t.Fatalf("%s: %d items, %d results:\n%s", tc.cause, len(rl.Items), len(rl.Results), out)
		}
		last := rl.Results[len(rl.Results)-1]
		if last.Severity != "error" || !strings.Contains(last.Message, tc.cause) || !strings.Contains(errs, tc.cause) {
			t.Errorf("the error result does not name the cause %q: %+v; stderr %q", tc.cause, last, errs)
		}
	}
}
