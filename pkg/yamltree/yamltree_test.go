package yamltree

import (
	"errors"
	"slices"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func parse(t *testing.T, text string) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Content[0]
}

func TestDuplicates(t *testing.T) {
	n := parse(t, "a: {b: 1, b: 2}\nl: [{x: 1, x: 2}]\nk.d: {e: 1, e: 1}\na: 3\n")
	var got []string
	Duplicates(n, "", func(p string) { got = append(got, p) })
	want := []string{"a.b", "l[0].x", "[k.d].e", "a"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	// A large map takes the set.
	big := "{"
	for i := range 40 {
		big += string(rune('a'+i%26)) + string(rune('a'+i/26)) + ": 1, "
	}
	got = nil
	Duplicates(parse(t, big+"ab: 2}"), "m", func(p string) { got = append(got, p) })
	if !slices.Equal(got, []string{"m.ab"}) {
		t.Errorf("large map: got %q", got)
	}
}

func TestExpander(t *testing.T) {
	n := parse(t, "a: &x {b: &y [1]}\nc: *x\nd: *y\n")
	ex := &Expander{Budget: 100}
	if err := ex.ExpandIf(n, func(*yaml.Node) bool { return true }); err != nil {
		t.Fatal(err)
	}
	if HasAlias(n) {
		t.Fatal("an alias is left")
	}
	c := n.Content[3]
	if c.Kind != yaml.MappingNode || c.Anchor != "" || c.Content[1].Anchor != "" || c == n.Content[1] {
		t.Errorf("the copy is not a fresh, anchor-free map: %+v", c)
	}

	// A billion laughs stops at the budget.
	laughs := "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
	ex = &Expander{Budget: 10000}
	if err := ex.ExpandIf(parse(t, laughs), func(*yaml.Node) bool { return true }); !errors.Is(err, ErrTooLarge) {
		t.Errorf("billion laughs: %v, want ErrTooLarge", err)
	}
}

func TestExpanderCycle(t *testing.T) {
	// yaml.v3's node parser accepts an alias inside its own anchor.
	ex := &Expander{Budget: 1 << 20}
	if err := ex.ExpandIf(parse(t, "a: &a [1, {b: *a}]\n"), func(*yaml.Node) bool { return true }); !errors.Is(err, ErrCycle) {
		t.Errorf("got %v, want ErrCycle", err)
	}
	if ex.Budget < 1<<20-10 {
		t.Errorf("a cycle used %d nodes of the budget", 1<<20-ex.Budget)
	}
}

func TestMergeKey(t *testing.T) {
	n := parse(t, "a: &a {x: 1}\nb: {<<: *a, '<<': 2}\n")
	var got []string
	Walk(n, "", func(n *yaml.Node, p string) {
		if IsMergeKey(n) {
			got = append(got, p)
		}
	})
	if !slices.Equal(got, []string{"b.<<"}) {
		t.Errorf("merge keys at %q, want only b.<< (a quoted '<<' is a string)", got)
	}
}

func TestSpellEmptyNulls(t *testing.T) {
	n := parse(t, "a: {b, c: }\nd: [e, {f}]\ng:\nh: &x\n?\n: k\n")
	SpellEmptyNulls(n)
	out, err := yaml.Marshal(n)
	if err != nil {
		t.Fatal(err)
	}
	if want := "a: {b: null, c: null}\nd: [e, {f: null}]\ng:\nh: &x null\nnull: k\n"; string(out) != want {
		t.Errorf("got %q, want %q", out, want)
	}
}
