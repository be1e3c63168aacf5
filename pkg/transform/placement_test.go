package transform

import (
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/resourcelist"

	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// TestWithPlacementOrder: the placement annotations a regenerated object
// takes over are added in key order, the same on every run.
func TestWithPlacementOrder(t *testing.T) {
	old := fn.NewEmptyKubeObject()
	for _, k := range []string{"internal.config.kubernetes.io/path", "config.kubernetes.io/path", "internal.config.kubernetes.io/index", "config.kubernetes.io/index", "team"} {
		if err := old.SetAnnotation(k, "v"); err != nil {
			t.Fatal(err)
		}
	}
	want := "annotations:\n    config.kubernetes.io/index: v\n    config.kubernetes.io/path: v\n    internal.config.kubernetes.io/index: v\n    internal.config.kubernetes.io/path: v\n"
	for range 30 {
		obj := fn.NewEmptyKubeObject()
		if err := obj.SetName("generated"); err != nil {
			t.Fatal(err)
		}
		if got := withPlacement(obj, resourcelist.NewMetaReader(nil).Read(old)).String(); !strings.Contains(got, want) {
			t.Fatalf("got\n%s\nwant the placement annotations in key order, without team:\n%s", got, want)
		}
	}
}
