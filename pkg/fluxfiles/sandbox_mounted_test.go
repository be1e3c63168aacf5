package fluxfiles

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
)

// mountedPlan is a two-pod plan with view-mount: image.
func mountedPlan() *plan.Plan {
	return newPlan([]group{{"w", 1, 2, "js-w-0-[0-1]"}}, func(p *plan.Plan) { p.Settings.ViewMount = settings.ViewMountImage })
}

// TestSandboxMountedView runs rank 0's entrypoint of view-mount: image as
// a non-root user, with the view image's software and views mounted
// read-only at their own paths and no init container run: it links the
// mounted view where copy mode's copy would be, runs flux from there with
// the image's own environment, and starts the broker as in copy mode.
func TestSandboxMountedView(t *testing.T) {
	requireSandbox(t)
	p := mountedPlan()
	pd := newPod(t, p, 0o444, fsGroup)
	id := []string{"--reuid", fmt.Sprint(nonRoot), "--regid", fmt.Sprint(nonRoot), "--groups", fmt.Sprint(fsGroup)}
	r := pd.runAs("mounted", id, rankEnv(0, 0), "hostname")
	if r.code != 0 || r.start == nil {
		t.Fatalf("entrypoint exited %d, flux start ran: %v:\n%s", r.code, r.start != nil, r.stderr)
	}
	if target, err := os.Readlink(filepath.Join(pd.install, "view")); err != nil || target != plan.MountedViewDir {
		t.Errorf("%s is %q (%v), want a link to %s", plan.ViewDir, target, err, plan.MountedViewDir)
	}
	if names := dirNames(t, pd.software); len(names) != 0 {
		t.Errorf("something was copied into the software emptyDir: %v", names)
	}
	checkEnvironment(t, r.start, false)
	if r.start.cert != fmt.Sprintf("400 %d", nonRoot) {
		t.Errorf("at flux start the certificate copy was %q, want mode 400 owned by uid %d", r.start.cert, nonRoot)
	}
	want := append(append(expectedStart(p), plan.ViewDir+"/bin/flux"), expectedRun(p, []string{"hostname"})...)
	if !slices.Equal(r.start.argv, want) {
		t.Errorf("flux start argv\n got %q\nwant %q", r.start.argv, want)
	}
	checkLog(t, r.stderr, "jobset-flux: ", "using the mounted Flux view in /mnt/flux/install/view")
	// A second run of the container (the pod's emptyDir kept) replaces
	// the link instead of failing on it.
	if r := pd.runAs("mounted", id, rankEnv(1, 0), "hostname"); r.code != 0 {
		t.Errorf("a second run exited %d:\n%s", r.code, r.stderr)
	}
}

// TestSandboxMountedWithoutView: an image volume without the flux-view
// layout stops the pod with the fix, before any broker starts.
func TestSandboxMountedWithoutView(t *testing.T) {
	requireSandbox(t)
	pd := newPod(t, mountedPlan(), 0o444, 0)
	if err := os.Remove(filepath.Join(pd.image, "views/view")); err != nil {
		t.Fatal(err)
	}
	r := pd.runAs("mounted", nil, rankEnv(0, 0), "hostname")
	if r.code == 0 || r.start != nil {
		t.Fatalf("the entrypoint went on without a view (exit %d):\n%s", r.code, r.stderr)
	}
	checkLog(t, r.stderr, "jobset-flux: ", "error: no Flux view at /opt/views/view in the mounted view image: view-mount image needs a flux-view image")
}
