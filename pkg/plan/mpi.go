package plan

import (
	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"k8s.io/apimachinery/pkg/api/resource"
)

// ShmPerTask is the /dev/shm one MPI task of a pod needs, in bytes: 4.25
// MiB, what MPICH needs (docs/user/mpi-pitfalls.md). The smallest tmpfs
// /dev/shm in which MPI_Init, an allreduce and a 1 MiB ring message
// succeeded with Debian 12's MPICH 4.0.2 (over UCX 1.13, whose shared
// memory grows with every local task) was 4.25, 8.25, 16.5 and 33 MiB for
// 1, 2, 4 and 8 tasks; below it MPI_Init fails. Open MPI 4.1 needs none
// under Flux: flux-core's openmpi.lua moves its vader segments from
// /dev/shm to the job's directory under the broker's rundir (8 tasks ran
// with a 64 KiB /dev/shm so).
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
