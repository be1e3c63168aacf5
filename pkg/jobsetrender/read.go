package jobsetrender

import (
	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/jobset"
	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// maxAliasNodes bounds the nodes that expanding the aliases of one JobSet
// may add (see yamltree.ErrTooLarge).
const maxAliasNodes = 1 << 20

// resolveStructure makes a JobSet's copy safe to read and edit: every
// alias is replaced by a copy of its target, so that an edit lands where
// it is read (through an alias it landed in the shared target: a
// replicatedJob whose template was *t stayed unwrapped, a sidecar sharing
// the command got a second broker). Merge keys are refused with their
// path instead of being merged: YAML 1.2 has none, readers merge
// differently, and this function's reader would not see the merged fields
// at all (<<: {hostNetwork: true} passed the hostNetwork check).
func resolveStructure(root *yaml.Node) finding.List {
	var found finding.List
	yamltree.Walk(root, "", func(n *yaml.Node, path string) {
		if yamltree.IsMergeKey(n) {
			found.Errorf(path, "is a YAML merge key, which jobset-flux does not read in a JobSet it renders (YAML 1.2 has no merge keys and tools merge differently); write the merged fields out in this map")
		}
	})
	if found.HasErrors() || !yamltree.HasAlias(root) {
		return found
	}
	ex := &yamltree.Expander{Budget: maxAliasNodes}
	if err := ex.ExpandIf(root, func(*yaml.Node) bool { return true }); err != nil {
		found.Errorf("", "cannot expand the JobSet's aliases (%v; at most %d nodes are copied); write the repeated parts out", err, maxAliasNodes)
		return found
	}
	// No alias refers to an anchor any more.
	yamltree.ClearAnchors(root)
	return found
}

// readJobSet is the pipeline's first step: it makes the JobSet's copy
// safe to read and edit (resolveStructure), removes what an earlier run
// added, so that what is read and checked is only what the user wrote
// (stripRendering), and reads it.
func readJobSet(rn *yaml.RNode) (*jobset.JobSet, finding.List) {
	found := resolveStructure(rn.YNode())
	if found.HasErrors() {
		return nil, found
	}
	stripRendering(rn.YNode())
	js, f := jobset.Read(rn)
	found.Add(f)
	return js, found
}
