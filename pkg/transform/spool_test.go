package transform_test

// Issue 19, class 8: the Compactor's pieces in a temporary file
// (resourcelist.NewSpool). The command spools only large inputs
// (fn/stream.go); the tests spool every list they compact, so that the
// golden lists, the kpt packages, the hostile cases and FuzzStream all
// write through the file and must give the bytes of Process + Write.

import (
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/resourcelist"
)

// testSpool is a new spool; the Compactor it is given closes it.
func testSpool(t testing.TB) *resourcelist.Spool {
	t.Helper()
	sp, err := resourcelist.NewSpool()
	if err != nil {
		t.Fatalf("NewSpool: %v", err)
	}
	return sp
}
