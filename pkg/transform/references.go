package transform

import (
	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// target is an orphan that prune may remove: its position, name and
// namespace.
type target struct {
	at              int
	name, namespace string
}

// reference is where something still names a target: the object that
// names it, at its position (-1: the function config), and the path.
type reference struct {
	at     int
	holder string
	path   string
}

// holderName names the object holding the reference, for a message.
func (r reference) holderName() string {
	if r.at < 0 {
		return "the function config"
	}
	return r.holder
}

// referencesIn returns, for each of targets that the object at position
// at (-1: the function config) names, the first place in it that does,
// by the target's position. Any string value equal to the target's name
// counts (a volume's configMap.name or secret.secretName, a projected
// source, envFrom, a key reference, imagePullSecrets, another JobSet's
// flux-framework.org/curve-secret, a field of a resource kind the
// function has never heard of), in an object of the target's namespace,
// of no namespace, or anywhere when the target has none; so does
// namespace/name in any object. Matching every value, not a list of
// known fields, errs on the side of keeping: a false match keeps an
// object with a warning, a missed one would delete a Secret a pod needs.
// A target does not name itself.
func referencesIn(obj *fn.KubeObject, at int, targets []target) map[int]reference {
	found := map[int]reference{}
	if len(targets) == 0 || obj == nil || obj.IsEmpty() {
		return found
	}
	byName, byID := map[string][]target{}, map[string][]target{}
	for _, t := range targets {
		// An orphan keeps no other orphan: the Role and RoleBinding of
		// owner-references name each other.
		if t.at == at && at >= 0 {
			return found
		}
	}
	for _, t := range targets {
		byName[t.name] = append(byName[t.name], t)
		if t.namespace != "" {
			byID[t.namespace+"/"+t.name] = append(byID[t.namespace+"/"+t.name], t)
		}
	}
	namespace, holder := "", ""
	if at >= 0 {
		namespace = obj.GetNamespace()
		id := obj.GetName()
		if namespace != "" {
			id = namespace + "/" + id
		}
		holder = obj.GetKind() + " " + finding.Quote(id)
	}
	walkScalars(yamltree.NodeOf(obj), nil, func(v string, trail []step) {
		for _, t := range byName[v] {
			if _, done := found[t.at]; !done && t.at != at && sameNamespace(namespace, t.namespace) {
				found[t.at] = reference{at, holder, pathOf(trail)}
			}
		}
		for _, t := range byID[v] {
			if _, done := found[t.at]; !done && t.at != at {
				found[t.at] = reference{at, holder, pathOf(trail)}
			}
		}
	})
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
