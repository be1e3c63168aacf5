package transform

import (
	"fmt"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/jobset"
	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// pruneOrphans removes the ConfigMaps and Secrets the function generated
// for JobSets that are no longer in the input, or no longer annotated for
// Flux. kpt writes generated objects into the package, so without this a
// renamed or removed JobSet would leave its old files behind for good.
// Only an object with the exact name, labels and (for a Secret) data the
// function writes is removed: a Secret the user made and labelled alike
// but holding anything else stays.
func pruneOrphans(items fn.KubeObjects, reports *[]report) fn.KubeObjects {
	owners := map[string]bool{}
	for _, item := range items {
		value, marked := item.GetAnnotations()[settings.EnabledAnnotation]
		if item.GetKind() == jobset.Kind && marked && value != "false" {
			owners[item.GetNamespace()+"/"+item.GetName()] = true
		}
	}
	kept := items[:0]
	for _, item := range items {
		owner, generated := generatedFor(item)
		if !generated || owners[item.GetNamespace()+"/"+owner] {
			kept = append(kept, item)
			continue
		}
		*reports = append(*reports, report{item, finding.List{{Severity: finding.Info,
			Message: fmt.Sprintf("removed: jobset-flux generated this %s for JobSet %q, which is no longer in the input or no longer has %s: \"true\"", item.GetKind(), owner, settings.EnabledAnnotation)}}})
	}
	return kept
}

// generatedFor returns the JobSet a ConfigMap or Secret was generated for,
// when it has exactly the shape the function gives it.
func generatedFor(item *fn.KubeObject) (string, bool) {
	labels := item.GetLabels()
	owner := labels[plan.JobSetLabel]
	if owner == "" || labels[plan.ManagedByLabel] != plan.ManagedByValue || item.GetAPIVersion() != "v1" || item.IsLocalConfig() {
		return "", false
	}
	switch item.GetKind() {
	case "ConfigMap":
		return owner, item.GetName() == owner+plan.ConfigMapSuffix
	case "Secret":
		data, found, err := item.NestedStringMap("data")
		_, hasStringData, _ := item.NestedStringMap("stringData")
		_, hasCert := data[plan.CertKey]
		return owner, item.GetName() == owner+plan.SecretSuffix && found && err == nil && len(data) == 1 && hasCert && !hasStringData
	}
	return "", false
}
