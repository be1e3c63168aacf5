package yamltree

import (
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// NodeOf returns the YAML node of obj itself, to be read or edited in
// place. The SDK offers only a deep copy (CopyToResourceNode), which for
// every item of a large list costs about as much as parsing it again, or
// hands the node out by moving it: it is moved back, which leaves obj as
// it was.
func NodeOf(obj *fn.KubeObject) *yaml.Node {
	n := obj.MoveToResourceNode().YNode()
	*obj = *fn.MoveToKubeObject(yaml.NewRNode(n))
	return n
}
