package plan

import (
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/jobset/jobsettest"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
)

// TestTerminationMessagePathPlanned: a wrapped container's own
// terminationMessagePath reaches the plan, for the entrypoint to write
// there; the kubelet's default, written or not, plans nothing.
func TestTerminationMessagePathPlanned(t *testing.T) {
	for path, want := range map[string]string{"": "", "/dev/termination-log": "", "/tmp/why": "/tmp/why"} {
		rj := w()
		if path != "" {
			rj.ContainerField("terminationMessagePath", path)
		}
		p, found := build(read(t, jobsettest.New("js").Jobs(rj).YAML()), settings.Defaults())
		if p == nil {
			t.Fatalf("%q: refused: %v", path, found)
		}
		if got := p.Groups[0].TerminationLog; got != want {
			t.Errorf("terminationMessagePath %q: planned %q, want %q", path, got, want)
		}
	}
}
