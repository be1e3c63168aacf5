package jobset

import (
	"fmt"
	"math"
	"strconv"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// reader reads typed values out of YAML nodes and records a finding, with
// the field path, for every value of the wrong type instead of failing.
type reader struct {
	found finding.List
}

// Field returns the value node of key in mapping m (nil when absent or null).
func Field(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return deref(m.Content[i+1])
		}
	}
	return nil
}

func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n != nil && n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	return n
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a map"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!str":
			return fmt.Sprintf("the string %q", n.Value)
		case "!!int":
			return "a number"
		case "!!bool":
			return "a boolean"
		}
		return fmt.Sprintf("%s %q", n.ShortTag(), n.Value)
	}
	return "something else"
}

// mapping returns the map at key, nil when absent; wrong kinds are findings.
func (r *reader) mapping(m *yaml.Node, key, path string) *yaml.Node {
	n := Field(m, key)
	if n == nil {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		r.found.Errorf(path, "must be a map, got %s", kindName(n))
		return nil
	}
	return n
}

// list returns the sequence at key, nil when absent.
func (r *reader) list(m *yaml.Node, key, path string) []*yaml.Node {
	n := Field(m, key)
	if n == nil {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		r.found.Errorf(path, "must be a list, got %s", kindName(n))
		return nil
	}
	items := make([]*yaml.Node, len(n.Content))
	for i, c := range n.Content {
		items[i] = deref(c)
	}
	return items
}

// str returns the string at key ("" when absent).
func (r *reader) str(m *yaml.Node, key, path string) string {
	n := Field(m, key)
	if n == nil {
		return ""
	}
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		r.found.Errorf(path, "must be a string, got %s", kindName(n))
		return ""
	}
	return n.Value
}

// integer returns the whole number at key (nil when absent).
func (r *reader) integer(m *yaml.Node, key, path string) *int {
	n := Field(m, key)
	if n == nil {
		return nil
	}
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		r.found.Errorf(path, "must be a whole number, got %s", kindName(n))
		return nil
	}
	v, err := strconv.ParseInt(n.Value, 0, 64)
	if err != nil || v > math.MaxInt32 || v < math.MinInt32 {
		r.found.Errorf(path, "must be a whole number that fits in 32 bits, got %s", n.Value)
		return nil
	}
	i := int(v)
	return &i
}

// boolean returns the boolean at key (nil when absent).
func (r *reader) boolean(m *yaml.Node, key, path string) *bool {
	n := Field(m, key)
	if n == nil {
		return nil
	}
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
		r.found.Errorf(path, "must be true or false, got %s", kindName(n))
		return nil
	}
	b, err := strconv.ParseBool(n.Value)
	if err != nil {
		// YAML 1.1 spellings (yes/on) are not booleans to Kubernetes.
		r.found.Errorf(path, "must be true or false, got %q", n.Value)
		return nil
	}
	return &b
}

// strings returns a list of strings at key (nil when absent).
func (r *reader) strings(m *yaml.Node, key, path string) []string {
	items := r.list(m, key, path)
	if items == nil {
		return nil
	}
	out := make([]string, 0, len(items))
	for i, it := range items {
		if it == nil || it.Kind != yaml.ScalarNode || it.ShortTag() != "!!str" {
			what := "null"
			if it != nil {
				what = kindName(it)
			}
			r.found.Errorf(fmt.Sprintf("%s[%d]", path, i), "must be a string (quote it), got %s", what)
			continue
		}
		out = append(out, it.Value)
	}
	return out
}

// duplicates reports every mapping key that appears twice in one map under
// n. Readers disagree on which one counts (this package reads the first;
// kubectl and the API server refuse the object), so a JobSet holding one
// must not be rendered. Aliases are not followed.
func (r *reader) duplicates(n *yaml.Node, path string) {
	yamltree.Duplicates(n, path, func(p string) {
		r.found.Errorf(p, "%s", yamltree.DuplicateMessage)
	})
}
