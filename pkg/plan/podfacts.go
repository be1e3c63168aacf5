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
// startup probe replacing the one that waits for the broker, a readiness
// probe aimed at a command that runs as a Flux job, and a limit the
// view's copy does not fit in.
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
		if c.ReadinessProbe {
			add(&found, finding.Warning, c.Path+".readinessProbe", "", "", "is kept, but this container runs the Flux broker, not your command: %s, so a probe aimed at your program fails on every pod where none of it runs, and such a pod is never Ready (kubectl wait, and Kueue's waitForPodsReady, wait for it on every pod); remove it (the pod is Ready once its broker has joined the instance), or aim it at something every pod serves", whereCommandRuns(js, s, groups))
		}
		if !imageFlux(s) && s.ViewMount != settings.ViewMountImage {
			found.Add(checkViewCopyFits(&rj.Pod, c, s.ViewCopyMedium))
		}
		if in := installerOf(&rj.Pod, c); in.RunAsUser != nil {
			found.Infof(in.NonRootPath, "the flux-installer init container runs as uid %d: %s is true without a runAsUser (the view image's own user is root, which the kubelet would refuse to start)", *in.RunAsUser, in.NonRootPath)
		}
	}
	return found
}

// whereCommandRuns says where the instance runs the command, for a
// message about a probe aimed at it.
func whereCommandRuns(js *jobset.JobSet, s *settings.Settings, groups []Group) string {
	switch {
	case s.Launcher:
		return "launcher is true, so your command runs once, on rank 0, as the instance's initial program, and its jobs run where Flux places them"
	case isInteractive(js, s, groups):
		return "the instance is interactive, so nothing of yours runs until someone submits a job to it"
	}
	return "your command runs as a Flux job, started once the whole instance has formed, its tasks on the pods Flux places them on"
}

// checkViewCopyFits warns when the limit the copy of the view is
// charged to is smaller than the copy. On the node's disk
// (view-copy-medium: disk) that is the pod's ephemeral-storage limit, the
// sum of its containers' (the kubelet evicts a pod whose emptyDirs and
// writable layers use more); what is left there with the default, memory,
// is the view's links. In memory the copy's pages are charged to the
// flux-installer that writes them, whose memory limit is the wrapped
// container's (installerOf), and to the pod after it: the installer is
// killed for running out of memory before the broker ever starts.
func checkViewCopyFits(pod *jobset.Pod, c *jobset.Container, medium string) finding.List {
	var found finding.List
	var limit resource.Quantity
	at := ""
	if medium == settings.ViewCopyMemory {
		if q, err := resource.ParseQuantity(c.Compute.Limits.Memory); err == nil {
			limit, at = q, c.Path+".resources.limits[memory]"
		}
	} else {
		for i := range pod.Containers {
			if e := &pod.Containers[i]; e.EphemeralLimit != "" {
				if at == "" {
					at = e.EphemeralPath
				}
				limit.Add(resource.MustParse(e.EphemeralLimit))
			}
		}
	}
	if at == "" || limit.Cmp(ViewCopySize) >= 0 {
		return found
	}
	what, where, outcome, other := "the pod's ephemeral storage", "its flux-install and flux-software emptyDirs (view-copy-medium: disk)", "the kubelet evicts the pod", "view-copy-medium: memory"
	if medium == settings.ViewCopyMemory {
		what, where, outcome, other = "the container's memory", "its memory-backed flux-software emptyDir (view-copy-medium: memory, the default)", "the flux-installer init container that writes it, which gets this container's limits, is killed for running out of memory, and the pod stays charged with the copy after it", "view-copy-medium: disk"
	}
	found.Warnf(at, "limits %s to %s, less than the copy of the Flux view (about %s with the default view image) in %s: %s; raise it by %s or more, set %s, or set view-mount: image, which copies nothing", what, limit.String(), ViewCopySize.String(), where, outcome, ViewCopySize.String(), other)
	return found
}
