package resourcelist

// Items written as text while the rest of the list is processed (issue
// 19, class 8). A processed item is a go-yaml node tree, five to ten times
// its text; holding every tree until the sorted list can be written made
// memory grow with all the trees of the list. A Compactor encodes each
// item the function is done with (in the background, on all CPUs) into
// the piece Write would encode for it, and hands back a stub: a shell
// whose record (record.go) holds the item's apiVersion, kind and the
// metadata kept, which is all that sorting, pruning, path assignment and
// results read of it afterwards, through Meta. WriteCompacted then
// writes the pieces where the stubs sort. The tree is dropped as soon as
// its piece exists, so memory follows the output text plus the trees in
// flight, not the trees of the whole list.

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Compactor encodes items in the background; see the top of this file.
// The zero value is not usable: call NewCompactor.
type Compactor struct {
	keep StubFilter
	jobs chan compactJob
	wg   sync.WaitGroup

	mu      sync.Mutex
	records map[*fn.KubeObject]*record // by shell
	strings interner
	spool   *spool // nil: the pieces are kept in memory
	err     error
	closed  bool
}

// span is where a stub's piece is: its text, in memory, or its place in
// the spool (the text is then nil). A piece is never empty: no text and
// no length is a stub whose piece is not there (yet, or ever: Describe).
type span struct {
	text   []byte
	off, n int64
}

// spooled reports whether the piece is in the spool.
func (s span) spooled() bool { return s.text == nil && s.n > 0 }

type compactJob struct {
	stub *record
	full *fn.KubeObject
}

// StubFilter says which labels and annotations (field is "labels" or
// "annotations") a stub keeps; nil keeps them all.
type StubFilter func(field, key string) bool

// NewCompactor starts one encoder per CPU; its stubs keep the labels and
// annotations keep allows. The queue is short: when the encoders fall
// behind, Compact waits, so that trees do not pile up in it.
func NewCompactor(keep StubFilter) *Compactor {
	n := runtime.GOMAXPROCS(0)
	c := &Compactor{keep: keep, jobs: make(chan compactJob, n), records: map[*fn.KubeObject]*record{}, strings: interner{}}
	for range n {
		c.wg.Go(func() {
			for j := range c.jobs {
				b, err := itemPiece(j.full)
				c.mu.Lock()
				if err != nil {
					c.fail(fmt.Errorf("%s %s: %w", j.stub.kind, j.stub.name, err))
				}
				c.store(j.stub, b)
				c.mu.Unlock()
			}
		})
	}
	return c
}

// NewSpooledCompactor is NewCompactor with the pieces kept in sp (see
// spool.go) instead of memory; c owns sp from then on and closes it in
// Release.
func NewSpooledCompactor(keep StubFilter, sp *Spool) *Compactor {
	c := NewCompactor(keep)
	if sp != nil {
		c.spool = sp.s
	}
	return c
}

// fail records the first error; c.mu is held.
func (c *Compactor) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

// store keeps b as r's piece, in the spool when there is one; c.mu is
// held. An error writing the spool is kept for Close.
func (c *Compactor) store(r *record, b []byte) {
	if c.spool == nil || c.err != nil {
		r.span = span{text: b}
		return
	}
	off, err := c.spool.add(b)
	if err != nil {
		c.fail(fmt.Errorf("%s %s: %w", r.kind, r.name, err))
		return
	}
	r.span = span{off: off, n: int64(len(b))}
}

// Compact queues obj to be encoded and returns its stub, a shell that
// stands for it in the list from now on: its metadata is read through
// c.Meta, its getters panic. obj must not be read or changed by the
// caller afterwards (an encoder reads it); the stub's metadata may be
// changed only through Recompact.
func (c *Compactor) Compact(obj *fn.KubeObject) *fn.KubeObject {
	r := c.register(obj)
	c.jobs <- compactJob{stub: r, full: obj}
	return &r.shell
}

// Describe returns a shell with obj's metadata (read through c.Meta)
// and no piece: what a result names when obj itself is gone (the input
// JobSet a rendered one replaced). It must not stand in the list:
// WriteCompacted refuses it.
func (c *Compactor) Describe(obj *fn.KubeObject) *fn.KubeObject {
	return &c.register(obj).shell
}

// register makes obj's record, known as a stub of c at once.
func (c *Compactor) register(obj *fn.KubeObject) *record {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := newRecord(obj, c.keep, c.strings)
	c.records[&r.shell] = r
	return r
}

// Meta is what to read obj's metadata through: its record when obj is a
// stub of c, else obj itself (c may be nil: nothing is a stub).
func (c *Compactor) Meta(obj *fn.KubeObject) Meta {
	if c == nil {
		return obj
	}
	c.mu.Lock()
	r, ok := c.records[obj]
	c.mu.Unlock()
	if ok {
		return r
	}
	return obj
}

// Sort is Sort for a list whose items may be stubs of c.
func (c *Compactor) Sort(items fn.KubeObjects) {
	sortBy(items, c.Meta)
}

// Close waits for every queued item to be encoded and stops the
// encoders. It returns the first encoding error.
func (c *Compactor) Close() error {
	c.mu.Lock()
	closed := c.closed
	c.closed = true
	c.mu.Unlock()
	if !closed {
		close(c.jobs)
		c.wg.Wait()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !closed && c.spool != nil {
		if err := c.spool.flush(); err != nil {
			c.fail(err)
		}
	}
	return c.err
}

// Release closes c (Close) and its spool, whose file is then gone. A
// released Compactor cannot be read: call it once the list is written,
// or given up.
func (c *Compactor) Release() {
	c.Close()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.spool != nil {
		c.spool.close()
		c.spool = nil
	}
}

// Has reports whether obj is a stub of c.
func (c *Compactor) Has(obj *fn.KubeObject) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.records[obj]
	return ok
}

// Recompact applies edit to the item a stub stands for and encodes it
// again (after Close): the item is read back from its piece, edited, and
// the stub is replaced by a stub of the edited item, which is returned.
// It is for the rare edit made once the whole list is known (a generated
// object moved to a free file).
func (c *Compactor) Recompact(stub *fn.KubeObject, edit func(*fn.KubeObject)) (*fn.KubeObject, error) {
	if err := c.Close(); err != nil {
		return nil, err
	}
	m := c.Meta(stub)
	b, ok, err := c.piece(stub)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%s %s was not compacted", m.GetKind(), m.GetName())
	}
	c.forget(stub)
	rl, err := Parse([]byte(header + itemsKey + string(b)))
	if err != nil || len(rl.Items) != 1 {
		return nil, fmt.Errorf("reading back %s %s: %v", m.GetKind(), m.GetName(), err)
	}
	obj := rl.Items[0]
	edit(obj)
	nb, err := itemPiece(obj)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	next := c.register(obj)
	c.mu.Lock()
	defer c.mu.Unlock()
	// After Close the spool's writer is flushed: the piece is written
	// and flushed again, so that it can be read back like the others.
	c.store(next, nb)
	if c.spool != nil && c.err == nil {
		c.fail(c.spool.flush())
	}
	if c.err != nil {
		return nil, c.err
	}
	return &next.shell, nil
}

// has reports whether stub is a stub of c (nil: none is).
func (c *Compactor) has(stub *fn.KubeObject) bool {
	if c == nil {
		return false
	}
	return c.Has(stub)
}

// piece returns the encoded text of a stub (without the items key),
// read back from the spool when it is there; ok is false when stub is
// not a stub of c with a piece.
func (c *Compactor) piece(stub *fn.KubeObject) ([]byte, bool, error) {
	if c == nil {
		return nil, false, nil
	}
	c.mu.Lock()
	r, ok := c.records[stub]
	spool := c.spool
	c.mu.Unlock()
	if !ok || r.text == nil && r.n == 0 {
		return nil, false, nil
	}
	if !r.spooled() {
		return r.text, true, nil
	}
	b := make([]byte, r.n)
	if err := spool.read(b, r.off); err != nil {
		return nil, false, fmt.Errorf("%s %s: %w", r.kind, r.name, err)
	}
	return b, true, nil
}

// encoded reports whether stub is a stub of c whose piece is there (in
// memory or spooled), once c is closed.
func (c *Compactor) encoded(stub *fn.KubeObject) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.records[stub]
	return ok && (r.text != nil || r.n > 0)
}

// copyPiece writes a stub's piece to w, from memory or from the spool
// (through buf, so that no piece is held whole).
func (c *Compactor) copyPiece(w io.Writer, stub *fn.KubeObject, buf []byte) error {
	c.mu.Lock()
	r := c.records[stub]
	spool := c.spool
	c.mu.Unlock()
	switch {
	case r.text == nil && r.n == 0:
		return fmt.Errorf("%s %s stands in the list but was never encoded", r.kind, r.name)
	case !r.spooled():
		_, err := w.Write(r.text)
		return err
	}
	if err := spool.copyTo(w, r.off, r.n, buf); err != nil {
		return fmt.Errorf("%s %s: %w", r.kind, r.name, err)
	}
	return nil
}

// forget drops a stub's piece once it is encoded again (Recompact) but
// keeps its record: a report may still name the old stub, and must read
// its metadata, not panic. The stub can no longer be written.
func (c *Compactor) forget(stub *fn.KubeObject) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.records[stub]; ok {
		r.span = span{}
	}
}

// drop forgets a stub once it is written.
func (c *Compactor) drop(stub *fn.KubeObject) {
	if c == nil {
		return
	}
	c.mu.Lock()
	delete(c.records, stub)
	c.mu.Unlock()
}

// itemPiece is the piece of one item as Write encodes it, without the
// items key that only the first item of a list keeps.
func itemPiece(obj *fn.KubeObject) ([]byte, error) {
	b, err := itemBytes(obj, true)
	if err != nil {
		return nil, err
	}
	// A copy of exactly its length: the encoder's buffer has grown by
	// doubling, and would keep up to twice the text alive.
	return bytes.Clone(b[len(itemsKey):]), nil
}

// Stub is a copy of obj's apiVersion, kind and metadata, nothing else,
// and of the labels and annotations only those keep allows: what the
// function reads of an item it is done with.
//
// A stub stands for every item of the list until it is written, so its
// size is what memory grows with once the text is spooled. The key nodes
// are shared by all stubs (keyNode): nothing changes a key of a stub
// (setting an annotation replaces or adds a value), and a node takes 160
// bytes. A labels or annotations map that keep empties is left out: it
// reads as no map. Measured by TestStubSize.
func Stub(obj *fn.KubeObject, keep StubFilter) *fn.KubeObject {
	n := nodeOf(obj)
	stub := &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap, Content: make([]*yaml.Node, 0, 6)}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "apiVersion", "kind":
			stub.Content = append(stub.Content, keyNode(k), scalarCopy(v))
		case "metadata":
			stub.Content = append(stub.Content, keyNode(k), stubMetadata(v, keep))
		}
	}
	return fn.MoveToKubeObject(yaml.NewRNode(stub))
}

// stubKey is what a shared key node is known by.
type stubKey struct {
	kind       yaml.Kind
	style      yaml.Style
	tag, value string
}

// stubKeys holds the shared key nodes: the keys of apiVersion, kind and
// metadata and of what keep allows, a vocabulary that does not grow with
// the list.
var stubKeys sync.Map

// keyNode is the shared copy of key k (a scalar; any other is copied).
// Its position and comments are not kept: nothing reads them of a stub.
func keyNode(k *yaml.Node) *yaml.Node {
	if k.Kind != yaml.ScalarNode || k.Anchor != "" {
		return yaml.CopyYNode(k)
	}
	key := stubKey{k.Kind, k.Style, k.Tag, k.Value}
	if n, ok := stubKeys.Load(key); ok {
		return n.(*yaml.Node)
	}
	n, _ := stubKeys.LoadOrStore(key, &yaml.Node{Kind: k.Kind, Style: k.Style, Tag: k.Tag, Value: k.Value})
	return n.(*yaml.Node)
}

// scalarCopy copies a value node: its own, since setting a value may
// write the node in place.
func scalarCopy(v *yaml.Node) *yaml.Node {
	if v.Kind != yaml.ScalarNode {
		return yaml.CopyYNode(v)
	}
	return &yaml.Node{Kind: v.Kind, Style: v.Style, Tag: v.Tag, Value: v.Value, Anchor: v.Anchor}
}

// stubMetadata copies a metadata map, its labels and annotations
// filtered by keep.
func stubMetadata(meta *yaml.Node, keep StubFilter) *yaml.Node {
	if keep == nil || meta.Kind != yaml.MappingNode {
		return yaml.CopyYNode(meta)
	}
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: meta.Tag, Style: meta.Style}
	for i := 0; i+1 < len(meta.Content); i += 2 {
		k, v := meta.Content[i], meta.Content[i+1]
		switch {
		case (k.Value == "labels" || k.Value == "annotations") && v.Kind == yaml.MappingNode:
			var kept []*yaml.Node
			for j := 0; j+1 < len(v.Content); j += 2 {
				if keep(k.Value, v.Content[j].Value) {
					kept = append(kept, keyNode(v.Content[j]), scalarCopy(v.Content[j+1]))
				}
			}
			if len(kept) > 0 {
				out.Content = append(out.Content, keyNode(k), &yaml.Node{Kind: yaml.MappingNode, Tag: v.Tag, Content: kept})
			}
		case k.Value == "name" || k.Value == "namespace" || k.Value == "labels" || k.Value == "annotations":
			out.Content = append(out.Content, keyNode(k), scalarCopy(v))
		}
	}
	return out
}

// WriteCompacted is Write for a list whose items may be stubs of c: a
// stub is written as the piece c encoded for it, any other item is
// encoded as Write does. c is closed first and released afterwards.
// Nothing is written when an item could not be encoded or kept (an error
// of Close); an error reading the spool stops the writing where it is.
func WriteCompacted(w io.Writer, rl *fn.ResourceList, c *Compactor) error {
	defer c.Release()
	if err := c.Close(); err != nil {
		return err
	}
	var full fn.KubeObjects
	at := map[int]int{}
	for i, it := range rl.Items {
		if !c.has(it) {
			at[i] = len(full)
			full = append(full, it)
		} else if !c.encoded(it) {
			m := c.Meta(it)
			return fmt.Errorf("%s %s stands in the list but was never encoded", m.GetKind(), m.GetName())
		}
	}
	pieces, err := takePieces(full)
	if err != nil {
		return err
	}
	tail, err := tailPieces(rl)
	if err != nil {
		return err
	}
	if len(pieces) > 0 {
		pieces[0] = pieces[0][len(itemsKey):]
	}
	if _, err := io.WriteString(w, header); err != nil {
		return err
	}
	if len(rl.Items) > 0 {
		if _, err := io.WriteString(w, itemsKey); err != nil {
			return err
		}
	}
	buf := make([]byte, 1<<16)
	for i, it := range rl.Items {
		if j, ok := at[i]; ok {
			b := pieces[j]
			pieces[j] = nil
			if _, err := w.Write(b); err != nil {
				return err
			}
		} else {
			if err := c.copyPiece(w, it, buf); err != nil {
				return err
			}
			c.drop(it)
		}
		rl.Items[i] = nil
	}
	for _, p := range tail {
		if _, err := w.Write(p); err != nil {
			return err
		}
	}
	return nil
}
