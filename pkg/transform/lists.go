package transform

import (
	"strings"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/jobset"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// checkList refuses a v1 List item that holds a JobSet marked for Flux:
// in a ResourceList the function renders items, not the items of an
// item, so that JobSet would pass unrendered with exit 0. kustomize, kpt
// and plain-file mode read a List in a file as its items; a List in a
// ResourceList comes from a generator or a hand-written list, whose
// author can write its items as items. A List without such a JobSet
// passes as it is.
func checkList(item *fn.KubeObject, reports *[]report) bool {
	if item.GetKind() != "List" || item.GetAPIVersion() != "v1" {
		return true
	}
	inner, ok := markedItems(item)
	if !ok {
		return true
	}
	js := inner[firstMarked(inner)]
	var found finding.List
	found.Errorf("items", "holds the JobSet %q marked for Flux, which jobset-flux renders only as an item of the ResourceList of its own: write the List's items as items of the list (kustomize, kpt and plain-file mode already read a List in a file that way), or render the file with jobset-flux FILE", js.GetName())
	*reports = append(*reports, report{item, found})
	return false
}

// markedItems returns a List's items when one of them is a JobSet with
// the flux-framework.org/enabled annotation.
func markedItems(list *fn.KubeObject) (fn.KubeObjects, bool) {
	node := nodeOf(list)
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
