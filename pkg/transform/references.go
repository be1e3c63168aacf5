package transform

import (
	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// reference is where something still names an object.
type reference struct {
	by   *fn.KubeObject // nil: the function config
	path string
}

// describe names the object holding the reference, for a message.
func (r reference) describe() string {
	if r.by == nil {
		return "the function config"
	}
	id := r.by.GetName()
	if ns := r.by.GetNamespace(); ns != "" {
		id = ns + "/" + id
	}
	return r.by.GetKind() + " " + finding.Quote(id)
}

// findReferences returns, for each of targets, the first place in items
// or the function config that names it. Any string value equal to the
// target's name counts (a volume's configMap.name or secret.secretName, a
// projected source, envFrom, a key reference, imagePullSecrets, another
// JobSet's flux-framework.org/curve-secret, a field of a resource kind
// the function has never heard of), in an object of the target's
// namespace, of no namespace, or anywhere when the target has none; so
// does namespace/name in any object. Matching every value, not a list of
// known fields, errs on the side of keeping: a false match keeps an
// object with a warning, a missed one would delete a Secret a pod needs.
func findReferences(items fn.KubeObjects, config *fn.KubeObject, targets []*fn.KubeObject) map[*fn.KubeObject]reference {
	found := map[*fn.KubeObject]reference{}
	if len(targets) == 0 {
		return found
	}
	byName, byID := map[string][]*fn.KubeObject{}, map[string][]*fn.KubeObject{}
	for _, t := range targets {
		byName[t.GetName()] = append(byName[t.GetName()], t)
		if ns := t.GetNamespace(); ns != "" {
			byID[ns+"/"+t.GetName()] = append(byID[ns+"/"+t.GetName()], t)
		}
	}
	scan := func(by *fn.KubeObject, n *yaml.Node, namespace string) {
		walkScalars(n, nil, func(v string, trail []step) {
			for _, t := range byName[v] {
				if _, done := found[t]; !done && t != by && sameNamespace(namespace, t.GetNamespace()) {
					found[t] = reference{by, pathOf(trail)}
				}
			}
			for _, t := range byID[v] {
				if _, done := found[t]; !done && t != by {
					found[t] = reference{by, pathOf(trail)}
				}
			}
		})
	}
	for _, item := range items {
		scan(item, yamltree.NodeOf(item), item.GetNamespace())
	}
	if config != nil && !config.IsEmpty() {
		scan(nil, yamltree.NodeOf(config), "")
	}
	return found
}

// sameNamespace reports whether an object in namespace from can name one
// in namespace to: the same namespace, or either has none (a namespaced
// object without one lands in whatever namespace it is applied to; a
// cluster-scoped object may name objects of every namespace).
func sameNamespace(from, to string) bool {
	return from == to || from == "" || to == ""
}

// step is one step down a YAML tree: a map key, or a list index when
// key is nil.
type step struct {
	key   *yaml.Node
	index int
}

// walkScalars calls visit with the text of every scalar value under n
// (an alias of a scalar included, other aliases not followed: what they
// stand for is visited where it is written) and the steps to it. The
// steps are kept as nodes, and a path is written only for a match, so a
// large package costs no string per node.
func walkScalars(n *yaml.Node, trail []step, visit func(v string, trail []step)) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			walkScalars(c, trail, visit)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			walkScalars(n.Content[i+1], append(trail, step{key: n.Content[i]}), visit)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			walkScalars(c, append(trail, step{index: i}), visit)
		}
	case yaml.AliasNode:
		if t := yamltree.Deref(n); t.Kind == yaml.ScalarNode {
			visit(t.Value, trail)
		}
	case yaml.ScalarNode:
		visit(n.Value, trail)
	}
}

// pathOf writes steps as a field path, as results write them.
func pathOf(trail []step) string {
	p := ""
	for _, s := range trail {
		switch {
		case s.key == nil:
			p = yamltree.Index(p, s.index)
		case s.key.Kind == yaml.ScalarNode:
			p = yamltree.Key(p, s.key.Value)
		default:
			p = yamltree.Key(p, "<key>")
		}
	}
	return p
}
