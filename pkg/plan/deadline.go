package plan

import (
	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/jobset"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
)

// checkDeadline judges the deadline setting against what the Jobs and the
// other settings say. A Job's own activeDeadlineSeconds that differs is
// refused: two bounds on one instance, and the render would have to pick
// one unseen. A deadline no longer than the time-limit is a warning: the
// Job is ended by Kubernetes before Flux can end the job with its own
// message (an instance bounded by both can be meant, with time to spare).
func checkDeadline(js *jobset.JobSet, s *settings.Settings, groups []Group) finding.List {
	var found finding.List
	if s.Deadline == 0 {
		return found
	}
	origin := s.Origin("deadline")
	for _, g := range groups {
		rj := &js.ReplicatedJobs[g.Index]
		if v := rj.ActiveDeadlineSeconds; v != nil && *v != int64(s.Deadline) {
			found.Errorf(yamltree.Key(rj.JobPath(), jobset.ActiveDeadlineSecondsField), "is %d, but %s sets the instance's deadline to %ds; remove one of them (the deadline sets activeDeadlineSeconds on every Job of the instance)", *v, origin, s.Deadline)
		}
	}
	if s.TimeLimit != "" {
		if limit, ok := settings.DurationSeconds(s.TimeLimit); ok && float64(s.Deadline) <= limit {
			found.Warnf(origin, "is %ds, no longer than time-limit %s (%s): Kubernetes ends the Jobs before Flux's time limit can end the job with its own message, and the pods' start counts against the deadline too; make the deadline longer than start-up plus time-limit", s.Deadline, s.TimeLimit, s.Origin("time-limit"))
		}
	}
	return found
}

// deadlineDefault is the Job field the deadline sets, when the Job has
// none of its own.
func deadlineDefault(rj *jobset.ReplicatedJob, s *settings.Settings) (Default, bool) {
	if s.Deadline == 0 || rj.ActiveDeadlineSeconds != nil {
		return Default{}, false
	}
	return Default{In: jobset.InJob, Field: jobset.ActiveDeadlineSecondsField, Value: yamltree.IntValue(s.Deadline)}, true
}
