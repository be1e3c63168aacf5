package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/jobset"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The state-claim setting: rank 0 keeps Flux's state directory (the
// content store, which holds the job history, the queue and the KVS) on a
// PersistentVolumeClaim, so that the next instance of the JobSet, after a
// preemption, a suspend, a restart or a re-creation, resumes it. Only
// rank 0 uses a statedir (followers drop the attribute), but the claim is
// a volume of rank 0's whole pod template: every pod of that
// replicatedJob mounts it.

// Names and paths of the state volume.
const (
	// StateVolume is the pod volume of an existing claim; a claim of the
	// JobSet's volumeClaimPolicies is a volume of its template's name,
	// which the JobSet controller adds to its pods.
	StateVolume = "flux-state"
	// StateMountDir is where the claim is mounted in rank 0's pods.
	StateMountDir = "/mnt/flux/state"
)

// State is where rank 0 keeps Flux's state across instances.
type State struct {
	// Volume is the pod volume's name: the claim template's, or
	// StateVolume for an existing claim.
	Volume string
	// Claim is the existing claim's name, "" when the JobSet creates the
	// claim from a template (the JobSet controller then adds the volume).
	Claim string
	// Dir is rank 0's statedir on the claim: one directory per JobSet
	// name, so that the instances of two JobSets that share a claim
	// keep apart.
	Dir string
	// Leader is rank 0's hostname: the one pod that uses the statedir.
	Leader string
}

// deriveState is the plan's State, nil without state-claim.
func deriveState(js *jobset.JobSet, s *settings.Settings, groups []Group) *State {
	if s.StateClaim == "" {
		return nil
	}
	st := &State{Volume: s.StateClaim, Dir: StateMountDir + "/" + js.Name, Leader: js.Name + "-" + groups[0].Name + "-0-0"}
	if claimTemplate(js, s.StateClaim) == nil {
		st.Volume, st.Claim = StateVolume, s.StateClaim
	}
	return st
}

// claimTemplate is the JobSet's volumeClaimPolicies template of the
// given name, nil when it has none.
func claimTemplate(js *jobset.JobSet, name string) *jobset.ClaimTemplate {
	i := slices.IndexFunc(js.ClaimTemplates, func(c jobset.ClaimTemplate) bool { return c.Name == name })
	if i < 0 {
		return nil
	}
	return &js.ClaimTemplates[i]
}

// checkState checks state-claim against the JobSet: the volume it adds
// to rank 0's replicatedJob, and whether every pod of it can mount the
// claim.
func checkState(js *jobset.JobSet, s *settings.Settings, groups []Group) finding.List {
	var found finding.List
	if s.StateClaim == "" {
		return found
	}
	origin := s.Origin("state-claim")
	rj := &js.ReplicatedJobs[groups[0].Index]
	pods := max(rj.Replicas, 1)
	if rj.Completions != nil {
		pods *= max(*rj.Completions, 1)
	}
	t := claimTemplate(js, s.StateClaim)
	if t == nil {
		if i := slices.Index(rj.Pod.Volumes, StateVolume); i >= 0 {
			found.Errorf(fmt.Sprintf("%s.volumes[%d].name", rj.Pod.Path, i), "volume name %q is reserved by jobset-flux with state-claim (%s), which mounts the claim %q by that name; rename yours", StateVolume, origin, s.StateClaim)
		}
		if len(js.ClaimTemplates) > 0 {
			names := make([]string, len(js.ClaimTemplates))
			for i, c := range js.ClaimTemplates {
				names[i] = fmt.Sprintf("%q", c.Name)
			}
			add(&found, finding.Warning, origin, s.StateClaim, "",
				"names no template of %s (%s), so it must be an existing PersistentVolumeClaim in the JobSet's namespace, or rank 0's pod never starts; if you meant one of the templates, name it", jobset.VolumeClaimPoliciesPath, strings.Join(names, ", "))
		}
		return found
	}
	if errs := validation.IsDNS1123Label(t.Name); len(errs) > 0 {
		add(&found, finding.Error, t.Path+".metadata.name", t.Name, "",
			"is the name of the volume the JobSet controller adds for the state claim, and a volume name must be a DNS-1123 label: %s; rename the template and state-claim (%s) with it", errs[0], origin)
	}
	if claim := t.Name + "-" + js.Name; len(claim) > validation.DNS1123LabelMaxLength {
		add(&found, finding.Error, t.Path+".metadata.name", t.Name, "",
			"makes the claim %q, %d characters, more than the %d the JobSet webhook accepts; shorten the template's name (and state-claim, %s, with it) or the JobSet's", claim, len(claim), validation.DNS1123LabelMaxLength, origin)
	}
	if i := slices.Index(rj.Pod.Volumes, t.Name); i >= 0 {
		add(&found, finding.Error, fmt.Sprintf("%s.volumes[%d]", rj.Pod.Path, i), t.Name, "",
			"is the volume of the volumeClaimPolicies template that state-claim names (%s): the JobSet controller adds that volume itself, and its webhook refuses a pod template that has one; remove yours", origin)
	}
	switch {
	case len(t.AccessModes) > 0 && !slices.ContainsFunc(t.AccessModes, func(m string) bool { return m != jobset.ReadOnlyMany }):
		add(&found, finding.Error, t.Path+".spec.accessModes", strings.Join(t.AccessModes, ","), jobset.ReadWriteOnce,
			"is %s, but rank 0 writes its state on the claim that state-claim names (%s); give it ReadWriteOnce (pods on one node) or ReadWriteMany", strings.Join(t.AccessModes, ", "), origin)
	case pods > 1 && slices.Equal(t.AccessModes, []string{jobset.ReadWriteOncePod}):
		add(&found, finding.Error, t.Path+".spec.accessModes", jobset.ReadWriteOncePod, "ReadWriteMany",
			"is ReadWriteOncePod, but each of the %d pods of replicatedJob %q, rank 0's, mounts the state claim: only one of them can, the others never start and the instance never forms; use ReadWriteMany, or give rank 0 a replicatedJob of its own with one pod", pods, rj.Name)
	case pods > 1 && slices.Equal(t.AccessModes, []string{jobset.ReadWriteOnce}):
		add(&found, finding.Warning, t.Path+".spec.accessModes", jobset.ReadWriteOnce, "ReadWriteMany",
			"is ReadWriteOnce, and each of the %d pods of replicatedJob %q, rank 0's, mounts the state claim: a pod on another node than the claim's cannot, and never starts; use ReadWriteMany, keep those pods on one node, or give rank 0 a replicatedJob of its own with one pod", pods, rj.Name)
	}
	return found
}
