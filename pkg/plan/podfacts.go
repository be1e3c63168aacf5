package plan

import (
	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/jobset"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
	"k8s.io/apimachinery/pkg/api/resource"
)

// What the entrypoint's pod needs of the user's pod: the flux-installer's
// resources and user, the startup probe, and the pod fields under which
// the entrypoint cannot work as the user expects.

// ViewCopySize is how much ephemeral storage the flux-installer's copy of
// the default view image takes (docs/contributing/faults.md says how it was measured):
// the flux-install and flux-software emptyDirs count against the pod's
// ephemeral-storage limits.
var ViewCopySize = resource.MustParse("1Gi")

// installerOf derives a group's flux-installer from its pod.
func installerOf(pod *jobset.Pod, c *jobset.Container) Installer {
	in := Installer{Limits: c.Compute.Limits, Requests: c.Compute.Requests.Or(c.Compute.Limits)}
	own := c.Identity.RunAsNonRoot != nil && *c.Identity.RunAsNonRoot
	podWide := pod.Identity.RunAsNonRoot != nil && *pod.Identity.RunAsNonRoot
	in.RunAsNonRoot = own && !podWide
	switch {
	case own:
		in.NonRootPath = c.Path + ".securityContext.runAsNonRoot"
	case podWide:
		in.NonRootPath = pod.Path + ".securityContext.runAsNonRoot"
	}
	if (own || podWide) && pod.Identity.RunAsUser == nil {
		uid := int64(InstallerUID)
		if c.Identity.RunAsUser != nil && *c.Identity.RunAsUser != 0 {
			uid = *c.Identity.RunAsUser
		}
		in.RunAsUser = &uid
	}
	return in
}

// checkPodFacts warns where the user's pod keeps the entrypoint from
// working as the user expects: a read-only /dev/shm kept, their own
// startup probe replacing the one that waits for the broker, and an
// ephemeral-storage limit the view's copy does not fit in.
func checkPodFacts(js *jobset.JobSet, s *settings.Settings, groups []Group) finding.List {
	var found finding.List
	for _, g := range groups {
		rj := &js.ReplicatedJobs[g.Index]
		c := &rj.Pod.Containers[g.Container]
		for _, m := range c.Mounts {
			if m.ReadOnly && cleanPath(m.MountPath) == ShmDir {
				found.Warnf(m.Path+".readOnly", "is true: the container's own /dev/shm is kept read-only, so MPI and any library that shares memory between tasks fails; remove readOnly, or remove the mount and jobset-flux mounts a writable one (shm-size)")
			}
		}
		if c.StartupProbe {
			found.Warnf(c.Path+".startupProbe", "is kept: jobset-flux adds none, so the pod is Ready when your probes pass, not when its broker has joined the instance (Kueue's waitForPodsReady and kubectl wait see the container, not the instance)")
		}
		if !imageFlux(s) && s.ViewMount != settings.ViewMountImage {
			found.Add(checkEphemeral(&rj.Pod, s.ViewCopyMedium))
		}
		if in := installerOf(&rj.Pod, c); in.RunAsUser != nil {
			found.Infof(in.NonRootPath, "the flux-installer init container runs as uid %d: %s is true without a runAsUser (the view image's own user is root, which the kubelet would refuse to start)", *in.RunAsUser, in.NonRootPath)
		}
	}
	return found
}

// checkEphemeral warns when the pod's ephemeral-storage limit, the sum of
// its containers' (the kubelet evicts a pod whose emptyDirs and writable
// layers use more), is smaller than the view's copy on the node's disk.
// With view-copy-medium memory the view's software is in a memory-backed
// emptyDir, which the kubelet counts as memory, not as ephemeral storage,
// and what is left on the disk is the view's links.
func checkEphemeral(pod *jobset.Pod, medium string) finding.List {
	if medium == settings.ViewCopyMemory {
		return nil
	}
	var found finding.List
	var sum resource.Quantity
	first := ""
	for i := range pod.Containers {
		c := &pod.Containers[i]
		if c.EphemeralLimit == "" {
			continue
		}
		if first == "" {
			first = c.EphemeralPath
		}
		sum.Add(resource.MustParse(c.EphemeralLimit))
	}
	if first != "" && sum.Cmp(ViewCopySize) < 0 {
		found.Warnf(first, "limits the pod's ephemeral storage to %s, less than the copy of the Flux view (about %s with the default view image) in its flux-install and flux-software emptyDirs (view-copy-medium: disk): the kubelet evicts the pod; raise it by %s or more, set view-copy-medium: memory, or set view-mount: image, which copies nothing", sum.String(), ViewCopySize.String(), ViewCopySize.String())
	}
	return found
}
