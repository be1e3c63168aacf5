package resourcelist

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// Issue 19, class 8: an item of a Lazy not loaded yet is a shell and a
// record too. A reader that forgets the accessor (Lazy.Meta, through
// pkg/transform's compacting.meta) must fail, not read "".

// TestLazyShellPanics: every SDK getter and setter the function uses,
// and every use of the tree, panic on a Lazy's shell; its record reads
// the item's metadata, and the shell still loads whole afterwards. Once
// loaded, the shell is no stub of l: Meta gives the shell itself.
func TestLazyShellPanics(t *testing.T) {
	for name, read := range shellUses {
		rl, l, err := ParseLazy([]byte(stubItem), nil)
		if err != nil {
			t.Fatal(err)
		}
		shell := rl.Items[0]
		if !l.IsStub(shell) || shell.IsEmpty() || l.Meta(shell).IsEmpty() {
			t.Errorf("IsStub %v; IsEmpty: the shell's %v, its record's %v; want true, false, false", l.IsStub(shell), shell.IsEmpty(), l.Meta(shell).IsEmpty())
		}
		if !panics(func() { read(shell) }) {
			t.Errorf("%s on a Lazy's shell did not panic", name)
		}
		if m := l.Meta(shell); m.GetName() != "cfd-00000" || m.GetKind() != "JobSet" {
			t.Errorf("after %s, the record reads %s %s", name, m.GetKind(), m.GetName())
		}
		obj, ok, err := l.Load(shell)
		if err != nil || !ok || obj.GetName() != "cfd-00000" {
			t.Fatalf("after %s, Load: ok %v, %v", name, ok, err)
		}
		if l.IsStub(shell) || l.Meta(shell) != Meta(shell) {
			t.Errorf("after Load, the shell is still read through its record")
		}
	}
	rl, l, err := ParseLazy([]byte(stubItem), nil)
	if err != nil {
		t.Fatal(err)
	}
	shell := rl.Items[0]
	if _, ok, err := l.Load(shell); !ok || err != nil {
		t.Fatalf("Load: ok %v, %v", ok, err)
	}
	if !panics(func() { l.Meta(shell).GetName() }) {
		t.Error("a loaded shell read through Meta reads as an object")
	}
	if !panics(func() { poison.GetKind() }) {
		t.Error("poison was changed: a shell made now reads as an object")
	}
}

// lazyCheckList is one item whose text TestLazyLoadRefusesOtherMetadata
// changes once its stub is made.
const lazyCheckList = header + itemsKey + "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: \"12\"\n    uid: a1\n    labels: {a: b}\n  data: {k: v}\n"

// TestLazyLoadRefusesOtherMetadata: Load and Verify refuse (ErrUnsafe)
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
			rl, l, err := ParseLazy(in, nil)
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
				if got, want := metaReads(newRecord(whole.Items[0], nil, interner{}), whole.Items[0]), metaReads(l.Meta(rl.Items[0]), whole.Items[0]); got != want {
					t.Fatalf("uid: the getters read differently:\n%s\n%s", got, want)
				}
			}
			if verify {
				err = l.Verify()
			} else {
				_, _, err = l.Load(rl.Items[0])
			}
			refused := errors.Is(err, ErrUnsafe) && strings.Contains(err.Error(), "its metadata read alone differs from the item's")
			if refused != tc.refused || !refused && err != nil {
				t.Errorf("%s (Verify %v): %v; want refused %v", tc.name, verify, err, tc.refused)
			}
		}
	}
}
