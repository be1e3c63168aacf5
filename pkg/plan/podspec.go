package plan

import (
	"fmt"
	"strconv"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/jobset"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
)

// Pod spec fields the render leaves as they are, but under which a pod
// that runs a broker breaks: a port the broker needs, a probe that kills
// it, a node OS it cannot run on, and a container that keeps the pod
// running after the instance ends.

// checkPodSpec checks the pod of every replicatedJob in the instance.
func checkPodSpec(js *jobset.JobSet, s *settings.Settings, groups []Group) finding.List {
	var found finding.List
	for _, g := range groups {
		pod := &js.ReplicatedJobs[g.Index].Pod
		wrapped := &pod.Containers[g.Container]
		found.Add(checkPorts(pod, s))
		found.Add(checkOS(pod))
		found.Add(checkRegularContainers(pod, wrapped))
		if wrapped.LivenessProbe {
			add(&found, finding.Error, wrapped.Path+".livenessProbe", "", "", "is set on the container that runs the Flux broker: your command runs as a Flux job (placed by Flux on some pods, started once the whole instance has formed), not as this container's process, so a probe aimed at it fails wherever and whenever no task runs, and the kubelet then kills the container, its broker with it, and the instance is lost; remove it (the startup probe jobset-flux adds makes the pod Ready only once its broker has joined the instance)")
		}
	}
	return found
}

// checkPorts refuses a port of any container or native sidecar of the
// pod that is the broker's TBON port: the containers of a pod share one
// network namespace, so only one of them can listen on it. A regular
// init container has ended before the broker starts, and a hostPort
// maps a port of the node, not of the pod: neither meets the broker.
func checkPorts(pod *jobset.Pod, s *settings.Settings) finding.List {
	var found finding.List
	set := "by default"
	if o := s.Origin("port"); o != "" {
		set = "set at " + o
	}
	for _, c := range podContainers(pod) {
		for _, p := range c.Ports {
			if p.ContainerPort == s.Port && p.TCP() {
				add(&found, finding.Error, p.Path+".containerPort", strconv.Itoa(p.ContainerPort), "",
					"is %d, the Flux broker's TBON port (flux-framework.org/port, %s): the broker listens on it in every pod, and the containers of a pod share one network namespace, so either the broker or container %q cannot bind it and fails; give your container another port, or set flux-framework.org/port to one no container of the pod uses", p.ContainerPort, set, c.Name)
			}
		}
	}
	return found
}

// podContainers are the containers that run beside the broker: the
// regular ones, the wrapped one among them, and the native sidecars.
func podContainers(pod *jobset.Pod) []*jobset.Container {
	var cs []*jobset.Container
	for i := range pod.Containers {
		cs = append(cs, &pod.Containers[i])
	}
	for i := range pod.InitContainers {
		if pod.InitContainers[i].RestartPolicy == jobset.ContainerRestartAlways {
			cs = append(cs, &pod.InitContainers[i])
		}
	}
	return cs
}

// checkOS refuses a pod that asks for a Windows node: Flux and the
// entrypoint (bash, a Linux broker) run on Linux only.
func checkOS(pod *jobset.Pod) finding.List {
	var found finding.List
	const why = "Flux, its view and the jobset-flux entrypoint (a bash script starting a Linux broker) run on Linux nodes only, so the pod could never start a broker; remove it, or run this replicatedJob outside the instance (flux-framework.org/replicated-jobs)"
	if pod.OS.Name == jobset.OSWindows {
		add(&found, finding.Error, pod.Path+".os.name", pod.OS.Name, "", "is %s: %s", pod.OS.Name, why)
	}
	if pod.OS.Selected == jobset.OSWindows {
		add(&found, finding.Error, fmt.Sprintf("%s.nodeSelector[%s]", pod.Path, jobset.OSLabel), pod.OS.Selected, "", "is %s: %s", pod.OS.Selected, why)
	}
	return found
}

// checkRegularContainers warns of every regular container besides the
// one the render wraps, which it leaves as written: a pod ends only when
// all its regular containers have, so one that runs on after its work
// (a log shipper, a proxy) keeps the pod Running after its broker has
// exited, and the JobSet never ends. It may end on its own, hence a
// warning. A native sidecar is stopped once the regular containers end.
func checkRegularContainers(pod *jobset.Pod, wrapped *jobset.Container) finding.List {
	var found finding.List
	for i := range pod.Containers {
		c := &pod.Containers[i]
		if c.Index == wrapped.Index {
			continue
		}
		add(&found, finding.Warning, c.Path, "", "", "is container %q, a regular container besides the one jobset-flux wraps (%q), and a pod ends only once every regular container has ended: if %q runs on after its work (a log shipper, a proxy), every pod stays Running after the Flux instance has ended and the JobSet never ends; make it a native sidecar: move it to initContainers with restartPolicy: Always (the kubelet stops it once the broker's container has ended)", c.Name, wrapped.Name, c.Name)
	}
	return found
}
