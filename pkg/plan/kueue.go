package plan

import (
	"strconv"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/jobset"
)

// Kueue (docs/user/kueue.md) starts a queued JobSet by owning its
// spec.suspend: its webhook sets it to true when the JobSet is created,
// admission sets it to false, preemption and eviction set it back to
// true. The render never writes spec.suspend; these checks catch the
// settings of the user's that defeat the queue.
const (
	// QueueLabel puts a JobSet in a Kueue LocalQueue.
	QueueLabel = "kueue.x-k8s.io/queue-name"
	// MultiKueueManager is the spec.managedBy of a JobSet MultiKueue
	// dispatches to a worker cluster.
	MultiKueueManager = "kueue.x-k8s.io/multikueue"
)

// checkKueue refuses a JobSet MultiKueue would dispatch, and warns about
// a spec.suspend written next to a queue.
func checkKueue(js *jobset.JobSet) finding.List {
	var found finding.List
	q := js.Queueing
	if q.ManagedBy == MultiKueueManager {
		// An error, not a warning: the worker cluster would get a JobSet
		// whose every pod waits forever for volumes that are not there,
		// while the manager cluster shows it admitted and running.
		add(&found, finding.Error, jobset.ManagedByPath, q.ManagedBy, "",
			"is %s: MultiKueue copies only the JobSet to the worker cluster it picks, not the ConfigMap %s and the CURVE Secret jobset-flux renders beside it, so the pods there never start (their volumes are missing); remove spec.managedBy and queue the JobSet in a LocalQueue of the cluster it runs on (label %s), or render and apply it on the worker cluster itself",
			q.ManagedBy, js.Name+ConfigMapSuffix, QueueLabel)
	}
	queue, queued := q.Labels[QueueLabel]
	if queued && q.Suspend != nil {
		add(&found, finding.Warning, jobset.SuspendPath, strconv.FormatBool(*q.Suspend), "",
			"is %t, but the JobSet is queued in Kueue's LocalQueue %q (label %s), and Kueue owns spec.suspend: it suspends the JobSet until admission, resumes it when admitted and suspends it again on preemption; a tool that applies your value (kubectl apply, Argo CD, Flux CD) undoes Kueue's, starting the JobSet without quota or stopping an admitted one; remove spec.suspend",
			*q.Suspend, queue, QueueLabel)
	}
	return found
}
