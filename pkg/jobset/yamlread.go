package jobset

import (
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

// The readers below take the map m, its field path at and a key: the
// path of what they report is always the key's own, written once.

// typed returns the value at key in the map m when it is of kind and,
// for a scalar, of YAML type tag; nil when absent (or null). A value of
// another kind or type is a finding at its path: "<must>, got <value>".
func (r *reader) typed(m *yaml.Node, at, key string, kind yaml.Kind, tag, must string) *yaml.Node {
	n := yamltree.Get(m, key)
	if n == nil {
		return nil
	}
	if n.Kind != kind || tag != "" && n.ShortTag() != tag {
		r.found.Errorf(yamltree.Key(at, key), "%s, got %s", must, yamltree.DescribeValue(n))
		return nil
	}
	return n
}

// mapping returns the map at key, nil when absent; wrong kinds are findings.
func (r *reader) mapping(m *yaml.Node, at, key string) *yaml.Node {
	return r.typed(m, at, key, yaml.MappingNode, "", "must be a map")
}

// list returns the sequence at key, nil when absent.
func (r *reader) list(m *yaml.Node, at, key string) []*yaml.Node {
	n := r.typed(m, at, key, yaml.SequenceNode, "", "must be a list")
	if n == nil {
		return nil
	}
	items := make([]*yaml.Node, len(n.Content))
	for i, c := range n.Content {
		items[i] = yamltree.NonNull(c)
	}
	return items
}

// str returns the string at key ("" when absent).
func (r *reader) str(m *yaml.Node, at, key string) string {
	n := r.typed(m, at, key, yaml.ScalarNode, yaml.NodeTagString, "must be a string")
	if n == nil {
		return ""
	}
	return n.Value
}

// integer returns the whole number at key (nil when absent).
func (r *reader) integer(m *yaml.Node, at, key string) *int {
	n := r.typed(m, at, key, yaml.ScalarNode, yaml.NodeTagInt, "must be a whole number")
	if n == nil {
		return nil
	}
	v, err := strconv.ParseInt(n.Value, 0, 64)
	if err != nil || v > math.MaxInt32 || v < math.MinInt32 {
		r.found.Errorf(yamltree.Key(at, key), "must be a whole number that fits in 32 bits, got %s", n.Value)
		return nil
	}
	i := int(v)
	return &i
}

// integer64 returns the whole number at key (nil when absent), for the
// int64 fields of the API.
func (r *reader) integer64(m *yaml.Node, at, key string) *int64 {
	n := r.typed(m, at, key, yaml.ScalarNode, yaml.NodeTagInt, "must be a whole number")
	if n == nil {
		return nil
	}
	v, err := strconv.ParseInt(n.Value, 0, 64)
	if err != nil {
		r.found.Errorf(yamltree.Key(at, key), "must be a whole number that fits in 64 bits, got %s", n.Value)
		return nil
	}
	return &v
}

// boolean returns the boolean at key (nil when absent).
func (r *reader) boolean(m *yaml.Node, at, key string) *bool {
	n := r.typed(m, at, key, yaml.ScalarNode, yaml.NodeTagBool, "must be true or false")
	if n == nil {
		return nil
	}
	b, err := strconv.ParseBool(n.Value)
	if err != nil {
		// YAML 1.1 spellings (yes/on) are not booleans to Kubernetes.
		r.found.Errorf(yamltree.Key(at, key), "must be true or false, got %q", n.Value)
		return nil
	}
	return &b
}

// strings returns a list of strings at key (nil when absent).
func (r *reader) strings(m *yaml.Node, at, key string) []string {
	path := yamltree.Key(at, key)
	items := r.list(m, at, key)
	if items == nil {
		return nil
	}
	out := make([]string, 0, len(items))
	for i, it := range items {
		if it == nil || it.Kind != yaml.ScalarNode || it.ShortTag() != "!!str" {
			r.found.Errorf(yamltree.Index(path, i), "must be a string (quote it), got %s", yamltree.DescribeValue(it))
			continue
		}
		out = append(out, it.Value)
	}
	return out
}

// follow walks keys from the map n at path, each step a map, and returns
// the last and its path; a step of another kind is reported at its path,
// and leaves nil.
func (r *reader) follow(n *yaml.Node, path string, keys []string) (*yaml.Node, string) {
	for _, k := range keys {
		n = r.mapping(n, path, k)
		path = yamltree.Key(path, k)
	}
	return n, path
}
