package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/jobset"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The JobSet fields that decide when the JobSet ends, against what a
// Flux instance's end means: the instance ends when rank 0's command
// ends, rank 0's pod exits with its exit code, and every other broker
// then exits 0 whatever the command did. A JobSet's Completed must
// therefore rest on rank 0's Job (Job 0 of the first replicatedJob of
// the instance): a success policy that can be met by other Jobs is met
// by followers that exit 0 after a failed command, or by a Job outside
// the instance while the command still runs.

// checkEnding checks spec.successPolicy, spec.coordinator and
// spec.failurePolicy.restartStrategy.
func checkEnding(js *jobset.JobSet, groups []Group) finding.List {
	var found finding.List
	found.Add(checkSuccessPolicy(js, groups))
	found.Add(checkJobSuccessPolicy(&js.ReplicatedJobs[groups[0].Index]))
	found.Add(checkCoordinator(js))
	if rs := js.Policies.RestartStrategy; rs == jobset.InPlaceRestart {
		add(&found, finding.Error, jobset.FailurePolicyPath+".restartStrategy", rs, "Recreate",
			"is InPlaceRestart: the JobSet webhook then requires every Job's backoffLimit to be 2147483647 (and refuses InPlaceRestart without its feature gate), but a Flux Job needs backoffLimit 0 (jobset-flux sets it when absent), and a broker restarted in place has the failed one's rank in an instance that is gone; remove restartStrategy (Recreate, the default, recreates every pod, which starts a new instance)")
	}
	return found
}

// checkSuccessPolicy refuses a successPolicy under which Completed does
// not mean rank 0's command succeeded.
func checkSuccessPolicy(js *jobset.JobSet, groups []Group) finding.List {
	var found finding.List
	sp := js.Policies.Success
	if sp == nil {
		return found
	}
	rank0 := groups[0].Name
	targets := sp.Targets
	if len(targets) == 0 {
		for _, rj := range js.ReplicatedJobs {
			targets = append(targets, rj.Name)
		}
	}
	jobs := 0
	for _, rj := range js.ReplicatedJobs {
		if slices.Contains(targets, rj.Name) {
			jobs += max(rj.Replicas, 1)
		}
	}
	fix := fmt.Sprintf("remove successPolicy (the default, operator All over every Job, is right for Flux), or set operator: All with targetReplicatedJobs including %q", rank0)
	path := jobset.SuccessPolicyPath
	switch {
	case !slices.Contains(targets, rank0):
		add(&found, finding.Error, path+".targetReplicatedJobs", strings.Join(sp.Targets, ","), rank0,
			"does not name %q, the replicatedJob whose Job 0 holds rank 0: the JobSet would be Completed when %s complete, but the other brokers exit 0 once rank 0's command ends however it ended, and a Job outside the instance completes on its own, so Completed would not mean the command succeeded (while it failed, or still runs); %s", rank0, quoteNames(targets), fix)
	case sp.Operator == jobset.SuccessAny && jobs > 1:
		add(&found, finding.Error, path+".operator", sp.Operator, "All",
			"is Any over %d Jobs (%s): the JobSet would be Completed when any one of them completes, and a Job without rank 0 completes when its brokers exit 0, which they do once rank 0's command ends however it ended; %s", jobs, quoteNames(targets), fix)
	}
	return found
}

// checkJobSuccessPolicy refuses a successPolicy of rank 0's Job (the
// batch/v1 Job's own) with a rule that can be met without index 0, rank
// 0's pod: the Job then succeeds, and with it the JobSet, once followers
// exit 0, which they do however rank 0's command ended. The other Jobs
// may have one: their pods exit only once the instance has ended.
func checkJobSuccessPolicy(rj *jobset.ReplicatedJob) finding.List {
	var found finding.List
	for _, rule := range rj.Retries.SuccessIndexes {
		ranks, err := parseIDSet(rule.Value, 1)
		if rule.Value != "" && err == nil && ranks[0] {
			continue
		}
		add(&found, finding.Error, rule.Path, rule.Value, "0",
			"can be met without index 0, which is rank 0 in Job 0 of replicatedJob %q: the Job would succeed once other indexes exit 0, and they do once rank 0's command ends however it ended; give every rule succeededIndexes that include 0, or remove the Job's successPolicy", rj.Name)
	}
	return found
}

// checkCoordinator refuses a coordinator whose label value the JobSet
// webhook refuses: <jobset>-<replicatedJob>-<job>-<pod>.<subdomain>, at
// most 63 characters.
func checkCoordinator(js *jobset.JobSet) finding.List {
	var found finding.List
	c := js.Policies.Coordinator
	if c == nil {
		return found
	}
	value := fmt.Sprintf("%s-%s-%d-%d.%s", js.Name, c.ReplicatedJob, c.JobIndex, c.PodIndex, subdomain(js))
	if len(value) > validation.LabelValueMaxLength {
		add(&found, finding.Error, jobset.CoordinatorPath, value, "",
			"names the pod %q, whose label value jobset.sigs.k8s.io/coordinator the JobSet controller writes on every pod is %d characters, more than a label value's %d: the JobSet webhook refuses the JobSet; shorten the JobSet name, the replicatedJob name or spec.network.subdomain, or remove coordinator", value, len(value), validation.LabelValueMaxLength)
	}
	return found
}

func quoteNames(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}
