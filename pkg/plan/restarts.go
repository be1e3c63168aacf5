package plan

import (
	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/jobset"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
)

// The infra-restarts setting: the JobSet restarts the whole instance after
// an infrastructure failure, up to a bound, and fails at once after an
// application failure. Kubernetes tells the two apart by the wrapped
// container's exit code and the pod's conditions (each Job's
// podFailurePolicy): a pod the cluster deleted (DisruptionTarget) or one
// that exited with one of InfraExitCodes is counted, which fails the Job
// (backoffLimit 0) with BackoffLimitExceeded, and the JobSet's default
// rule restarts it; any other failure fails the Job with reason
// PodFailurePolicy, which the JobSet's one rule makes FailJobSet. The
// entrypoint keeps the command's own codes out of that set.

// Exit codes of the wrapped container that mean an infrastructure failure.
const (
	// ExitRankLost: a rank of the instance was lost while rank 0's command
	// ran, and the command failed; on a follower, its broker failed.
	ExitRankLost = 120
	// ExitHung: rank 0 cut off hung ranks, or a follower heard no
	// heartbeat from rank 0 (the hang watches).
	ExitHung = 122
	// ExitNeverFormed: the instance did not form within start-timeout.
	ExitNeverFormed = 124
)

// InfraExitCodes are the wrapped container's exit codes that count as an
// infrastructure failure, sorted as the Job API wants them: the three
// above, and a broker ended by a signal: SIGHUP (rank 0's command when its
// broker was told to stop), SIGKILL (the kubelet at the end of the grace
// period, the kernel's OOM killer) and SIGTERM.
var InfraExitCodes = []int{ExitRankLost, ExitHung, ExitNeverFormed, 128 + 1, 128 + 9, 128 + 15}

// ApplicationFailureRule names the JobSet failure-policy rule that fails
// the JobSet on an application failure.
const ApplicationFailureRule = "FluxApplicationFailure"

// checkRestarts refuses, with infra-restarts, the failure policies the
// render would write over.
func checkRestarts(js *jobset.JobSet, s *settings.Settings, groups []Group) finding.List {
	var found finding.List
	if s.InfraRestarts == 0 {
		return found
	}
	origin := s.Origin("infra-restarts")
	if pol := js.Policies; pol.MaxRestarts != nil || len(pol.FailureRules) > 0 || pol.RestartStrategy != "" {
		add(&found, finding.Error, jobset.FailurePolicyPath, "", "", "is set, but infra-restarts (%s) writes the JobSet's failurePolicy: restart on infrastructure failures, fail at once on application failures; remove yours, or infra-restarts", origin)
	}
	for _, g := range groups {
		rj := &js.ReplicatedJobs[g.Index]
		if len(rj.Retries.PodFailureActions) > 0 {
			add(&found, finding.Error, rj.JobPath()+".podFailurePolicy", "", "", "is set, but infra-restarts (%s) writes each Job's podFailurePolicy, which tells infrastructure failures from application failures; remove yours, or infra-restarts", origin)
		}
	}
	return found
}
