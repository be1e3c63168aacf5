package yamltree

import (
	"strconv"
	"unicode/utf8"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// JSONSize is the length in bytes of n written as compact JSON by
// encoding/json (which kubectl, client-go and Argo CD use to send an
// object, and the API server to store a custom resource in etcd),
// computed by walking the tree: nothing is encoded or allocated, so a
// large object costs one pass over its nodes and the bytes of its
// strings. Map keys are strings; a scalar counts as its resolved tag
// says (a string quoted and escaped as encoding/json escapes it, HTML
// characters included; an integer in decimal; a bool or null as its
// word; a timestamp as the string kubectl's reader, sigs.k8s.io/yaml,
// keeps it); an alias counts as what it points to. A merge key counts as
// an ordinary key, not as the keys it merges, and a float as its YAML
// text: the few bytes either differs by do not matter for a limit of
// megabytes.
func JSONSize(n *yaml.Node) int {
	if n == nil {
		return len("null")
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return len("null")
		}
		return JSONSize(n.Content[0])
	case yaml.AliasNode:
		return JSONSize(n.Alias)
	case yaml.MappingNode:
		size := len("{}")
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				size++ // ,
			}
			size += jsonStringSize(n.Content[i].Value) + len(":") + JSONSize(n.Content[i+1])
		}
		return size
	case yaml.SequenceNode:
		size := len("[]")
		for i, c := range n.Content {
			if i > 0 {
				size++ // ,
			}
			size += JSONSize(c)
		}
		return size
	}
	return jsonScalarSize(n)
}

// jsonScalarSize is the JSON length of a scalar, by its resolved tag.
func jsonScalarSize(n *yaml.Node) int {
	switch n.ShortTag() {
	case yaml.NodeTagNull:
		return len("null")
	case yaml.NodeTagBool:
		if v, err := strconv.ParseBool(n.Value); err == nil && !v {
			return len("false")
		}
		return len("true")
	case yaml.NodeTagInt:
		if v, err := strconv.ParseInt(n.Value, 0, 64); err == nil {
			return len(strconv.FormatInt(v, 10))
		}
		return len(n.Value)
	case yaml.NodeTagFloat:
		return len(n.Value)
	}
	return jsonStringSize(n.Value)
}

// jsonStringSize is the length of s as encoding/json writes it: quoted,
// with its short escapes, \u00XX for other control characters and for
// <, > and &, \u2028 and \u2029 escaped, and \ufffd for each byte of
// invalid UTF-8.
func jsonStringSize(s string) int {
	size := len(`""`)
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f':
				size += 2
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				size += len(`\u0000`)
			default:
				size++
			}
			i++
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && w == 1, r == '\u2028', r == '\u2029':
			size += len(`\u0000`)
		default:
			size += w
		}
		i += w
	}
	return size
}
