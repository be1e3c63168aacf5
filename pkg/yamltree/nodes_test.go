package yamltree

import (
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func encode(t *testing.T, n *yaml.Node) string {
	t.Helper()
	s, err := yaml.NewRNode(n).String()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestGetLookup(t *testing.T) {
	m := parse(t, "a: &x {b: 1}\nc: *x\nn: null\ne:\nd: first\nd: second\n")
	if got := GetPath(m, "c", "b"); got == nil || got.Value != "1" {
		t.Errorf("GetPath(c, b) through an alias = %v, want 1", got)
	}
	for _, key := range []string{"n", "e", "missing"} {
		if got := Get(m, key); got != nil {
			t.Errorf("Get(%s) = %v, want nil (null or absent)", key, got)
		}
	}
	if v, ok := Lookup(m, "n"); !ok || v == nil || !IsNull(v) {
		t.Errorf("Lookup(n) = %v, %v; want the null node", v, ok)
	}
	if _, ok := Lookup(m, "missing"); ok {
		t.Error("Lookup(missing) found it")
	}
	if got := Get(m, "d"); got.Value != "first" {
		t.Errorf("Get of a key written twice = %q, want the first", got.Value)
	}
	// Nothing panics on what is not a map.
	for _, n := range []*yaml.Node{nil, String("s"), Seq(), Null()} {
		if Get(n, "a") != nil || GetPath(n, "a", "b") != nil {
			t.Errorf("Get on %v found something", n)
		}
		Set(n, "a", String("x"), "")
		remove(n, "a")
	}
	if NonNull(nil) != nil || Deref(nil) != nil {
		t.Error("NonNull(nil) or Deref(nil) is not nil")
	}
}

func TestEdit(t *testing.T) {
	m := parse(t, "# head\nb: 1\nd: 4\nnet: null\n")
	Set(m, "a", Int(0), "b")
	Set(m, "c", String("y"), "d")
	Set(m, "e", Bool(true), "")
	Set(m, "z", String("end"), "absent")
	Set(m, "b", Int(2), "")
	remove(m, "d")
	remove(m, "absent")
	net := EnsureMap(m, "net", "a") // replaces the null where it is
	Set(net, "x", Strings("p", "q"), "")
	if again := EnsureMap(m, "net", ""); again != net {
		t.Error("EnsureMap made a second map")
	}
	list := EnsureSeq(EnsureMap(m, "new", "a"), "list")
	list.Content = append(list.Content, String("r"))
	if again := EnsureSeq(net, "x"); len(again.Content) != 2 {
		t.Errorf("EnsureSeq replaced a list: %d items", len(again.Content))
	}
	// The head comment belongs to the key it was written above.
	want := "new:\n  list:\n  - r\na: 0\n# head\nb: 2\nc: y\nnet:\n  x:\n  - p\n  - q\ne: true\nz: end\n"
	if got := encode(t, m); got != want {
		t.Errorf("after edits:\n%s\nwant\n%s", got, want)
	}
}

// TestBuilders: every builder writes its type, a nil value is written as
// null (never left out), and an empty map has no content, as the parser
// makes it.
func TestBuilders(t *testing.T) {
	m := Map(KV("s", String("yes")), KV("i", Int(-3)), KV("b", Bool(false)), KV("nil", nil),
		KV("m", Map()), KV("l", Seq(Int(1))), KV("strs", Strings("a", "0x1f")))
	QuoteAmbiguous(m)
	want := "s: \"yes\"\ni: -3\nb: false\nnil: null\nm: {}\nl:\n- 1\nstrs:\n- a\n- \"0x1f\"\n"
	if got := encode(t, m); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if Map().Content != nil {
		t.Error("an empty map has content")
	}
	for v, tag := range map[Scalar]string{StringValue("1"): "!!str", IntValue(1): "!!int", BoolValue(true): "!!bool", {}: "!!str"} {
		if n := v.Node(); n.Tag != tag || n.Value != v.String() {
			t.Errorf("%#v.Node() = %s %q, want %s %q", v, n.Tag, n.Value, tag, v.String())
		}
	}
}

func TestDescribeValue(t *testing.T) {
	m := parse(t, "s: x\ni: 1\nb: true\nf: 1.5\nm: {}\nl: []\n")
	var got []string
	for _, k := range []string{"s", "i", "b", "f", "m", "l"} {
		got = append(got, DescribeValue(Get(m, k)))
	}
	got = append(got, DescribeValue(nil), DescribeValue(&yaml.Node{Kind: yaml.AliasNode}))
	want := `the string "x"|a number|a boolean|!!float "1.5"|a map|a list|null|something else`
	if strings.Join(got, "|") != want {
		t.Errorf("got  %s\nwant %s", strings.Join(got, "|"), want)
	}
}

// TestIsNull: the tag counts as the YAML reader resolves it. Parsed nulls
// carry the short tag, but a node built in code without a tag, or with
// the long form of the tag, is null too when its text is; a quoted or
// !!str-tagged "null" is a string.
func TestIsNull(t *testing.T) {
	for _, text := range []string{"k: null", "k: ~", "k:", "k: Null", "k: !!null ''", "k: !<tag:yaml.org,2002:null> x"} {
		v, _ := Lookup(parse(t, text), "k")
		if !IsNull(v) {
			t.Errorf("%q: not null (tag %q)", text, v.Tag)
		}
	}
	for _, text := range []string{`k: "null"`, "k: 'null'", "k: !!str null", "k: nil", "k: 0", "k: []", "k: {}"} {
		v, _ := Lookup(parse(t, text), "k")
		if IsNull(v) {
			t.Errorf("%q: null", text)
		}
	}
	built := []*yaml.Node{
		{Kind: yaml.ScalarNode, Value: "null"},
		{Kind: yaml.ScalarNode, Value: "~"},
		{Kind: yaml.ScalarNode, Value: ""},
		{Kind: yaml.ScalarNode, Tag: "tag:yaml.org,2002:null", Value: "null"},
		Null(),
	}
	for _, n := range built {
		if !IsNull(n) {
			t.Errorf("built node %+v: not null", *n)
		}
	}
	for _, n := range []*yaml.Node{String("null"), {Kind: yaml.ScalarNode, Value: "null", Style: yaml.DoubleQuotedStyle}, Map(), Seq()} {
		if IsNull(n) {
			t.Errorf("built node %+v: null", *n)
		}
	}
}

// TestScalarText: a scalar's text; nothing for nil, a map or an alias.
func TestScalarText(t *testing.T) {
	root := parse(t, "a: &x ResourceList\nb: *x\nc: {k: v}\n")
	for key, want := range map[string]string{"a": "ResourceList", "b": "", "c": "", "none": ""} {
		var raw *yaml.Node
		if i := keyIndex(root, key); i >= 0 {
			raw = root.Content[i+1]
		}
		if got := ScalarText(raw); got != want {
			t.Errorf("ScalarText(%s) = %q, want %q", key, got, want)
		}
	}
}

// remove deletes key (its first occurrence) from the map m: the edit
// TestEdit makes beside the package's own.
func remove(m *yaml.Node, key string) {
	if m == nil || m.Kind != yaml.MappingNode {
		return
	}
	if i := keyIndex(m, key); i >= 0 {
		m.Content = append(m.Content[:i], m.Content[i+2:]...)
	}
}
