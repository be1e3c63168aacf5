package finding

import (
	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// DuplicateKeys reports every key written twice in one map under n, with
// its path. Readers disagree on which one counts (this function's node
// reader and the SDK take the first, sigs.k8s.io/yaml and the API server
// refuse the object, other tools take the last), so an object holding one
// means different things to different tools: it is an error in any item
// and in the function config, not only in a JobSet the function renders.
func DuplicateKeys(n *yaml.Node) List {
	var found List
	yamltree.Duplicates(n, "", func(path string) {
		found.Errorf(path, "%s", yamltree.DuplicateMessage)
	})
	return found
}
