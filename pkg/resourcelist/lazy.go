package resourcelist

// Items parsed one at a time (issue 19, class 8). Parse builds the tree
// of the whole list before the first item is read, and a tree takes
// several times its text. ParseLazy splits the list by byte offsets
// (pkg/itemscan), reads only each item's apiVersion, kind and metadata
// up front, into a record (record.go), and parses an item whole only
// when it is asked for (Lazy.Item): memory follows the items in use, not
// the list.
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
	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// ErrUnsafe is wrapped by the errors of ParseLazy and Lazy that only say
// the list must be parsed whole (with Parse) to be read right.
var ErrUnsafe = errors.New("the list must be parsed whole")

// Lazy is the Source of a list read one item at a time: it holds the
// text of the list's items and the Meta of each (Metas), and parses
// an item whole when Item asks for it.
type Lazy struct {
	in    []byte
	split *itemscan.Split
	keep  MetaFilter
	rest  *fn.ResourceList // the list without its items

	records []*Meta

	mu    sync.Mutex
	sigs  []*[sha256.Size]byte // by item
	taken []bool               // by item: asked for (Finish checks the others)
}

// ParseLazy reads in as Parse does, except that of each item only the
// record (its apiVersion, kind and metadata, labels and annotations
// filtered by keep) is read, until Item is called on it. Each record
// keeps the digest of its tree stub's signature (stubSignature), which
// the whole item must match when it is loaded: every node's kind, tag
// and value, not only what the record holds.
func ParseLazy(in []byte, keep MetaFilter) (*Lazy, error) {
	split, err := itemscan.Scan(in)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnsafe, err)
	}
	rl, err := parseRest(split)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnsafe, err)
	}
	l := &Lazy{in: in, split: split, keep: keep, rest: rl}
	if err := l.readRecords(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnsafe, err)
	}
	return l, nil
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

// readRecords makes every item's record and signature digest, on all
// CPUs, each parser sharing the strings of its records through an
// interner of its own.
func (l *Lazy) readRecords() error {
	n := len(l.split.Items)
	l.records, l.sigs, l.taken = make([]*Meta, n), make([]*[sha256.Size]byte, n), make([]bool, n)
	errs := make([]error, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Go(func() {
			in := interner{}
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				obj, err := l.headOf(i)
				if err != nil {
					errs[i] = err
					continue
				}
				stub := treeStub(obj, l.keep)
				sig := signatureDigest(stub)
				l.records[i], l.sigs[i] = recordOf(stub, in), &sig
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("items[%d]: %w", i, err)
		}
	}
	return nil
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
	return sha256.Sum256([]byte(stubSignature(yamltree.NodeOf(stub))))
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
		if k != at && hasComments(yamltree.NodeOf(it)) {
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

// Metas is the record of every item, in list order.
func (l *Lazy) Metas() []*Meta { return l.records }

// FunctionConfig is the list's functionConfig.
func (l *Lazy) FunctionConfig() *fn.KubeObject { return l.rest.FunctionConfig }

// Results are the results the list holds (an earlier function's).
func (l *Lazy) Results() fn.Results { return l.rest.Results }

// Item parses item i whole from its text, each time it is asked for:
// nothing is kept, so memory follows the items in use.
func (l *Lazy) Item(i int) (*fn.KubeObject, error) {
	if i < 0 || i >= len(l.sigs) {
		return nil, fmt.Errorf("the list has no items[%d]", i)
	}
	l.mu.Lock()
	sig := l.sigs[i]
	l.taken[i] = true
	l.mu.Unlock()
	return l.load(i, sig)
}

// Again implements Source: an item is parsed each time it is asked for.
func (l *Lazy) Again(int) {}

// load parses item i whole and checks it against its record: its tree
// stub must have the signature the record was read with.
func (l *Lazy) load(i int, sig *[sha256.Size]byte) (*fn.KubeObject, error) {
	obj, err := l.parseItem(i)
	if err != nil {
		return nil, fmt.Errorf("%w: items[%d]: %w", ErrUnsafe, i, err)
	}
	if why := unsplittable(yamltree.NodeOf(obj)); why != "" {
		return nil, fmt.Errorf("%w: items[%d] %s", ErrUnsafe, i, why)
	}
	if signatureDigest(treeStub(obj, l.keep)) != *sig {
		return nil, fmt.Errorf("%w: items[%d]: its metadata read alone differs from the item's", ErrUnsafe, i)
	}
	return obj, nil
}

// Finish loads (and drops) every item not taken, on all CPUs: an item
// the caller never needed whole (one replaced in the list) must still
// read as it does in the whole list, or the list must be parsed whole.
func (l *Lazy) Finish() error {
	l.mu.Lock()
	var rest []int
	for i, taken := range l.taken {
		if !taken {
			rest = append(rest, i)
			l.taken[i] = true
		}
	}
	sigs := l.sigs
	l.mu.Unlock()
	errs := make([]error, len(rest))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(rest)) {
		wg.Go(func() {
			for k := int(next.Add(1)) - 1; k < len(rest); k = int(next.Add(1)) - 1 {
				_, errs[k] = l.load(rest[k], sigs[rest[k]])
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("checking the items never taken: %w", err)
	}
	return nil
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
