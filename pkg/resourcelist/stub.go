package resourcelist

import (
	"sync"

	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// treeStub is a copy of obj's apiVersion, kind and metadata, nothing else,
// and of the labels and annotations only those keep allows: what the
// function reads of an item it is done with.
//
// A record is read from it (recordOf), and a Lazy reads one per item
// up front: the key nodes are shared by all stubs (keyNode), as nothing
// changes a key of a stub. A labels or annotations map that keep empties
// is left out: it reads as no map.
func treeStub(obj *fn.KubeObject, keep MetaFilter) *fn.KubeObject {
	n := yamltree.NodeOf(obj)
	stub := &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap, Content: make([]*yaml.Node, 0, 6)}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "apiVersion", "kind":
			stub.Content = append(stub.Content, keyNode(k), scalarCopy(v))
		case "metadata":
			stub.Content = append(stub.Content, keyNode(k), stubMetadata(v, keep))
		}
	}
	return fn.MoveToKubeObject(yaml.NewRNode(stub))
}

// stubKey is what a shared key node is known by.
type stubKey struct {
	kind       yaml.Kind
	style      yaml.Style
	tag, value string
}

// stubKeys holds the shared key nodes: the keys of apiVersion, kind and
// metadata and of what keep allows, a vocabulary that does not grow with
// the list.
var stubKeys sync.Map

// keyNode is the shared copy of key k (a scalar; any other is copied).
// Its position and comments are not kept: nothing reads them of a stub.
func keyNode(k *yaml.Node) *yaml.Node {
	if k.Kind != yaml.ScalarNode || k.Anchor != "" {
		return yaml.CopyYNode(k)
	}
	key := stubKey{k.Kind, k.Style, k.Tag, k.Value}
	if n, ok := stubKeys.Load(key); ok {
		return n.(*yaml.Node)
	}
	n, _ := stubKeys.LoadOrStore(key, &yaml.Node{Kind: k.Kind, Style: k.Style, Tag: k.Tag, Value: k.Value})
	return n.(*yaml.Node)
}

// scalarCopy copies a value node: its own, since setting a value may
// write the node in place.
func scalarCopy(v *yaml.Node) *yaml.Node {
	if v.Kind != yaml.ScalarNode {
		return yaml.CopyYNode(v)
	}
	return &yaml.Node{Kind: v.Kind, Style: v.Style, Tag: v.Tag, Value: v.Value, Anchor: v.Anchor}
}

// stubMetadata copies a metadata map, its labels and annotations
// filtered by keep.
func stubMetadata(meta *yaml.Node, keep MetaFilter) *yaml.Node {
	if keep == nil || meta.Kind != yaml.MappingNode {
		return yaml.CopyYNode(meta)
	}
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: meta.Tag, Style: meta.Style}
	for i := 0; i+1 < len(meta.Content); i += 2 {
		k, v := meta.Content[i], meta.Content[i+1]
		switch {
		case (k.Value == "labels" || k.Value == "annotations") && v.Kind == yaml.MappingNode:
			var kept []*yaml.Node
			for j := 0; j+1 < len(v.Content); j += 2 {
				if keep(k.Value, v.Content[j].Value) {
					kept = append(kept, keyNode(v.Content[j]), scalarCopy(v.Content[j+1]))
				}
			}
			if len(kept) > 0 {
				out.Content = append(out.Content, keyNode(k), &yaml.Node{Kind: yaml.MappingNode, Tag: v.Tag, Content: kept})
			}
		case k.Value == "name" || k.Value == "namespace" || k.Value == "labels" || k.Value == "annotations":
			out.Content = append(out.Content, keyNode(k), scalarCopy(v))
		}
	}
	return out
}
