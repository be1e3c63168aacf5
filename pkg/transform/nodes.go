package transform

import (
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Small builders and editors for yaml.v3 nodes. Edits happen in place so
// the user's comments, key order and styles survive.

func str(v string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v}
}

func num(v int) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(v)}
}

func boolean(v bool) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(v)}
}

// mapping builds a map from key, value pairs (values are *yaml.Node,
// string or int; nil values are left out).
func mapping(kv ...any) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for i := 0; i+1 < len(kv); i += 2 {
		var v *yaml.Node
		switch val := kv[i+1].(type) {
		case *yaml.Node:
			v = val
		case string:
			v = str(val)
		case int:
			v = num(val)
		case bool:
			v = boolean(val)
		}
		if v != nil {
			m.Content = append(m.Content, str(kv[i].(string)), v)
		}
	}
	return m
}

func sequence(items ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: items}
}

func stringList(values ...string) *yaml.Node {
	s := sequence()
	for _, v := range values {
		s.Content = append(s.Content, str(v))
	}
	return s
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

// get returns the value at key, following aliases; nil if absent.
func get(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	if i := keyIndex(m, key); i >= 0 {
		v := m.Content[i+1]
		for v.Kind == yaml.AliasNode {
			v = v.Alias
		}
		return v
	}
	return nil
}

// set replaces the value at key, or inserts the pair before the key
// `before` (or at the end when before is absent).
func set(m *yaml.Node, key string, v *yaml.Node, before string) {
	if i := keyIndex(m, key); i >= 0 {
		m.Content[i+1] = v
		return
	}
	pair := []*yaml.Node{str(key), v}
	if j := keyIndex(m, before); before != "" && j >= 0 {
		m.Content = append(m.Content[:j], append(pair, m.Content[j:]...)...)
		return
	}
	m.Content = append(m.Content, pair...)
}

// remove deletes key from m.
func remove(m *yaml.Node, key string) {
	if i := keyIndex(m, key); i >= 0 {
		m.Content = append(m.Content[:i], m.Content[i+2:]...)
	}
}

// ensureMap returns the map at key, creating it (or replacing a null) when needed.
func ensureMap(m *yaml.Node, key, before string) *yaml.Node {
	if v := get(m, key); v != nil && v.Kind == yaml.MappingNode {
		return v
	}
	v := mapping()
	set(m, key, v, before)
	return v
}

// ensureSeq returns the list at key, creating it when needed.
func ensureSeq(m *yaml.Node, key string) *yaml.Node {
	if v := get(m, key); v != nil && v.Kind == yaml.SequenceNode {
		return v
	}
	v := sequence()
	set(m, key, v, "")
	return v
}

// quoteAmbiguous double-quotes plain string scalars that YAML 1.1 reads as
// something else (y, n, yes, on, 0x1f, ...). kubectl and the API server
// read YAML 1.1, so `command: [lmp, -v, y]` would reach them as a boolean;
// everything this function writes must mean the same to both readers.
func quoteAmbiguous(n *yaml.Node) {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == yaml.NodeTagString && n.Style == 0 && mayBeYAML11NonString(n.Value) && yaml.IsYaml1_1NonString(n) {
			n.Style = yaml.DoubleQuotedStyle
		}
	case yaml.MappingNode:
		// Keys are field names and stay as written; values are checked.
		for i := 1; i < len(n.Content); i += 2 {
			quoteAmbiguous(n.Content[i])
		}
	default:
		for _, c := range n.Content {
			quoteAmbiguous(c)
		}
	}
}

// mayBeYAML11NonString is a cheap first look, because the full check
// parses the value with a YAML 1.1 decoder, which is costly to run on every
// string of every JobSet. Every YAML 1.1 boolean, null, number and
// timestamp starts with one of yaml11FirstBytes; a value that
// starts with a letter and holds only letters, digits and "-_./" is one
// plain scalar, which YAML 1.1 reads as a string unless it is one of its
// boolean or null words.
func mayBeYAML11NonString(v string) bool {
	switch {
	case v == "":
		return true
	case strings.IndexByte(yaml11FirstBytes, v[0]) < 0:
		return false
	case isLetter(v[0]) && strings.IndexFunc(v, notWordRune) < 0:
		return yaml11Words[v]
	}
	return true
}

// yaml11FirstBytes are the bytes a YAML 1.1 boolean, null, number or
// timestamp can start with.
const yaml11FirstBytes = "0123456789+-.~yYnNtTfFoO"

// yaml11Words are the plain scalars starting with a letter that YAML 1.1
// reads as a boolean or null.
var yaml11Words = map[string]bool{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true,
	"n": true, "N": true, "no": true, "No": true, "NO": true,
	"true": true, "True": true, "TRUE": true, "false": true, "False": true, "FALSE": true,
	"on": true, "On": true, "ON": true, "off": true, "Off": true, "OFF": true,
	"null": true, "Null": true, "NULL": true,
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func notWordRune(r rune) bool {
	return !(r < 0x80 && (isLetter(byte(r)) || '0' <= r && r <= '9' || strings.ContainsRune("-_./", r)))
}
