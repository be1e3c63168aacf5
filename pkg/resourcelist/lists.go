package resourcelist

import (
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// listKind is the kind of a list of objects of any kinds (apiVersion v1
// for kubectl; kyaml does not look at the apiVersion).
const listKind = "List"

// unwrapLists replaces each List document of a plain YAML stream by its
// items, in its place. kyaml's ByteReader unwraps a List only when it is
// the stream's only document (r says whether it did); next to other
// documents it stayed one object, and a JobSet marked for Flux inside it
// was refused. kustomize reads every List of a file as its items
// (api/resource Factory.inlineAnyEmbeddedLists), and kpt reads a List
// alone in a file so; both drop the wrapper, as this does. The rule is
// ByteReader's own (kind List with an items field), so a List's items come
// out the same whether or not it has neighbours; like ByteReader, it
// unwraps one level. A List whose items are not a sequence of maps is left
// as it is.
func unwrapLists(r *kio.ByteReader, nodes []*yaml.RNode) []*yaml.RNode {
	if r.WrappingKind != "" {
		return nodes
	}
	out := make([]*yaml.RNode, 0, len(nodes))
	for _, n := range nodes {
		if items, ok := listItems(n); ok {
			out = append(out, items...)
			continue
		}
		out = append(out, n)
	}
	return out
}

// listItems returns the items of a List document, and whether n is one
// whose items are all maps.
func listItems(n *yaml.RNode) ([]*yaml.RNode, bool) {
	if n.GetKind() != listKind {
		return nil, false
	}
	field := n.Field("items")
	if field == nil {
		return nil, false
	}
	seq := field.Value.YNode()
	if yaml.IsYNodeNilOrEmpty(seq) {
		return nil, true
	}
	if seq.Kind != yaml.SequenceNode {
		return nil, false
	}
	items := make([]*yaml.RNode, 0, len(seq.Content))
	for _, c := range seq.Content {
		if c.Kind != yaml.MappingNode {
			return nil, false
		}
		items = append(items, yaml.NewRNode(c))
	}
	return items, true
}
