package transform_test

// Issue 19, class 8: a SpoolSink's pieces in a temporary file
// (resourcelist.NewSpool). The command spools only large inputs
// (fn/memory.go); the tests spool every SpoolSink, so that the golden
// lists, the kpt packages, the hostile cases and FuzzStream all write
// through the file and must give the bytes of the in-memory pair.

import (
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/resourcelist"
)

// testSpool is a new spool; the SpoolSink it is given closes it.
func testSpool(t testing.TB) *resourcelist.Spool {
	t.Helper()
	sp, err := resourcelist.NewSpool()
	if err != nil {
		t.Fatalf("NewSpool: %v", err)
	}
	return sp
}
