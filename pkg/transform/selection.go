package transform

import (
	"maps"
	"slices"
	"strings"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/jobset"
	"github.com/jobset-flux/jobset-flux/pkg/jobsetrender"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// selectItem reports whether item goes down the pipeline: a JobSet
// selected for Flux, written once, with no key written twice. Every item
// with a key written twice is reported and passed through as it is,
// like any item with an error.
func selectItem(item *fn.KubeObject, index *index, reports *[]jobsetrender.Report) bool {
	if !checkList(item, reports) {
		return false
	}
	if dup := finding.DuplicateKeys(yamltree.NodeOf(item)); len(dup) > 0 {
		*reports = append(*reports, jobsetrender.Report{Obj: item, Found: dup})
		return false
	}
	if !selected(item, reports) {
		return false
	}
	if index.duplicate(item.GetNamespace(), item.GetName()) {
		*reports = append(*reports, jobsetrender.Report{Obj: item, Found: finding.List{{Severity: finding.Error, Path: "metadata.name",
			Message: "the input holds this JobSet more than once; keep one (their generated ConfigMap and Secret would collide)"}}})
		return false
	}
	return true
}

// selected reports whether item is a JobSet to render. Other objects
// marked for Flux, and malformed markers, are reported.
func selected(item *fn.KubeObject, reports *[]jobsetrender.Report) bool {
	value, marked := item.GetAnnotations()[settings.EnabledAnnotation]
	checkUnselected(item, reports)
	if !marked || item.IsLocalConfig() {
		return false
	}
	var found finding.List
	path := "metadata.annotations[" + settings.EnabledAnnotation + "]"
	switch {
	case item.GetKind() != jobset.Kind:
		return false
	case item.GetAPIVersion() != jobset.APIVersion:
		found.Warnf("apiVersion", "only %s JobSets can be rendered for Flux; this one is left unchanged", jobset.APIVersion)
	case value != "true" && value != "false":
		found.Errorf(path, "must be \"true\" or \"false\", got %q", value)
	}
	if len(found) > 0 {
		*reports = append(*reports, jobsetrender.Report{Obj: item, Found: found})
	}
	return value == "true" && !found.HasErrors() && len(found) == 0
}

// checkList refuses a v1 List item that holds a JobSet marked for Flux:
// in a ResourceList the function renders items, not the items of an
// item, so that JobSet would pass unrendered with exit 0. kustomize and
// plain mode read every List of a file as its items, kpt only a List
// alone in its file; a List in a ResourceList comes from a kpt file that
// holds more, a generator or a hand-written list, whose author can write
// its items as items. A List without such a JobSet passes as it is.
func checkList(item *fn.KubeObject, reports *[]jobsetrender.Report) bool {
	if item.GetKind() != "List" || item.GetAPIVersion() != "v1" {
		return true
	}
	inner, ok := markedItems(item)
	if !ok {
		return true
	}
	js := inner[firstMarked(inner)]
	var found finding.List
	found.Errorf("items", "holds the JobSet %q marked for Flux, which jobset-flux renders only as an item of the ResourceList itself: emit the List's items as items (in a kpt package, give the List a file of its own, since kpt reads a List as its items only when it is its file's only document, or write its items as documents of the file; from a generator or another function, emit the items, not a List), or render the file in plain mode (jobset-flux FILE, or - for stdin), which reads every List document as its items", js.GetName())
	*reports = append(*reports, jobsetrender.Report{Obj: item, Found: found})
	return false
}

// markedItems returns a List's items when one of them is a JobSet with
// the flux-framework.org/enabled annotation.
func markedItems(list *fn.KubeObject) (fn.KubeObjects, bool) {
	node := yamltree.NodeOf(list)
	itemsNode, err := yaml.NewRNode(node).Pipe(yaml.Lookup("items"))
	if err != nil || itemsNode == nil || itemsNode.YNode().Kind != yaml.SequenceNode {
		return nil, false
	}
	var inner fn.KubeObjects
	for _, n := range itemsNode.YNode().Content {
		if n.Kind != yaml.MappingNode {
			return nil, false
		}
		inner = append(inner, fn.MoveToKubeObject(yaml.NewRNode(n)))
	}
	if firstMarked(inner) < 0 {
		return nil, false
	}
	return inner, true
}

// firstMarked is the index of the first JobSet marked for Flux, or -1.
func firstMarked(items fn.KubeObjects) int {
	for i, it := range items {
		_, marked := it.GetAnnotations()[settings.EnabledAnnotation]
		if it.GetKind() == jobset.Kind && strings.HasPrefix(it.GetAPIVersion(), jobSetGroup) && marked {
			return i
		}
	}
	return -1
}

// jobSetGroup is the API group of every JobSet version.
const jobSetGroup = "jobset.x-k8s.io/"

// checkUnselected reports the flux-framework.org/ labels and annotations
// of a JobSet the function does not render (no enabled annotation, or
// "false"): a label is never read, and the selector written as one leaves
// the JobSet unrendered with exit 0; README promises that a misspelt annotation under the prefix
// is an error, and a misspelt selector (enable, Enabled) is the worst
// kind, since it leaves the JobSet unrendered with exit 0. A setting
// spelt right on such a JobSet is a warning: it does nothing.
func checkUnselected(item *fn.KubeObject, reports *[]jobsetrender.Report) {
	if item.GetKind() != "JobSet" || !strings.HasPrefix(item.GetAPIVersion(), jobSetGroup) {
		return
	}
	annotations := item.GetAnnotations()
	if item.IsLocalConfig() || annotations[settings.EnabledAnnotation] == "true" {
		return
	}
	var found finding.List
	labels := item.GetLabels()
	for _, key := range slices.Sorted(maps.Keys(labels)) {
		if strings.HasPrefix(key, settings.AnnotationPrefix) {
			found.Errorf("metadata.labels["+key+"]", "is a label: jobset-flux reads its selector and settings from metadata.annotations only, so this JobSet is not rendered for Flux; move it to metadata.annotations")
		}
	}
	_, selector := annotations[settings.EnabledAnnotation]
	for _, key := range slices.Sorted(maps.Keys(annotations)) {
		name, ok := strings.CutPrefix(key, settings.AnnotationPrefix)
		if !ok || key == settings.EnabledAnnotation {
			continue
		}
		path := "metadata.annotations[" + key + "]"
		switch {
		case settings.LooksLikeEnabled(name):
			found.Errorf(path, "is not an annotation jobset-flux reads (did you mean %q?): this JobSet is not rendered for Flux; write %s: \"true\" to select it", settings.EnabledAnnotation, settings.EnabledAnnotation)
		case !slices.Contains(settings.Names(), name):
			found.Errorf(path, "is not an annotation jobset-flux reads: %v; fix or remove it", settings.Check(name, ""))
		case !selector:
			found.Warnf(path, "sets a Flux setting, but the JobSet has no %s annotation, so it is not rendered and the setting does nothing; add %s: \"true\", or remove the setting", settings.EnabledAnnotation, settings.EnabledAnnotation)
		}
	}
	if len(found) > 0 {
		*reports = append(*reports, jobsetrender.Report{Obj: item, Found: found})
	}
}
