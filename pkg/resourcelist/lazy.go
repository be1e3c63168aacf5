package resourcelist

// Items parsed one at a time (issue 19, class 8). Parse builds the tree
// of the whole list before the first item is read, and a tree takes
// five to ten times its text. ParseLazy splits the list by byte offsets
// (pkg/itemscan), reads only each item's apiVersion, kind and metadata
// up front, into a stub (a record behind a poisoned shell, record.go,
// read through Lazy.Meta), and parses an item whole only when it is asked
// for (Lazy.Load): memory follows the items in use, not the list.
//
// Every item parsed alone must read as Parse reads it in the list.
// ParseLazy and Load refuse (ErrUnsafe) whatever they cannot show to be
// so, and the caller then parses the whole list: a split the scanner
// refuses, a rest (the list without its items) whose keys are not those
// its lines show, an item that does not parse alone or holds a tag or a
// key that is not a scalar (Parse's messages name its line), and an item
// whose whole tree disagrees with its stub on any field the stub holds.

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jobset-flux/jobset-flux/pkg/itemscan"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// ErrUnsafe is wrapped by the errors of ParseLazy and Lazy that only say
// the list must be parsed whole (with Parse) to be read right.
var ErrUnsafe = errors.New("the list must be parsed whole")

// Lazy holds the text of a list's items, each item not yet asked for
// standing in the list as a shell (record.go): its stub's metadata is
// a record, read through l.Meta, and its getters panic, so that a reader
// that forgets the accessor fails loudly instead of reading "".
type Lazy struct {
	in    []byte
	split *itemscan.Split
	keep  StubFilter

	mu    sync.Mutex
	stubs map[*fn.KubeObject]*lazyStub // by shell
}

// lazyStub is an item not loaded yet: the record of its stub, where it
// is in the list, and the digest of its stub's signature (stubSignature
// of the tree stub the record was read from), which the whole item must
// match when it is loaded: every node's kind, tag and value, as the
// tree stub compared before records, not only what the getters read.
type lazyStub struct {
	record
	at  int
	sig [sha256.Size]byte
}

// ParseLazy reads in as Parse does, except that each item is a shell
// whose record holds its apiVersion, kind and metadata (labels and
// annotations filtered by keep), read through l.Meta, until l.Load is
// called on it.
func ParseLazy(in []byte, keep StubFilter) (*fn.ResourceList, *Lazy, error) {
	split, err := itemscan.Scan(in)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrUnsafe, err)
	}
	rl, err := parseRest(split)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrUnsafe, err)
	}
	l := &Lazy{in: in, split: split, keep: keep, stubs: make(map[*fn.KubeObject]*lazyStub, len(split.Items))}
	stubs, err := l.stubsOf()
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrUnsafe, err)
	}
	rl.Items = make(fn.KubeObjects, len(stubs))
	for i, s := range stubs {
		rl.Items[i] = &s.shell
		l.stubs[&s.shell] = s
	}
	return rl, l, nil
}

// parseRest parses the list without its items, once it knows that a
// parser reads the keys its lines show.
func parseRest(split *itemscan.Split) (*fn.ResourceList, error) {
	root, err := decodeOne(split.Rest)
	if err != nil {
		return nil, err
	}
	if root.Kind != yaml.MappingNode || len(root.Content) != 2*len(split.Keys) {
		return nil, errors.New("the rest of the list does not read as the keys its lines show")
	}
	for i, k := range split.Keys {
		if n := root.Content[2*i]; n.Kind != yaml.ScalarNode || n.Value != k {
			return nil, fmt.Errorf("the rest of the list reads key %d as %q, not %q", i, n.Value, k)
		}
	}
	return Parse(split.Rest)
}

// stubsOf makes every item's stub, on all CPUs, each parser sharing the
// strings of its stubs through an interner of its own.
func (l *Lazy) stubsOf() ([]*lazyStub, error) {
	stubs := make([]*lazyStub, len(l.split.Items))
	errs := make([]error, len(stubs))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(stubs)) {
		wg.Go(func() {
			in := interner{}
			for i := int(next.Add(1)) - 1; i < len(stubs); i = int(next.Add(1)) - 1 {
				stubs[i], errs[i] = l.stubOf(i, in)
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("items[%d]: %w", i, err)
		}
	}
	return stubs, nil
}

// stubOf parses only the apiVersion, kind and metadata of item i when its
// lines show where they are, else the whole item, and returns its stub.
func (l *Lazy) stubOf(i int, in interner) (*lazyStub, error) {
	obj, err := l.headOf(i)
	if err != nil {
		return nil, err
	}
	stub := Stub(obj, l.keep)
	return &lazyStub{record: *recordOf(stub, in), at: i, sig: signatureDigest(stub)}, nil
}

// headOf is item i's apiVersion, kind and metadata parsed alone when its
// lines show where they are, else the whole item.
func (l *Lazy) headOf(i int) (*fn.KubeObject, error) {
	if head, ok := stubFields(l.text(i), l.split.Column); ok {
		if obj, err := parseAlone(nil, head, nil); err == nil {
			return obj, nil
		}
	}
	return l.parseItem(i)
}

// signatureDigest is the digest of a tree stub's stubSignature.
func signatureDigest(stub *fn.KubeObject) [sha256.Size]byte {
	return sha256.Sum256([]byte(stubSignature(nodeOf(stub))))
}

// text is item i's text.
func (l *Lazy) text(i int) []byte {
	r := l.split.Items[i]
	return l.in[r.Start:r.End]
}

// parseItem parses item i within what surrounds it in the whole list:
// an empty entry in its column stands for the item before it (none for
// the first, which is parsed after what precedes it in the list), and
// for the item after it, or else the rest of the list after the last
// item follows. yaml.v3 attaches the comments around an item by what
// is around them; a comment it gives to a stand-in would belong to a
// neighbour, and the item would not read alone as in the list: refused.
func (l *Lazy) parseItem(i int) (*fn.KubeObject, error) {
	entry := []byte(strings.Repeat(" ", l.split.Column) + "- {}\n")
	var before, after []byte
	if i > 0 {
		before = entry
	}
	if i == len(l.split.Items)-1 {
		after = l.split.Tail
	} else {
		after = entry
	}
	return parseAlone(before, l.text(i), after)
}

// parseAlone parses text as an item of a list between before and after,
// each empty or one empty entry, whose items must not get a comment.
func parseAlone(before, text, after []byte) (*fn.KubeObject, error) {
	doc := make([]byte, 0, len(header)+len(itemsKey)+len(before)+len(text)+len(after))
	doc = append(append(append(append(append(doc, header...), itemsKey...), before...), text...), after...)
	rl, err := Parse(doc)
	if err != nil {
		return nil, err
	}
	at, want := 0, 1
	if len(before) > 0 {
		at, want = 1, 2
	}
	if len(after) > 0 && bytes.HasPrefix(bytes.TrimLeft(after, " "), []byte("- {}")) {
		want++
	}
	if len(rl.Items) != want {
		return nil, fmt.Errorf("its text reads as %d items", len(rl.Items)-want+1)
	}
	for k, it := range rl.Items {
		if k != at && hasComments(nodeOf(it)) {
			return nil, errors.New("yaml.v3 gives one of its comments to a neighbouring item")
		}
	}
	return rl.Items[at], nil
}

// hasComments reports whether a node under n (n included) has a comment.
func hasComments(n *yaml.Node) bool {
	if n.HeadComment != "" || n.LineComment != "" || n.FootComment != "" {
		return true
	}
	for _, c := range n.Content {
		if hasComments(c) {
			return true
		}
	}
	return false
}

// Load returns the whole item a shell of l stands for, parsed from its
// text; ok is false for an object that is not such a shell (already
// loaded, or never one). Each shell is loaded at most once; its record
// is dropped then.
func (l *Lazy) Load(shell *fn.KubeObject) (obj *fn.KubeObject, ok bool, err error) {
	l.mu.Lock()
	s, ok := l.stubs[shell]
	delete(l.stubs, shell)
	l.mu.Unlock()
	if !ok {
		return nil, false, nil
	}
	obj, err = l.load(s)
	if err != nil {
		return nil, true, err
	}
	return obj, true, nil
}

// load parses item s.at whole and checks it against its stub: the tree
// stub of the whole item must have the signature of the one s was read
// from.
func (l *Lazy) load(s *lazyStub) (*fn.KubeObject, error) {
	i := s.at
	obj, err := l.parseItem(i)
	if err != nil {
		return nil, fmt.Errorf("%w: items[%d]: %w", ErrUnsafe, i, err)
	}
	if why := unsplittable(nodeOf(obj)); why != "" {
		return nil, fmt.Errorf("%w: items[%d] %s", ErrUnsafe, i, why)
	}
	if signatureDigest(Stub(obj, l.keep)) != s.sig {
		return nil, fmt.Errorf("%w: items[%d]: its metadata read alone differs from the item's", ErrUnsafe, i)
	}
	return obj, nil
}

// IsStub reports whether obj is a shell of l not loaded yet.
func (l *Lazy) IsStub(obj *fn.KubeObject) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.stubs[obj]
	return ok
}

// Meta is what to read obj's metadata through: its record when obj is a
// shell of l not loaded yet, else obj itself (l may be nil: nothing is
// a shell).
func (l *Lazy) Meta(obj *fn.KubeObject) Meta {
	if l == nil {
		return obj
	}
	l.mu.Lock()
	s, ok := l.stubs[obj]
	l.mu.Unlock()
	if ok {
		return &s.record
	}
	return obj
}

// Verify loads (and drops) every item not loaded yet, on all CPUs: an
// item the caller never needed whole (one replaced in the list) must
// still read as it does in the whole list, or the list must be parsed
// whole.
func (l *Lazy) Verify() error {
	l.mu.Lock()
	rest := make([]*lazyStub, 0, len(l.stubs))
	for _, s := range l.stubs {
		rest = append(rest, s)
	}
	clear(l.stubs)
	l.mu.Unlock()
	errs := make([]error, len(rest))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(rest)) {
		wg.Go(func() {
			for k := int(next.Add(1)) - 1; k < len(rest); k = int(next.Add(1)) - 1 {
				_, errs[k] = l.load(rest[k])
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// unsplittable says why an item parsed alone may not read as it does in
// the list ("" when it does): a tag (a directive of the list could
// change what it means) or a key that is not a scalar (messages name its
// line, which differs).
func unsplittable(n *yaml.Node) string {
	switch {
	case n.Style&yaml.TaggedStyle != 0:
		return "holds a tag"
	case n.Kind == yaml.MappingNode:
		for k := 0; k < len(n.Content); k += 2 {
			if n.Content[k].Kind != yaml.ScalarNode {
				return "holds a key that is not a scalar"
			}
		}
	}
	for _, c := range n.Content {
		if why := unsplittable(c); why != "" {
			return why
		}
	}
	return ""
}

// stubSignature is what a stub's readers can see of it: every node's
// kind, tag and value, in order, without comments, styles or lines.
func stubSignature(n *yaml.Node) string {
	var b strings.Builder
	var walk func(*yaml.Node)
	walk = func(n *yaml.Node) {
		fmt.Fprintf(&b, "(%d %q %q", n.Kind, n.Tag, n.Value)
		for _, c := range n.Content {
			walk(c)
		}
		b.WriteByte(')')
	}
	walk(n)
	return b.String()
}

// stubFields is the text of an item's apiVersion, kind and metadata
// fields alone, as an item of its own, when its lines show each of them
// once at the item's key column (col + 2); ok is false otherwise.
func stubFields(text []byte, col int) ([]byte, bool) {
	lines := strings.SplitAfter(string(text), "\n")
	entry := strings.Repeat(" ", col) + "- "
	for len(lines) > 0 && !strings.HasPrefix(lines[0], entry) {
		lines = lines[1:] // the first item's comments before it
	}
	keyCol := col + 2
	var out []byte
	seen := map[string]bool{}
	taking := false
	for i, ln := range lines {
		key, isKey := itemKey(ln, keyCol, i == 0)
		if isKey {
			if seen[key] {
				return nil, false
			}
			seen[key] = true
			taking = key == "apiVersion" || key == "kind" || key == "metadata"
			if taking {
				ln = ln[keyCol:]
				ln = strings.Repeat(" ", col) + "- " + ln
				if len(out) > 0 {
					ln = strings.Repeat(" ", keyCol) + ln[keyCol:]
				}
			}
		}
		if taking {
			out = append(out, ln...)
		}
	}
	return out, seen["kind"] && seen["apiVersion"]
}

// itemKey reads a line that starts an item's top-level field: a plain
// word and ":" at column keyCol (after "- " on the item's first line).
func itemKey(ln string, keyCol int, first bool) (string, bool) {
	if len(ln) <= keyCol {
		return "", false
	}
	if !first && strings.TrimLeft(ln[:keyCol], " ") != "" {
		return "", false
	}
	r := ln[keyCol:]
	i := 0
	for i < len(r) && (r[i] >= 'a' && r[i] <= 'z' || r[i] >= 'A' && r[i] <= 'Z') {
		i++
	}
	if i == 0 || i >= len(r) || r[i] != ':' || i+1 < len(r) && r[i+1] != ' ' && r[i+1] != '\n' {
		return "", false
	}
	return r[:i], true
}
