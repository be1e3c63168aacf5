// Package yamltree is the function's one vocabulary for parsed YAML
// (yaml.v3 node trees, as kyaml re-exports them): reading and editing maps
// by key and building typed nodes (nodes.go), quoting what YAML 1.1
// readers would take for another type (quote.go), and checking and
// rewriting the structure where readers of the same text disagree: a key
// written twice in one map, merge keys, and aliases. Field paths are
// written as the function's results write them: spec.replicatedJobs[0].name,
// metadata.annotations[example.com/key]. It depends on nothing of the
// function's own, so that every package can share it.
package yamltree

import (
	"errors"
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Key returns the path of key in the map at path.
func Key(path, key string) string {
	switch {
	case key == "" || strings.ContainsAny(key, "./[]"):
		return path + "[" + key + "]"
	case path == "":
		return key
	}
	return path + "." + key
}

// Index returns the path of item i of the list at path.
func Index(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

// DuplicateMessage says what is wrong with a key Duplicates reports, after
// its path.
const DuplicateMessage = "appears twice in the same map; keep one (tools disagree on which one counts, and the API server refuses the object)"

// Duplicates calls report with the path of every key that appears a
// second (or later) time in one map under n. Readers disagree on which
// one counts (yaml.v3's node readers take the first, its decoder and the
// API server refuse the object, others take the last), so no input may
// hold one. Aliases are not followed: their target is checked where it is
// written.
func Duplicates(n *yaml.Node, path string, report func(path string)) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			Duplicates(c, path, report)
		}
	case yaml.MappingNode:
		var seen map[string]bool
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := keyText(n.Content[i])
			p := Key(path, k)
			if seenBefore(n.Content, i, k, &seen) {
				report(p)
				continue
			}
			Duplicates(n.Content[i+1], p, report)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			Duplicates(c, Index(path, i), report)
		}
	}
}

// FirstDuplicate returns the path of the first key Duplicates reports
// under n, and whether there is one: for a reader that refuses the whole
// input rather than reporting each key.
func FirstDuplicate(n *yaml.Node, path string) (string, bool) {
	first, found := "", false
	Duplicates(n, path, func(p string) {
		if !found {
			first, found = p, true
		}
	})
	return first, found
}

// seenBefore reports whether key k of content[i] is an earlier key of the
// map too. Small maps (nearly all of a manifest) are searched without
// allocating; a large one gets a set.
func seenBefore(content []*yaml.Node, i int, k string, seen *map[string]bool) bool {
	const small = 16
	if len(content) <= 2*small {
		for j := 0; j < i; j += 2 {
			if keyText(content[j]) == k {
				return true
			}
		}
		return false
	}
	if *seen == nil {
		*seen = make(map[string]bool, len(content)/2)
	}
	if (*seen)[k] {
		return true
	}
	(*seen)[k] = true
	return false
}

// keyText is the text of a map key: a scalar's value (an alias key reads
// as its target's), or a marker for a complex key that no Kubernetes
// field can be.
func keyText(k *yaml.Node) string {
	for k.Kind == yaml.AliasNode && k.Alias != nil {
		k = k.Alias
	}
	if k.Kind != yaml.ScalarNode {
		return fmt.Sprintf("<%s key at line %d>", kindName(k.Kind), k.Line)
	}
	return k.Value
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.MappingNode:
		return "map"
	case yaml.SequenceNode:
		return "list"
	case yaml.AliasNode:
		return "alias"
	}
	return "scalar"
}

// Describe names the kind of a node for a message: a map, a list, an
// alias, null, or a scalar by its tag (a !!str, a !!int, ...).
func Describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a map"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	if n.ShortTag() == "!!null" {
		return "null"
	}
	return "a " + n.ShortTag()
}

// IsMergeKey reports whether k is a YAML 1.1 merge key (a plain <<).
func IsMergeKey(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge"
}

// Walk calls visit for every node under n with its path (map keys are not
// visited themselves; their value is). Aliases are not followed.
func Walk(n *yaml.Node, path string, visit func(n *yaml.Node, path string)) {
	visit(n, path)
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			Walk(c, path, visit)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if IsMergeKey(k) {
				visit(k, Key(path, k.Value))
			}
			Walk(n.Content[i+1], Key(path, keyText(k)), visit)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			Walk(c, Index(path, i), visit)
		}
	}
}

// SpellEmptyNulls gives the text "null" to every null written as nothing
// where yaml.v3's emitter cannot write it back as nothing: inside flow
// style ({a}, [a, ]), as a map key, or with an anchor. There it quotes the
// empty text instead (two single quotes), which reads back as an empty
// string: an item passed through unchanged would change meaning. An
// empty null value in block style is written as it was.
func SpellEmptyNulls(n *yaml.Node) {
	spellEmptyNulls(n, false)
}

func spellEmptyNulls(n *yaml.Node, mustSpell bool) {
	switch n.Kind {
	case yaml.ScalarNode:
		if (mustSpell || n.Anchor != "") && n.Value == "" && n.ShortTag() == "!!null" {
			n.Value = "null"
		}
	case yaml.MappingNode, yaml.SequenceNode, yaml.DocumentNode:
		flow := mustSpell || n.Style&yaml.FlowStyle != 0
		for i, c := range n.Content {
			spellEmptyNulls(c, flow || n.Kind == yaml.MappingNode && i%2 == 0)
		}
	}
}

// ErrTooLarge is returned when expanding aliases would make more nodes than
// the budget: a few aliases of aliases (a "billion laughs") make a tree
// exponentially larger than its text.
var ErrTooLarge = errors.New("its aliases expand to too many nodes")

// ErrCycle is returned for an alias inside the node it refers to
// (&a [*a]): the parser accepts it, but no copy of it is finite.
var ErrCycle = errors.New("an alias refers to a node that contains it")

// Expander replaces aliases with copies of what they point to, within a
// budget of new nodes shared by every call.
type Expander struct {
	// Budget is the number of nodes the copies may still add.
	Budget int
	// copying holds the nodes being copied, to tell a cycle.
	copying map[*yaml.Node]bool
}

// Copy returns a deep copy of n in which every alias is replaced by a
// copy of its target and no node carries an anchor (the copy is written
// in another place, where the anchor's name could mean something else).
func (e *Expander) Copy(n *yaml.Node) (*yaml.Node, error) {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if e.Budget--; e.Budget < 0 {
		return nil, ErrTooLarge
	}
	if e.copying[n] {
		return nil, ErrCycle
	}
	if len(n.Content) > 0 {
		if e.copying == nil {
			e.copying = map[*yaml.Node]bool{}
		}
		e.copying[n] = true
		defer delete(e.copying, n)
	}
	c := *n
	c.Anchor = ""
	if n.Kind == yaml.AliasNode {
		// An alias without a target (the parser never makes one): a null.
		c = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null", Line: n.Line, Column: n.Column}
	}
	if len(n.Content) > 0 {
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, child := range n.Content {
			cc, err := e.Copy(child)
			if err != nil {
				return nil, err
			}
			c.Content[i] = cc
		}
	}
	return &c, nil
}

// ExpandIf replaces, in place, every alias under n for which expand(alias
// target) is true with a copy of the target.
func (e *Expander) ExpandIf(n *yaml.Node, expand func(target *yaml.Node) bool) error {
	for i, c := range n.Content {
		if c.Kind == yaml.AliasNode {
			if c.Alias == nil || expand(c.Alias) {
				cp, err := e.Copy(c)
				if err != nil {
					return err
				}
				n.Content[i] = cp
			}
			continue
		}
		if err := e.ExpandIf(c, expand); err != nil {
			return err
		}
	}
	return nil
}

// HasAlias reports whether any node under n is an alias.
func HasAlias(n *yaml.Node) bool {
	if n.Kind == yaml.AliasNode {
		return true
	}
	for _, c := range n.Content {
		if HasAlias(c) {
			return true
		}
	}
	return false
}

// Anchored calls visit for every node under n that carries an anchor.
func Anchored(n *yaml.Node, visit func(*yaml.Node)) {
	if n.Anchor != "" {
		visit(n)
	}
	for _, c := range n.Content {
		if c.Kind != yaml.AliasNode {
			Anchored(c, visit)
		}
	}
}

// ClearAnchors removes every anchor under n (once no alias refers to them).
func ClearAnchors(n *yaml.Node) {
	Anchored(n, func(a *yaml.Node) { a.Anchor = "" })
}
