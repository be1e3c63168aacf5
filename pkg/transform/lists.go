package transform

import (
	"strings"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/jobset"
	"github.com/jobset-flux/jobset-flux/pkg/resourcelist"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// unwrapLists replaces each v1 List item that holds a JobSet marked for
// Flux by the List's items, as kyaml's reader does with a List in a file
// (plain-file mode, kustomize and kpt read packages with it): a JobSet
// inside a List item of a ResourceList would otherwise pass unrendered
// with exit 0 where the same JobSet in a file is rendered. Each item
// unwrapped gets an info on the List's first JobSet saying so. Lists
// without such a JobSet stay as they are.
func unwrapLists(items fn.KubeObjects, lazy *resourcelist.Lazy, reports *[]report) (fn.KubeObjects, error) {
	var out fn.KubeObjects
	for i := range items {
		if m := metaOfItem(items[i], lazy); m.GetKind() != "List" || m.GetAPIVersion() != "v1" {
			out = append(out, items[i])
			continue
		}
		list, err := loadAt(items, i, lazy)
		if err != nil {
			return nil, err
		}
		inner, ok := markedItems(list)
		if !ok {
			out = append(out, list)
			continue
		}
		var found finding.List
		found.Infof("", "was an item of a v1 List: written as an item of its own, as kustomize, kpt and plain-file mode read a List")
		*reports = append(*reports, report{inner[firstMarked(inner)], found})
		out = append(out, inner...)
	}
	return out, nil
}

// metaOfItem reads an item's metadata whether or not it is loaded.
func metaOfItem(item *fn.KubeObject, lazy *resourcelist.Lazy) resourcelist.Meta {
	if lazy == nil {
		return item
	}
	return lazy.Meta(item)
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
