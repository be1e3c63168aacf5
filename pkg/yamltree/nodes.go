package yamltree

import (
	"fmt"
	"strconv"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Reading and editing maps by key. Edits happen in place, so that the
// user's comments, key order and styles survive; a new key goes before a
// named one, so that what the function adds sits where a person would
// write it (Job fields above the pod template). Keys are compared by
// their text as written: aliases are expanded before anything is edited,
// so a key is never an alias where it matters.

// Deref returns what n stands for: the target of an alias (of an alias),
// else n itself. An alias without a target (the parser never makes one)
// stays as it is, so that Deref never returns nil for a node.
func Deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// IsNull reports whether n is a null scalar (null, ~ or nothing). It
// reads the tag as the YAML reader resolves it (ShortTag), not as stored:
// a node built without a tag, or with the long form
// tag:yaml.org,2002:null, is null too when its text says so.
func IsNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == yaml.NodeTagNull
}

// ScalarText returns the text of the scalar n, or "" when n is nil or not
// a scalar. An alias is not followed: a field that must be written out
// (a ResourceList's kind) reads as empty through one.
func ScalarText(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

// NonNull returns what n stands for (Deref), or nil when that is null: a
// field or item written as null reads as one left out.
func NonNull(n *yaml.Node) *yaml.Node {
	n = Deref(n)
	if n == nil || IsNull(n) {
		return nil
	}
	return n
}

// keyIndex returns the index of key's key node in m.Content, or -1.
func keyIndex(m *yaml.Node, key string) int {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return i
		}
	}
	return -1
}

// Lookup returns the value at key in the map m as written (a null
// included, an alias followed), and whether m holds the key. It is false
// when m is nil or not a map. The first of a key written twice counts;
// Duplicates reports the others.
func Lookup(m *yaml.Node, key string) (*yaml.Node, bool) {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, false
	}
	if i := keyIndex(m, key); i >= 0 {
		return Deref(m.Content[i+1]), true
	}
	return nil, false
}

// Get returns the value at key in the map m, nil when m is not a map, the
// key is absent or its value is null: as for Kubernetes, a null field is
// an unset one.
func Get(m *yaml.Node, key string) *yaml.Node {
	v, _ := Lookup(m, key)
	return NonNull(v)
}

// GetPath follows keys from n, each through Get; nil when one is missing.
func GetPath(n *yaml.Node, keys ...string) *yaml.Node {
	for _, k := range keys {
		n = Get(n, k)
	}
	return n
}

// Set replaces the value at key in the map m, or adds the pair before the
// key before (at the end when before is "" or absent). It does nothing
// when m is not a map.
func Set(m *yaml.Node, key string, v *yaml.Node, before string) {
	if m == nil || m.Kind != yaml.MappingNode {
		return
	}
	if i := keyIndex(m, key); i >= 0 {
		m.Content[i+1] = v
		return
	}
	pair := []*yaml.Node{String(key), v}
	if j := keyIndex(m, before); before != "" && j >= 0 {
		m.Content = append(m.Content[:j], append(pair, m.Content[j:]...)...)
		return
	}
	m.Content = append(m.Content, pair...)
}

// EnsureMap returns the map at key in m, first putting an empty one there
// (before the key before, as Set does) when the key is absent or holds
// anything else, a null included.
func EnsureMap(m *yaml.Node, key, before string) *yaml.Node {
	if v := Get(m, key); v != nil && v.Kind == yaml.MappingNode {
		return v
	}
	v := Map()
	Set(m, key, v, before)
	return v
}

// EnsureSeq returns the list at key in m, first putting an empty one at
// the end when the key is absent or holds anything else.
func EnsureSeq(m *yaml.Node, key string) *yaml.Node {
	if v := Get(m, key); v != nil && v.Kind == yaml.SequenceNode {
		return v
	}
	v := Seq()
	Set(m, key, v, "")
	return v
}

// Typed builders of new nodes. A map is built from Pairs, each holding a
// node, so that no value can be of a type the builder does not know.

// Scalar is a typed scalar value kept as data until it is written, so
// that a list of values to set can be compared, printed and written from
// one place. The zero Scalar is the empty string.
type Scalar struct {
	tag, text string
}

// StringValue returns a string scalar.
func StringValue(v string) Scalar { return Scalar{yaml.NodeTagString, v} }

// IntValue returns an integer scalar.
func IntValue(v int) Scalar { return Scalar{yaml.NodeTagInt, strconv.Itoa(v)} }

// BoolValue returns a boolean scalar.
func BoolValue(v bool) Scalar { return Scalar{yaml.NodeTagBool, strconv.FormatBool(v)} }

// String returns the value's text, as YAML writes it unquoted.
func (s Scalar) String() string { return s.text }

// Node returns a new node holding the value.
func (s Scalar) Node() *yaml.Node {
	tag := s.tag
	if tag == "" {
		tag = yaml.NodeTagString
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: s.text}
}

// String returns a string scalar.
func String(v string) *yaml.Node { return StringValue(v).Node() }

// Int returns an integer scalar.
func Int(v int) *yaml.Node { return IntValue(v).Node() }

// Bool returns a boolean scalar.
func Bool(v bool) *yaml.Node { return BoolValue(v).Node() }

// Null returns a null scalar.
func Null() *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagNull, Value: "null"}
}

// Pair is one key and its value, for Map.
type Pair struct {
	Key   string
	Value *yaml.Node
}

// KV returns the pair key: v.
func KV(key string, v *yaml.Node) Pair { return Pair{Key: key, Value: v} }

// Map returns a map of pairs, in order. A pair whose Value is nil is
// written as key: null, not left out: a field that should be absent is
// not passed in.
func Map(pairs ...Pair) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap}
	if len(pairs) > 0 {
		m.Content = make([]*yaml.Node, 0, 2*len(pairs))
	}
	for _, p := range pairs {
		v := p.Value
		if v == nil {
			v = Null()
		}
		m.Content = append(m.Content, String(p.Key), v)
	}
	return m
}

// Seq returns a list of items.
func Seq(items ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.SequenceNode, Tag: yaml.NodeTagSeq, Content: items}
}

// Strings returns a list of string scalars.
func Strings(values ...string) *yaml.Node {
	s := Seq()
	for _, v := range values {
		s.Content = append(s.Content, String(v))
	}
	return s
}

// DescribeValue names a value for a message about a field of the wrong
// type, with the value when it is short enough to be a scalar: "a map",
// "the string \"x\"", "a number", "!!float \"1.5\"". Unlike Describe it
// shows the text, so that the reader sees which value is meant; nil is
// "null" (a field that was read as unset).
func DescribeValue(n *yaml.Node) string {
	if n == nil {
		return "null"
	}
	switch n.Kind {
	case yaml.MappingNode, yaml.SequenceNode:
		return Describe(n)
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case yaml.NodeTagString:
			return fmt.Sprintf("the string %q", n.Value)
		case yaml.NodeTagInt:
			return "a number"
		case yaml.NodeTagBool:
			return "a boolean"
		}
		return fmt.Sprintf("%s %q", n.ShortTag(), n.Value)
	}
	return "something else"
}
