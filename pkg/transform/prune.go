package transform

import (
	"fmt"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/jobsetrender"
	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/jobset-flux/jobset-flux/pkg/resourcelist"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// pruneVerdict says what becomes of an orphan: an info when it is
// removed, else a warning that says why it stays. ownerHere: its JobSet
// is in the input, and only its network-policy or owner-references
// changed.
func pruneVerdict(item *fn.KubeObject, meta *resourcelist.Meta, ownerHere bool, ref reference, referenced bool) finding.List {
	owner, _ := generatedFor(meta)
	gone := fmt.Sprintf("JobSet %s, which is no longer in the input or no longer has %s: \"true\"", finding.Quote(owner), settings.EnabledAnnotation)
	if ownerHere {
		setting := "network-policy"
		if meta.Kind != jobsetrender.NetworkPolicyKind {
			setting = "owner-references"
		}
		gone = fmt.Sprintf("JobSet %s, whose %s setting is no longer \"true\"", finding.Quote(owner), setting)
	}
	orphan := fmt.Sprintf("jobset-flux generated this %s for %s", meta.Kind, gone)
	labelled := fmt.Sprintf("kept: it is labelled %s=%s for %s", plan.ManagedByLabel, plan.ManagedByValue, gone)
	digestPath := "metadata.annotations[" + plan.DigestAnnotation + "]"
	var found finding.List
	recorded, matches := jobsetrender.DigestMatches(item)
	switch {
	case !recorded:
		found.Warnf(digestPath, "%s, but it has no %s annotation, so nothing proves that jobset-flux wrote it (a user or another tool did, or a jobset-flux older than the digest); delete it yourself if nothing needs it", labelled, plan.DigestAnnotation)
	case !matches:
		found.Warnf(digestPath, "%s, but it is no longer what jobset-flux wrote: a value, label, annotation or field was changed or added since (its %s annotation does not match it); delete it yourself if nothing needs it", labelled, plan.DigestAnnotation)
	case referenced:
		found.Warnf("", "kept: %s, but %s still refers to it at %s; it is removed by the first render after nothing refers to it", orphan, ref.holderName(), shorten(ref.path))
	default:
		found.Infof("", "removed: %s", orphan)
	}
	return found
}

// generatedFor returns the JobSet an object of a kind the function
// generates is labelled as generated for. The labels only make it a
// candidate: a user can write them too, so prune decides by the digest.
func generatedFor(meta *resourcelist.Meta) (string, bool) {
	labels := meta.Labels()
	owner := labels[plan.JobSetLabel]
	if owner == "" || labels[plan.ManagedByLabel] != plan.ManagedByValue || !isGeneratedKind(meta) || meta.LocalConfig() {
		return "", false
	}
	return owner, true
}
