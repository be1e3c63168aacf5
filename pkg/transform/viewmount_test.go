package transform_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/plan"
	corev1 "k8s.io/api/core/v1"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"
)

// vmJobSet is a selected JobSet of two groups, view-mount set in the
// function config (a site-wide choice) and the view image per JobSet.
func vmJobSet(annotations map[string]any) map[string]any {
	pod := func(cmd string) map[string]any {
		return map[string]any{"spec": map[string]any{"completions": 2, "template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "app", "image": "example.com/app:1", "command": []any{cmd}}}}}}}
	}
	a := map[string]any{"flux-framework.org/enabled": "true"}
	for k, v := range annotations {
		a[k] = v
	}
	return map[string]any{
		"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
		"metadata": map[string]any{"name": "js", "namespace": "hpc", "annotations": a},
		"spec": map[string]any{"replicatedJobs": []any{
			map[string]any{"name": "a", "template": pod("run")},
			map[string]any{"name": "b", "template": pod("run")},
		}},
	}
}

// TestViewMountImagePods: with view-mount image (from the function
// config), every pod of the instance has no flux-installer and no
// software emptyDir; it has the view image as a read-only image volume
// whose opt/software and opt/views are mounted at their own paths in the
// wrapped container, the install emptyDir for the broker's state, and a
// ConfigMap without init.sh whose entrypoint links the mounted view.
func TestViewMountImagePods(t *testing.T) {
	const view = "ghcr.io/converged-computing/flux-view-ubuntu:tag-noble"
	config := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "f"}, "data": map[string]any{"view-mount": "image"}}
	p := hProcessor(t)
	rl, ok, _ := hRun(t, p, hList(t, config, vmJobSet(map[string]any{"flux-framework.org/view-image": view})))
	if !ok {
		t.Fatalf("render failed:\n%s", hDump(rl))
	}
	var js jobsetapi.JobSet
	j, err := hFind(rl, "JobSet", "js").CopyToResourceNode().MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&js); err != nil {
		t.Fatal(err)
	}
	for _, rj := range js.Spec.ReplicatedJobs {
		vmCheckPod(t, rj.Name, rj.Template.Spec.Template.Spec, view)
	}
	cm := hFind(rl, "ConfigMap", "js"+plan.ConfigMapSuffix)
	if _, found, _ := cm.NestedString("data", plan.InitScript); found {
		t.Errorf("the ConfigMap holds %s, which no init container runs", plan.InitScript)
	}
	ep, _, _ := cm.NestedString("data", plan.EntrypointScript)
	for _, want := range []string{"mounted_view='" + plan.MountedViewDir + "'", `ln -sfn -- "${mounted_view}" "${view}"`, "view='" + plan.ViewDir + "'"} {
		if !strings.Contains(ep, want) {
			t.Errorf("the entrypoint lacks %q", want)
		}
	}
	if strings.Contains(ep, "flux-installer") {
		t.Errorf("the entrypoint of a mounted view mentions the flux-installer")
	}
}

func vmCheckPod(t *testing.T, rj string, pod corev1.PodSpec, view string) {
	t.Helper()
	if len(pod.InitContainers) != 0 {
		t.Errorf("%s: init containers %v, want none", rj, pod.InitContainers)
	}
	images := 0
	for _, v := range pod.Volumes {
		switch {
		case v.Name == plan.SoftwareVolume:
			t.Errorf("%s: the software emptyDir is rendered", rj)
		case v.Image != nil:
			images++
			if v.Name != plan.ViewVolume || v.Image.Reference != view || v.Image.PullPolicy != "" {
				t.Errorf("%s: image volume %+v, want %s of %s with the default pull policy", rj, v, plan.ViewVolume, view)
			}
		case v.Name == plan.InstallVolume && v.EmptyDir == nil:
			t.Errorf("%s: %s is not an emptyDir", rj, v.Name)
		}
	}
	if images != 1 {
		t.Errorf("%s: %d image volumes, want 1", rj, images)
	}
	got := map[string]string{}
	for _, m := range pod.Containers[0].VolumeMounts {
		if m.Name == plan.ViewVolume {
			if !m.ReadOnly {
				t.Errorf("%s: %s is mounted writable", rj, m.MountPath)
			}
			got[m.MountPath] = m.SubPath
		}
	}
	want := map[string]string{plan.SoftwareDir: plan.SoftwareSubPath, plan.ViewsDir: plan.ViewsSubPath}
	if len(got) != len(want) || got[plan.SoftwareDir] != want[plan.SoftwareDir] || got[plan.ViewsDir] != want[plan.ViewsDir] {
		t.Errorf("%s: view image mounts %v, want %v", rj, got, want)
	}
}

// TestViewMountErrors: view-mount image is refused, at the field to
// change and with the fix, where no flux-view image can be mounted or a
// pod already uses the paths or the volume name.
func TestViewMountErrors(t *testing.T) {
	const mountAt = "spec.replicatedJobs[0].template.spec.template.spec.containers[0].volumeMounts[0].mountPath"
	for _, tc := range []struct {
		name        string
		annotations map[string]any
		mount       string
		path, want  string
	}{
		{"view-image none", map[string]any{"flux-framework.org/view-image": "none"}, "",
			"metadata.annotations[flux-framework.org/view-mount]", "set view-mount to copy"},
		{"flux-path", map[string]any{"flux-framework.org/flux-path": "/usr"}, "",
			"metadata.annotations[flux-framework.org/view-mount]", "flux-path is set"},
		{"flux image", map[string]any{"flux-framework.org/view-image": "ghcr.io/flux-framework/flux-core:noble"}, "",
			"metadata.annotations[flux-framework.org/view-image]", "is a Flux image, not a flux-view image"},
		{"mount at the views", nil, "/opt/views", mountAt, "overlaps a path jobset-flux mounts"},
		{"mount in the software tree", nil, "/opt/software/x", mountAt, "mount it elsewhere"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := map[string]any{"flux-framework.org/view-mount": "image"}
			for k, v := range tc.annotations {
				a[k] = v
			}
			js := vmJobSet(a)
			if tc.mount != "" {
				rj := js["spec"].(map[string]any)["replicatedJobs"].([]any)[0].(map[string]any)
				pod := rj["template"].(map[string]any)["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
				pod["volumes"] = []any{map[string]any{"name": "mine", "emptyDir": map[string]any{}}}
				pod["containers"].([]any)[0].(map[string]any)["volumeMounts"] = []any{map[string]any{"name": "mine", "mountPath": tc.mount}}
			}
			rl, ok, _ := hRun(t, hProcessor(t), hList(t, nil, js))
			if ok {
				t.Fatalf("rendered:\n%s", hDump(rl))
			}
			found := false
			for _, r := range hErrors(rl) {
				found = found || r.Field != nil && r.Field.Path == tc.path && strings.Contains(r.Message, tc.want)
			}
			if !found {
				t.Errorf("no error at %s saying %q:\n%s", tc.path, tc.want, hDump(rl))
			}
		})
	}
}
