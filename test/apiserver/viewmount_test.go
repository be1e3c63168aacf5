package apiserver

import (
	"context"
	"testing"
	"time"

	"github.com/jobset-flux/jobset-flux/test/apiserver/internal/cluster"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// TestViewMountImageAccepted: with view-mount image, the real kube-apiserver
// (v1.35, ImageVolume on by default) accepts the rendered objects, each
// replicatedJob as a batch/v1 Job and its pod, for every shape of the grid
// (GPUs, interactive, non-root, fsGroup, several replicatedJobs); and the
// pod as admitted still holds the image volume and its two subPath
// mounts, read-only: nothing was dropped as a disabled field.
func TestViewMountImageAccepted(t *testing.T) {
	requireCluster(t)
	createNamespace(t, "viewmount", nil)
	for _, c := range gridCases() {
		t.Run(c.String(), func(t *testing.T) {
			js := c.jobSet()
			unstructured.SetNestedField(js, "image", "metadata", "annotations", "flux-framework.org/view-mount")
			objs := renderObject(t, js)
			checkAccepted(t, objs, "viewmount")
			for _, fjs := range fluxJobSets(objs) {
				rj := replicatedJobs(t, fjs)[0]
				pod := podFromJob(t, jobFromReplicatedJob(t, fjs, rj, 0), 0)
				checkAdmittedImageVolume(t, pod)
			}
		})
	}
}

// checkAdmittedImageVolume dry-run-creates pod and checks what the API
// server returns: the flux-view image volume, no flux-installer, and the
// wrapped container's read-only subPath mounts of it.
func checkAdmittedImageVolume(t *testing.T, pod *unstructured.Unstructured) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := env.dyn.Resource(mustGVR(t, "", "v1", "Pod")).Namespace("viewmount").Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict"})
	if err != nil {
		t.Fatalf("pod %s: %s", pod.GetName(), describeErr(err))
	}
	volumes, _, _ := unstructured.NestedSlice(out.Object, "spec", "volumes")
	ref := ""
	for _, v := range volumes {
		if m, _ := v.(map[string]any); m["name"] == "flux-view" {
			ref, _, _ = unstructured.NestedString(m, "image", "reference")
		}
	}
	if ref == "" {
		t.Errorf("the admitted pod has no flux-view image volume: %v", volumes)
	}
	inits, _, _ := unstructured.NestedSlice(out.Object, "spec", "initContainers")
	for _, c := range inits {
		if m, _ := c.(map[string]any); m["name"] == "flux-installer" {
			t.Errorf("the admitted pod has a flux-installer")
		}
	}
	containers, _, _ := unstructured.NestedSlice(out.Object, "spec", "containers")
	mounts, _, _ := unstructured.NestedSlice(containers[0].(map[string]any), "volumeMounts")
	got := map[string]string{}
	for _, v := range mounts {
		if m, _ := v.(map[string]any); m["name"] == "flux-view" && m["readOnly"] == true {
			got[m["mountPath"].(string)], _ = m["subPath"].(string)
		}
	}
	if got["/opt/software"] != "opt/software" || got["/opt/views"] != "opt/views" || len(got) != 2 {
		t.Errorf("the admitted pod's read-only flux-view mounts are %v, want opt/software at /opt/software and opt/views at /opt/views", got)
	}
}

// TestViewMountGateOff shows what README's "On a cluster without the
// feature" says: a kube-apiserver v1.35.4 started with
// --feature-gates=ImageVolume=false (the default before 1.35) admits the
// Job of a view-mount image render, but silently drops its image volume
// and the mounts of it, so its pods start without the view (and the
// entrypoint stops on the missing /opt/views/view).
func TestViewMountGateOff(t *testing.T) {
	requireCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	opts := cluster.Options{KubeAPIServer: kubeAPIServerBin(), Etcd: etcdBin(), StartTimeout: 3 * time.Minute,
		ExtraAPIServerFlags: []string{"--feature-gates=ImageVolume=false"}}
	c, err := cluster.Start(ctx, opts)
	if err != nil {
		t.Fatalf("a kube-apiserver with ImageVolume off: %v", err)
	}
	defer c.Stop()
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	js := gridCases()[0].jobSet()
	unstructured.SetNestedField(js, "image", "metadata", "annotations", "flux-framework.org/view-mount")
	fjs := fluxJobSets(renderObject(t, js))[0]
	job := jobFromReplicatedJob(t, fjs, replicatedJobs(t, fjs)[0], 0)
	out, err := dyn.Resource(mustGVR(t, "batch", "v1", "Job")).Namespace("default").Create(ctx, job, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		t.Fatalf("the Job was refused (the README says it is admitted): %s", describeErr(err))
	}
	volumes, _, _ := unstructured.NestedSlice(out.Object, "spec", "template", "spec", "volumes")
	containers, _, _ := unstructured.NestedSlice(out.Object, "spec", "template", "spec", "containers")
	mounts, _, _ := unstructured.NestedSlice(containers[0].(map[string]any), "volumeMounts")
	for _, list := range [][]any{volumes, mounts} {
		for _, v := range list {
			if m, _ := v.(map[string]any); m["name"] == "flux-view" {
				t.Errorf("ImageVolume off kept %v", m)
			}
		}
	}
	if len(volumes) == 0 || len(mounts) == 0 {
		t.Errorf("the other volumes or mounts went too: %v %v", volumes, mounts)
	}
	t.Logf("admitted with %d volumes and %d mounts, none of them flux-view", len(volumes), len(mounts))
}
