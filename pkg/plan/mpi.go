package plan

import (
	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"k8s.io/apimachinery/pkg/api/resource"
)

// ShmPerTask is the /dev/shm one MPI task of a pod needs, in bytes: what
// MPICH over UCX needs per local task before MPI_Init fails (its shared
// memory grows with every local task). Open MPI needs none under Flux,
// whose openmpi.lua moves its shared-memory segments into the broker's
// rundir. The measurements behind the figure are in
// docs/user/mpi-pitfalls.md ("/dev/shm").
const ShmPerTask = 4352 << 10

// shmNotes warns when shm-size gives the pods that run the job less
// /dev/shm than their tasks need.
func shmNotes(p *Plan) finding.List {
	var found finding.List
	s := &p.Settings
	if s.ShmSize == "" || s.Launcher || p.Interactive || p.TasksPerNode < 1 || !getsShmVolume(p) {
		return found
	}
	q, err := resource.ParseQuantity(s.ShmSize)
	if err != nil {
		return found // refused by the settings already
	}
	need := int64(p.TasksPerNode) * ShmPerTask
	if q.Value() >= need {
		return found
	}
	mib := (need + 1<<20 - 1) >> 20
	found.Warnf(s.Origin("shm-size"), "is %s, less /dev/shm than %d MPICH tasks per pod need: MPICH takes about 4.25 MiB per task and fails in MPI_Init without it (Open MPI under Flux uses none); set shm-size to at least %dMi, or remove it (then only the pod's memory bounds /dev/shm)", s.ShmSize, p.TasksPerNode, mib)
	return found
}

// getsShmVolume reports whether a pod that runs the job gets the function's
// /dev/shm volume, the one shm-size sizes (a container with a /dev/shm
// mount of its own keeps it).
func getsShmVolume(p *Plan) bool {
	for _, g := range p.Groups {
		if g.RunsJob && !g.OwnShm {
			return true
		}
	}
	return false
}
