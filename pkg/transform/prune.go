package transform

import (
	"fmt"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/jobset-flux/jobset-flux/pkg/resourcelist"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// pruneOrphans removes the ConfigMaps and Secrets the function generated
// for JobSets that are no longer in the input, or no longer annotated for
// Flux. kpt writes generated objects into the package, so without this a
// renamed or removed JobSet would leave its old files behind for good.
//
// An object is removed only when the function can prove it wrote that
// exact object and that nothing still needs it: it carries the digest the
// function recorded when it wrote it (plan.DigestAnnotation) and the
// digest still matches the object (stampDigest, digestOf), and nothing in
// the output or the function config names it (findReferences). Every
// other object labelled as generated for a JobSet that is gone stays, with
// a warning that says why; among them the objects earlier versions wrote,
// which carry no digest: nothing tells them from a user's lookalike.
func pruneOrphans(items fn.KubeObjects, config *fn.KubeObject, reports *[]report, cp *compacting) fn.KubeObjects {
	owners := map[string]bool{}
	for _, item := range items {
		if m := cp.meta(item); isOwner(m) {
			owners[m.GetNamespace()+"/"+m.GetName()] = true
		}
	}
	var orphans, proven []*fn.KubeObject
	for _, item := range items {
		if owner, generated := generatedFor(cp.meta(item)); generated && !owners[cp.meta(item).GetNamespace()+"/"+owner] {
			orphans = append(orphans, item)
			if recorded, matches := digestMatches(item); recorded && matches {
				proven = append(proven, item)
			}
		}
	}
	if len(orphans) == 0 {
		return items
	}
	// A stub never names an orphan that may be removed (compacting.keep
	// kept such items whole): only the trees can, and only a tree can be
	// scanned.
	refs := findReferences(cp.trees(items), config, proven)
	removed := map[*fn.KubeObject]bool{}
	for _, item := range orphans {
		found := pruneVerdict(item, refs)
		removed[item] = found[0].Severity == finding.Info
		*reports = append(*reports, report{item, found})
	}
	kept := items[:0]
	for _, item := range items {
		if !removed[item] {
			kept = append(kept, item)
		}
	}
	return kept
}

// pruneVerdict says what becomes of an orphan: an info when it is
// removed, else a warning that says why it stays.
func pruneVerdict(item *fn.KubeObject, refs map[*fn.KubeObject]reference) finding.List {
	owner, _ := generatedFor(item)
	orphan := fmt.Sprintf("jobset-flux generated this %s for JobSet %s, which is no longer in the input or no longer has %s: \"true\"", item.GetKind(), finding.Quote(owner), settings.EnabledAnnotation)
	labelled := fmt.Sprintf("kept: it is labelled %s=%s for JobSet %s, which is no longer in the input or no longer has %s: \"true\"", plan.ManagedByLabel, plan.ManagedByValue, finding.Quote(owner), settings.EnabledAnnotation)
	digestPath := "metadata.annotations[" + plan.DigestAnnotation + "]"
	var found finding.List
	recorded, matches := digestMatches(item)
	ref, referenced := refs[item]
	switch {
	case !recorded:
		found.Warnf(digestPath, "%s, but it has no %s annotation, so nothing proves that jobset-flux wrote it (a user or another tool did, or a jobset-flux older than the digest); delete it yourself if nothing needs it", labelled, plan.DigestAnnotation)
	case !matches:
		found.Warnf(digestPath, "%s, but it is no longer what jobset-flux wrote: a value, label, annotation or field was changed or added since (its %s annotation does not match it); delete it yourself if nothing needs it", labelled, plan.DigestAnnotation)
	case referenced:
		found.Warnf("", "kept: %s, but %s still refers to it at %s; it is removed by the first render after nothing refers to it", orphan, ref.describe(), shorten(ref.path))
	default:
		found.Infof("", "removed: %s", orphan)
	}
	return found
}

// generatedFor returns the JobSet a ConfigMap or Secret is labelled as
// generated for. The labels only make it a candidate: a user can write
// them too, so pruneOrphans decides by the digest.
func generatedFor(item resourcelist.Meta) (string, bool) {
	labels := item.GetLabels()
	owner := labels[plan.JobSetLabel]
	if owner == "" || labels[plan.ManagedByLabel] != plan.ManagedByValue || item.GetAPIVersion() != "v1" || item.IsLocalConfig() {
		return "", false
	}
	switch item.GetKind() {
	case "ConfigMap", "Secret":
		return owner, true
	}
	return "", false
}
