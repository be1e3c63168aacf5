package resourcelist

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// Issue 19, class 8: a Lazy's records read the items' metadata before
// any item is parsed whole, and an item asked for again is parsed again.

// TestLazyGivesAgain: the record of a Lazy's item reads its metadata; the
// item loads whole, and asked for again it is parsed again; Finish
// checks only the items never taken.
func TestLazyGivesAgain(t *testing.T) {
	l, err := ParseLazy([]byte(stubItem), nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := l.Metas()[0]; r.Name != "cfd-00000" || r.Kind != "JobSet" || r.Annotation("flux-framework.org/enabled") != "true" {
		t.Errorf("the record reads %s %s %v", r.Kind, r.Name, r.Annotations())
	}
	obj, err := l.Item(0)
	if err != nil || obj.GetName() != "cfd-00000" || obj.GetAnnotation("flux-framework.org/tasks-per-node") != "2" {
		t.Fatalf("Item: %v", err)
	}
	again, err := l.Item(0)
	if err != nil || again == obj || again.GetName() != obj.GetName() || again.String() != obj.String() {
		t.Errorf("Item asked for again: %v, a new parse of the same item expected", err)
	}
	if err := l.Finish(); err != nil {
		t.Errorf("Finish: %v", err)
	}
}

// lazyCheckList is one item whose text TestLazyLoadRefusesOtherMetadata
// changes once its stub is made.
const lazyCheckList = header + itemsKey + "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: \"12\"\n    uid: a1\n    labels: {a: b}\n  data: {k: v}\n"

// TestLazyLoadRefusesOtherMetadata: Item and Finish refuse (ErrUnsafe)
// an item whose metadata read whole differs from what its stub read
// alone, the text changed under the Lazy standing for a head parse that
// reads otherwise: a name, a label, a tag alone, and a field of the
// metadata no getter reads (uid: every getter reads the same, so a
// record compared getter by getter would take it; the stub's signature
// holds every node's kind, tag and value, as the tree stub compared
// before records). A change outside the metadata, which the stub does
// not hold, loads.
func TestLazyLoadRefusesOtherMetadata(t *testing.T) {
	cases := []struct {
		name, from, to string
		refused        bool
	}{
		{"unchanged", "", "", false},
		{"data", "{k: v}", "{k: w}", false},
		{"name", `name: "12"`, `name: "13"`, true},
		{"label", "{a: b}", "{a: c}", true},
		{"tag alone", `name: "12"`, `name: 12  `, true},
		{"uid", "uid: a1", "uid: a2", true},
	}
	for _, tc := range cases {
		for _, verify := range []bool{false, true} {
			in := []byte(lazyCheckList)
			l, err := ParseLazy(in, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.from != "" {
				at := bytes.Index(in, []byte(tc.from))
				copy(in[at:], tc.to)
			}
			if tc.name == "uid" {
				whole, err := Parse(in)
				if err != nil {
					t.Fatal(err)
				}
				stub := treeStub(whole.Items[0], nil)
				if got, want := recordReads(NewMetaReader(nil).Read(whole.Items[0]), stub), recordReads(l.Metas()[0], stub); got != want {
					t.Fatalf("uid: the getters read differently:\n%s\n%s", got, want)
				}
			}
			if verify {
				err = l.Finish()
			} else {
				_, err = l.Item(0)
			}
			refused := errors.Is(err, ErrUnsafe) && strings.Contains(err.Error(), "its metadata read alone differs from the item's")
			if refused != tc.refused || !refused && err != nil {
				t.Errorf("%s (Verify %v): %v; want refused %v", tc.name, verify, err, tc.refused)
			}
		}
	}
}
