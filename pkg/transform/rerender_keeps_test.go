package transform_test

// Issue 19, class 2: a re-render strips only what the function added,
// wherever it added it. Before, the mounts of the function's volumes were
// removed from every container of a rendered pod (a sidecar reading the
// config lost its mount on the second render), and a list or command the
// function filled in place of a null came back elsewhere.

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/internal/testenv"
	"github.com/jobset-flux/jobset-flux/pkg/resourcelist"
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// rkItem is a selected JobSet with one replicatedJob whose pod spec is
// pod (block YAML, indented by two spaces per level from column 0).
func rkItem(name, annotations, pod string) string {
	return hJobSetItem(name, annotations, "    replicatedJobs:\n    - name: w\n      template:\n        spec:\n          completions: 2\n          template:\n            spec:\n"+
		rkIndent(pod, "              "))
}

func rkIndent(text, prefix string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		b.WriteString(prefix + line + "\n")
	}
	return b.String()
}

// rkSidecar mounts, besides a volume of its own, three of the function's
// volumes: the config, the install volume (elsewhere) and /dev/shm.
const rkSidecar = `- name: side
  image: busybox
  command: [cat]
  volumeMounts:
  - name: flux-config
    mountPath: /mnt/flux/config
    readOnly: true
  - name: flux-install
    mountPath: /x
  - name: flux-shm
    mountPath: /dev/shm
`

func TestRerenderKeepsWhatItDidNotAdd(t *testing.T) {
	for _, tc := range []struct {
		name, annotations, pod string
		// kept are texts that the second render's JobSet must still hold.
		kept []string
	}{
		{
			name:        "sidecar container mounting the function's volumes",
			annotations: ", flux-framework.org/container: app",
			pod:         "containers:\n- name: app\n  image: busybox\n  command: [run]\n" + rkSidecar,
			kept:        []string{"mountPath: /x", "name: side"},
		},
		{
			name:        "sidecar first, wrapped container second",
			annotations: ", flux-framework.org/container: app",
			pod:         "containers:\n" + rkSidecar + "- name: app\n  image: busybox\n  command: [run]\n",
			kept:        []string{"mountPath: /x"},
		},
		{
			name: "sidecar init container (restartPolicy Always) mounting the config",
			pod: "initContainers:\n- name: side\n  image: busybox\n  restartPolicy: Always\n  command: [cat]\n  volumeMounts:\n  - name: flux-config\n    mountPath: /mnt/flux/config\n    readOnly: true\n" +
				"containers:\n- name: app\n  image: busybox\n  command: [run]\n",
			kept: []string{"restartPolicy: Always"},
		},
		{
			name:        "image with its own Flux, sidecar reading the config",
			annotations: ", flux-framework.org/view-image: none, flux-framework.org/container: app",
			pod:         "containers:\n- name: app\n  image: busybox\n  command: [run]\n" + rkSidecar,
			kept:        []string{"mountPath: /x"},
		},
		{
			name: "null lists and command filled in place",
			pod:  "volumes:\ninitContainers: null\ncontainers:\n- command:\n  name: app\n  volumeMounts: ~\n  image: busybox\n  args: [run]\nhostname: x\n",
		},
		{
			name: "empty flow lists",
			pod:  "volumes: []\ninitContainers: []\ncontainers:\n- name: app\n  volumeMounts: []\n  image: busybox\n  command: [run]\n",
			kept: []string{"volumes: [{name: flux-install"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := hRLHead + rkItem("js", tc.annotations, tc.pod)
			first, second := hTwice(t, in)
			if !bytes.Equal(first, second) {
				t.Errorf("the second render changed the output: %s\n--- first\n%s", testenv.FirstDifference(second, first), first)
			}
			for _, k := range tc.kept {
				if !bytes.Contains(second, []byte(k)) {
					t.Errorf("the second render lost %q:\n%s", k, second)
				}
			}
			rkSameSidecars(t, []byte(in), second)
		})
	}
}

// rkSameSidecars checks that every container but the wrapped one (app)
// means the same in out as in in, and every init container but the
// installer.
func rkSameSidecars(t *testing.T, in, out []byte) {
	t.Helper()
	pod := func(text []byte) map[string]any { return hPod(t, hMeaning(t, text)["JobSet/js"], 0) }
	others := func(p map[string]any) []string {
		var s []string
		for _, c := range append(asList(p["initContainers"]), asList(p["containers"])...) {
			c := c.(map[string]any)
			if c["name"] == "flux-installer" || c["name"] == "app" {
				continue
			}
			s = append(s, fmt.Sprint(c))
		}
		return s
	}
	want, got := others(pod(in)), others(pod(out))
	if fmt.Sprint(want) != fmt.Sprint(got) {
		t.Errorf("the containers the function does not wrap changed:\n--- in\n%v\n--- out\n%v", want, got)
	}
}

// A change of setting between renders gives what a render of the
// original with the new setting gives: the old rendering is stripped
// exactly, wherever the settings put it.
func TestSettingChangeRerendersAsFromScratch(t *testing.T) {
	pod := "containers:\n- name: app\n  image: busybox\n  command: [run]\n- name: other\n  image: busybox\n  args: [serve]\n" + rkSidecar
	configs := map[string]string{
		"container app":         "container: app",
		"container other":       "container: other",
		"view none":             "container: app\n  view-image: none",
		"own view":              "container: other\n  view-image: example.com/view:1",
		"view mounted":          "container: app\n  view-mount: image",
		"own view mounted":      "container: other\n  view-mount: image\n  view-image: example.com/view:1",
		"shm size":              "container: app\n  shm-size: 1Gi",
		"replicated-jobs other": "replicated-jobs: v",
	}
	for _, a := range slices.Sorted(maps.Keys(configs)) {
		for _, b := range slices.Sorted(maps.Keys(configs)) {
			ca, cb := configs[a], configs[b]
			if a == b {
				continue
			}
			t.Run(a+" then "+b, func(t *testing.T) {
				items := rkItem("js", "", pod) + "    - name: v\n      template: {spec: {template: {spec: {containers: [{name: app, image: busybox, command: [x]}]}}}}\n"
				p := hProcessor(t)
				fromScratch := rkRender(t, p, hRLHead+items, cb)
				onceA := rkRender(t, p, hRLHead+items, ca)
				rl, err := resourcelist.Parse(onceA)
				if err != nil {
					t.Fatal(err)
				}
				rl.Results = nil
				text, err := resourcelist.Encode(&fn.ResourceList{Items: rl.Items})
				if err != nil {
					t.Fatal(err)
				}
				thenB := rkRender(t, p, string(text), cb)
				if !bytes.Equal(rkJobSet(t, thenB), rkJobSet(t, fromScratch)) {
					t.Errorf("rendering %s over %s differs from rendering %s: %s\n--- over\n%s", b, a, b, testenv.FirstDifference(rkJobSet(t, thenB), rkJobSet(t, fromScratch)), rkJobSet(t, thenB))
				}
			})
		}
	}
}

// rkRender renders a ResourceList's text with a ConfigMap function config
// whose data is data (YAML lines indented by two spaces).
func rkRender(t *testing.T, p interface {
	Process(*fn.ResourceList) (bool, error)
}, list, data string) []byte {
	t.Helper()
	list = strings.TrimSuffix(list, "\n") + "\nfunctionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: f}\n  data:\n  " + data + "\n"
	rl, err := resourcelist.Parse([]byte(list))
	if err != nil {
		t.Fatalf("%v\n%s", err, list)
	}
	ok, err := p.Process(rl)
	if err != nil || !ok {
		t.Fatalf("render refused (%v): %s", err, hDump(rl))
	}
	out, err := resourcelist.Encode(&fn.ResourceList{Items: rl.Items})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// rkJobSet returns the text of the JobSet item of a ResourceList's text.
func rkJobSet(t *testing.T, text []byte) []byte {
	t.Helper()
	rl, err := resourcelist.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range rl.Items {
		if it.GetKind() == "JobSet" {
			return []byte(it.String())
		}
	}
	t.Fatalf("no JobSet in\n%s", text)
	return nil
}

// A JobSet rendered once and then disabled (enabled: "false") loses
// everything the function added: its generated ConfigMap and Secret are
// pruned, and its pods must not mount them nor run the entrypoint.
// Before, the rendering stayed.
func TestDisabledJobSetIsUnrendered(t *testing.T) {
	pod := "containers:\n- name: app\n  image: busybox\n  command: [run]\n" + rkSidecar
	in := hRLHead + rkItem("js", ", flux-framework.org/container: app", pod)
	p := hProcessor(t)
	_, ok, once, err := hKRM(t, p, []byte(in))
	if err != nil || !ok {
		t.Fatalf("first render refused: %v", err)
	}
	disabled := bytes.Replace(hItemsOnly(once), []byte(`flux-framework.org/enabled: "true"`), []byte(`flux-framework.org/enabled: "false"`), 1)
	rl, ok, out, err := hKRM(t, p, disabled)
	if err != nil || !ok {
		t.Fatalf("the render of the disabled JobSet was refused (%v): %s", err, hDump(rl))
	}
	js := rkJobSet(t, out)
	for _, s := range []string{"flux-installer", "entrypoint.sh", "mountPath: /mnt/flux/install", "secretName:", "configMap:"} {
		if bytes.Contains(js, []byte(s)) {
			t.Errorf("the disabled JobSet still holds %q:\n%s", s, js)
		}
	}
	rkSameSidecars(t, []byte(in), out)
	if c := usContainer(hMeaning(t, out)["JobSet/js"].(map[string]any)); fmt.Sprint(c) != "map[command:[run] image:busybox name:app]" {
		t.Errorf("the wrapped container is not as written: %v", c)
	}
	if !strings.Contains(hDump(rl), "removed the Flux init container") {
		t.Errorf("no info says what was removed: %s", hDump(rl))
	}
	_, _, again, err := hKRM(t, p, hItemsOnly(out))
	if err != nil || !bytes.Equal(hItemsOnly(again), hItemsOnly(out)) {
		t.Errorf("rendering the disabled JobSet again changed it (%v): %s", err, testenv.FirstDifference(hItemsOnly(again), hItemsOnly(out)))
	}
}
