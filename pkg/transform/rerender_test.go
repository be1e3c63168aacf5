package transform_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/internal/testenv"
	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/jobset-flux/jobset-flux/pkg/resourcelist"
	"github.com/jobset-flux/jobset-flux/pkg/transform"
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// Issue 14, points 6 and 9: a re-render removes only what the function
// itself added (recognised by its whole shape), so it changes nothing:
// an unselected replicatedJob's own flux-config volume survived the
// first render and was deleted by the second; a flow-style command: []
// came back in block style; a /dev//shm mount got a second /dev/shm.
func TestRerenderChangesNothing(t *testing.T) {
	for _, tc := range []struct {
		name, annotations, spec string
		check                   func(t *testing.T, js any)
	}{
		{
			name:        "unselected replicatedJob with its own flux-config volume",
			annotations: `, flux-framework.org/replicated-jobs: w`,
			spec: `    - name: w
      template: {spec: {template: {spec: {containers: [{name: app, image: busybox, command: [run]}]}}}}
    - name: v
      template: {spec: {template: {spec: {containers: [{name: app, image: busybox, volumeMounts: [{name: flux-config, mountPath: /cfg}]}], volumes: [{name: flux-config, configMap: {name: mine}}]}}}}
`,
			check: func(t *testing.T, js any) {
				if vols := fmt.Sprint(hPod(t, js, 1)["volumes"]); !strings.Contains(vols, "mine") {
					t.Errorf("the user's flux-config volume is gone: %s", vols)
				}
			},
		},
		{
			name: "empty flow-style command",
			spec: "    - name: w\n      template: {spec: {template: {spec: {containers: [{name: app, image: busybox, command: []}]}}}}\n",
		},
		{
			name: "no command",
			spec: "    - name: w\n      template: {spec: {template: {spec: {containers: [{name: app, image: busybox}]}}}}\n",
		},
		{
			name: "own /dev//shm",
			spec: "    - name: w\n      template: {spec: {template: {spec: {containers: [{name: app, image: busybox, volumeMounts: [{name: shm, mountPath: /dev//shm}]}], volumes: [{name: shm, emptyDir: {medium: Memory}}]}}}}\n",
			check: func(t *testing.T, js any) {
				mounts := fmt.Sprint(asList(hPod(t, js, 0)["containers"])[0].(map[string]any)["volumeMounts"])
				if strings.Contains(mounts, plan.ShmVolume) {
					t.Errorf("a second /dev/shm was mounted: %s", mounts)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first, second := hTwice(t, hRLHead+hJobSetItem("js", tc.annotations, "    replicatedJobs:\n"+tc.spec))
			if !bytes.Equal(first, second) {
				t.Errorf("the second render changed the output:\n%s\n---\n%s", first, second)
			}
			if tc.check != nil {
				tc.check(t, hMeaning(t, second)["JobSet/js"])
			}
		})
	}
}

// Every golden output, given back to the function with the same seed,
// comes out byte for byte the same: kpt render's rule, over every mode
// and shape the golden cases cover (an image with its own Flux, which
// has no installer to be recognised by, included).
func TestGoldenOutputsRerenderUnchanged(t *testing.T) {
	p, err := transform.New(transform.Options{Seed: []byte("jobset-flux-test-seed-0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("testdata/golden/*/_expected.yaml")
	if err != nil || len(files) < 25 {
		t.Fatalf("golden outputs: %d files, %v", len(files), err)
	}
	for _, f := range files {
		t.Run(filepath.Base(filepath.Dir(f)), func(t *testing.T) {
			text, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			rl, err := resourcelist.Parse(text)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rl.Results {
				if r.Severity == fn.Error {
					t.Skip("the case is refused; its output is its input")
				}
			}
			rl.Results = nil
			want, err := resourcelist.Encode(rl)
			if err != nil {
				t.Fatal(err)
			}
			_, ok, got, err := hKRM(t, p, want)
			if err != nil || !ok {
				t.Fatalf("the re-render was refused (%v)", err)
			}
			if !bytes.Equal(hItemsOnly(got), hItemsOnly(want)) {
				t.Errorf("the re-render changed the output: %s", testenv.FirstDifference(hItemsOnly(got), hItemsOnly(want)))
			}
		})
	}
}
