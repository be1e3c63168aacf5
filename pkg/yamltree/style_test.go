package yamltree_test

import (
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// styleRoundTrip writes v with style in a nested map, as the function's
// output nests values, after SafeBlockStyles, and reads it back.
func styleRoundTrip(t *testing.T, v string, style yaml.Style) (string, []byte) {
	t.Helper()
	val := &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: v, Style: style}
	doc := yamltree.Map(yamltree.KV("items", yamltree.Seq(yamltree.Map(yamltree.KV("data", yamltree.Map(yamltree.KV("k", val), yamltree.KV("z", yamltree.String("end"))))))))
	yamltree.SafeBlockStyles(doc)
	text, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatalf("%q: %v", v, err)
	}
	var back struct {
		Items []struct {
			Data map[string]string `yaml:"data"`
		} `yaml:"items"`
	}
	if err := yaml.Unmarshal(text, &back); err != nil {
		t.Fatalf("%q in style %d is written as YAML that does not parse: %v\n%s", v, style, err, text)
	}
	if len(back.Items) != 1 || back.Items[0].Data["z"] != "end" {
		t.Fatalf("%q in style %d: the map around it changed:\n%s", v, style, text)
	}
	return back.Items[0].Data["k"], text
}

var styles = []yaml.Style{0, yaml.TaggedStyle, yaml.LiteralStyle, yaml.FoldedStyle, yaml.DoubleQuotedStyle, yaml.SingleQuotedStyle}

// Issue 19, class 3: a text whose first line starts with a tab was
// written as a literal block that yaml.v3, libyaml and kpt refuse (and
// so was any multi-line string with no quoting style); folded blocks
// lost or gained line breaks.
func TestSafeBlockStyles(t *testing.T) {
	for _, v := range []string{
		"\techo hi\n", "\t", "\t\n\tx", "\tx\ny", "a\n\tb\n", " \tx\n", "\n\tx\n", "plain", "a\nb\n",
		"a\n\n", "---\n\n", "|\n\n", "a\n\tb\ta", "\u00a0...\n\n", "#\n\n", "* \n\t%", "x\n  y\nz\n",
	} {
		for _, style := range styles {
			if got, text := styleRoundTrip(t, v, style); got != v {
				t.Errorf("%q in style %d reads back as %q:\n%s", v, style, got, text)
			}
		}
	}
}

// A literal block that can be one stays one: the function's scripts are
// readable in the ConfigMap.
func TestSafeBlockStylesKeepsBlocks(t *testing.T) {
	for _, v := range []string{"#!/bin/bash\n\techo\n", "  indented\n", "a\n\tb\n"} {
		if _, text := styleRoundTrip(t, v, yaml.LiteralStyle); !strings.Contains(string(text), "k: |") {
			t.Errorf("%q is no longer a literal block:\n%s", v, text)
		}
	}
}

// FuzzSafeBlockStyles: any text in any style is written, after
// SafeBlockStyles, as YAML that reads back as the same text.
//
//	go test -run='^$' -fuzz='^FuzzSafeBlockStyles$' -fuzztime=30s ./pkg/yamltree
func FuzzSafeBlockStyles(f *testing.F) {
	for _, v := range []string{"\techo hi\n", "a\n\tb\n", "---\n\n", "x\n  y\n", "\t\u2028\n", "\u0085\n\t"} {
		f.Add(v, uint8(2))
		f.Add(v, uint8(3))
	}
	f.Fuzz(func(t *testing.T, v string, s uint8) {
		if !isYAMLText(v) {
			return // no YAML input can hold it (invalid UTF-8, a BOM)
		}
		style := styles[int(s)%len(styles)]
		if got, text := styleRoundTrip(t, v, style); got != v {
			t.Fatalf("%q in style %d reads back as %q:\n%s", v, style, got, text)
		}
	})
}

// isYAMLText reports whether a YAML reader can produce v: valid UTF-8
// (the reader refuses anything else).
func isYAMLText(v string) bool { return strings.ToValidUTF8(v, "") == v }
