package yamltree

import (
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// SafeBlockStyles double-quotes every scalar under n that yaml.v3 would
// write as a block scalar (literal | or folded >) that no reader can read
// back as the same text. Double quotes can write any text (the emitter
// escapes what it must), so the output is valid YAML whatever a value
// holds; every other scalar keeps its style.
//
// A scalar is written as a literal block when its style says so, or when
// it has no quoting style and holds a line break (yaml.v3 picks a literal
// block for those). The emitter itself falls back to double quotes for
// most text a block cannot hold (trailing spaces, control characters),
// but not for a first line that starts with a tab: a block scalar's
// indentation is taken from its first line and a tab cannot be
// indentation, so yaml.v3, libyaml and kyaml all refuse "|\n  \techo". A
// folded block has more such cases (a line break before a more indented
// line, a document marker), so a folded scalar keeps its style only when
// it reads back as written.
func SafeBlockStyles(n *yaml.Node) {
	if n.Kind == yaml.ScalarNode {
		if !blockSafe(n) {
			n.Style = n.Style&yaml.TaggedStyle | yaml.DoubleQuotedStyle
		}
		return
	}
	for _, c := range n.Content {
		if c.Kind != yaml.AliasNode {
			SafeBlockStyles(c)
		}
	}
}

// blockSafe reports whether a scalar is either not written as a block or
// written as one that reads back as the same text.
func blockSafe(n *yaml.Node) bool {
	switch {
	case n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0:
		return true
	case n.Style&yaml.FoldedStyle != 0:
		return !strings.HasPrefix(n.Value, "\t") && foldedReadsBack(n.Value)
	case n.Style&yaml.LiteralStyle != 0, strings.Contains(n.Value, "\n"):
		return !strings.HasPrefix(n.Value, "\t")
	}
	return true
}

// foldedReadsBack reports whether v, written as a folded block in a map,
// reads back as v.
func foldedReadsBack(v string) bool {
	doc := Map(KV("k", &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: v, Style: yaml.FoldedStyle}))
	text, err := yaml.Marshal(doc)
	if err != nil {
		return false
	}
	var back map[string]string
	return yaml.Unmarshal(text, &back) == nil && back["k"] == v
}
