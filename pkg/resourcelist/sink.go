package resourcelist

// Where each item the function is done with goes. The list is written
// sorted, so no item can be written before every item is known: a Sink
// holds them until Write. A MemorySink holds the trees; a SpoolSink
// encodes each item as it is put (in the background, on all CPUs) into
// the piece Write would encode for it and keeps only the piece (in a
// spool file, spool.go, or in memory) and the item's record: memory then
// follows the records and the trees in flight, not the trees of the
// whole list (a tree takes several times its text).

import (
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// Sink takes each item the function is done with, at its position in
// the output, and writes the list in the SDK's sort order.
type Sink interface {
	// Put takes obj, whose record is rec, at position at of the output,
	// in place of what was put there before. obj is the sink's from then
	// on: the caller must not read or change it.
	Put(at int, rec *Meta, obj *fn.KubeObject)
	// Edit applies edit to the item put at position at (the rare edit
	// made once the whole list is known: a generated object moved to a
	// free file). The item's sort key must not change.
	Edit(at int, edit func(*fn.KubeObject)) error
	// Write writes the list: the items put, sorted as ToYAML sorts them
	// (ties in position order), then fc and results. Nothing is written
	// when an item could not be encoded or kept.
	Write(w io.Writer, fc *fn.KubeObject, results fn.Results) error
	// Release frees what the sink holds; it cannot be used afterwards.
	Release()
}

// grow makes s long enough to hold position at.
func grow[T any](s []T, at int) []T {
	if at >= len(s) {
		s = append(s, make([]T, at+1-len(s))...)
	}
	return s
}

// MemorySink holds the items put as trees; Write encodes them at the
// end (Write, the function).
type MemorySink struct {
	items   fn.KubeObjects
	records []*Meta
}

// NewMemorySink returns an empty MemorySink.
func NewMemorySink() *MemorySink { return &MemorySink{} }

// Put implements Sink.
func (s *MemorySink) Put(at int, rec *Meta, obj *fn.KubeObject) {
	s.items, s.records = grow(s.items, at), grow(s.records, at)
	s.items[at], s.records[at] = obj, rec
}

// Edit implements Sink.
func (s *MemorySink) Edit(at int, edit func(*fn.KubeObject)) error {
	if at >= len(s.items) || s.items[at] == nil {
		return fmt.Errorf("no item was put at %d", at)
	}
	edit(s.items[at])
	return nil
}

// Items are the items put, in position order (unsorted), for a caller
// that writes them itself (standalone mode, fn.ResourceListProcessor).
func (s *MemorySink) Items() fn.KubeObjects {
	var out fn.KubeObjects
	for _, it := range s.items {
		if it != nil {
			out = append(out, it)
		}
	}
	return out
}

// Write implements Sink.
func (s *MemorySink) Write(w io.Writer, fc *fn.KubeObject, results fn.Results) error {
	at := sortedPositions(s.records)
	items := make(fn.KubeObjects, len(at))
	for k, i := range at {
		items[k] = s.items[i]
	}
	s.Release()
	return Write(w, &fn.ResourceList{Items: items, FunctionConfig: fc, Results: results})
}

// Release implements Sink.
func (s *MemorySink) Release() { s.items, s.records = nil, nil }

// SpoolSink encodes each item put into its piece and keeps the piece and
// the item's record; see the top of this file. The zero value is not
// usable: call NewSpoolSink.
type SpoolSink struct {
	encoders *encoders

	mu      sync.Mutex
	entries []*entry // by position; nil: nothing put there
	spool   *spool   // nil: the pieces are kept in memory
	err     error
	closed  bool
}

// entry is an item put: its record and where its piece is.
type entry struct {
	rec *Meta
	span
}

// span is where a piece is: its text, in memory, or its place in the
// spool (the text is then nil). A piece is never empty: no text and no
// length is a piece not there (yet).
type span struct {
	text   []byte
	off, n int64
}

// spooled reports whether the piece is in the spool.
func (s span) spooled() bool { return s.text == nil && s.n > 0 }

// encoded reports whether the piece is there.
func (s span) encoded() bool { return s.text != nil || s.n > 0 }

// NewSpoolSink starts one encoder per CPU, whose pieces go to sp (nil:
// memory); the sink owns sp from then on and closes it in Release. When
// the encoders fall behind, Put waits (startEncoders).
func NewSpoolSink(sp *Spool) *SpoolSink {
	s := &SpoolSink{encoders: startEncoders(runtime.GOMAXPROCS(0))}
	if sp != nil {
		s.spool = sp.s
	}
	return s
}

// Put implements Sink: obj is queued to be encoded.
func (s *SpoolSink) Put(at int, rec *Meta, obj *fn.KubeObject) {
	e := &entry{rec: rec}
	s.mu.Lock()
	s.entries = grow(s.entries, at)
	s.entries[at] = e
	s.mu.Unlock()
	s.encoders.encode(obj, listEntry, func(b []byte, err error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if err != nil {
			s.fail(fmt.Errorf("%s %s: %w", rec.Kind, rec.Name, err))
		}
		s.store(e, b)
	})
}

// fail records the first error; s.mu is held.
func (s *SpoolSink) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

// store keeps b as e's piece, in the spool when there is one; s.mu is
// held. An error writing the spool is kept for Close.
func (s *SpoolSink) store(e *entry, b []byte) {
	if s.spool == nil || s.err != nil {
		e.span = span{text: b}
		return
	}
	off, err := s.spool.add(b)
	if err != nil {
		s.fail(fmt.Errorf("%s %s: %w", e.rec.Kind, e.rec.Name, err))
		return
	}
	e.span = span{off: off, n: int64(len(b))}
}

// Close waits for every queued item to be encoded and stops the
// encoders. It returns the first encoding error.
func (s *SpoolSink) Close() error {
	s.mu.Lock()
	closed := s.closed
	s.closed = true
	s.mu.Unlock()
	if !closed {
		s.encoders.stop()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !closed && s.spool != nil {
		if err := s.spool.flush(); err != nil {
			s.fail(err)
		}
	}
	return s.err
}

// Release implements Sink: it closes s and its spool, whose file is then
// gone.
func (s *SpoolSink) Release() {
	s.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.spool != nil {
		s.spool.close()
		s.spool = nil
	}
	s.entries = nil
}

// Edit implements Sink, after Close: the item is read back from its
// piece, edited and encoded again.
func (s *SpoolSink) Edit(at int, edit func(*fn.KubeObject)) error {
	if err := s.Close(); err != nil {
		return err
	}
	s.mu.Lock()
	var e *entry
	if at < len(s.entries) {
		e = s.entries[at]
	}
	s.mu.Unlock()
	if e == nil || !e.encoded() {
		return fmt.Errorf("no item was put at %d", at)
	}
	b, err := s.piece(e)
	if err != nil {
		return err
	}
	rl, err := Parse([]byte(header + itemsKey + string(b)))
	if err != nil || len(rl.Items) != 1 {
		return fmt.Errorf("reading back %s %s: %v", e.rec.Kind, e.rec.Name, err)
	}
	obj := rl.Items[0]
	edit(obj)
	nb, err := encodeItem(obj, listEntry)
	if err != nil {
		return fmt.Errorf("%s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// After Close the spool's writer is flushed: the piece is written
	// and flushed again, so that it can be read back like the others.
	s.store(e, nb)
	if s.spool != nil && s.err == nil {
		s.fail(s.spool.flush())
	}
	return s.err
}

// piece returns e's piece, read back from the spool when it is there.
func (s *SpoolSink) piece(e *entry) ([]byte, error) {
	if !e.spooled() {
		return e.text, nil
	}
	b := make([]byte, e.n)
	if err := s.spool.read(b, e.off); err != nil {
		return nil, fmt.Errorf("%s %s: %w", e.rec.Kind, e.rec.Name, err)
	}
	return b, nil
}

// copyPiece writes e's piece to w, from memory or from the spool
// (through buf, so that no piece is held whole).
func (s *SpoolSink) copyPiece(w io.Writer, e *entry, buf []byte) error {
	if !e.spooled() {
		_, err := w.Write(e.text)
		return err
	}
	if err := s.spool.copyTo(w, e.off, e.n, buf); err != nil {
		return fmt.Errorf("%s %s: %w", e.rec.Kind, e.rec.Name, err)
	}
	return nil
}

// Write implements Sink; s is released afterwards. An error reading the
// spool stops the writing where it is.
func (s *SpoolSink) Write(w io.Writer, fc *fn.KubeObject, results fn.Results) error {
	defer s.Release()
	if err := s.Close(); err != nil {
		return err
	}
	records := make([]*Meta, len(s.entries))
	for i, e := range s.entries {
		if e != nil {
			records[i] = e.rec
		}
	}
	order := sortedPositions(records)
	tail, err := encodeTail(fc, results)
	if err != nil {
		return err
	}
	buf := make([]byte, 1<<16)
	return writeOut(w, listOutput(len(order), tail), len(order), func(w io.Writer, k int) error {
		err := s.copyPiece(w, s.entries[order[k]], buf)
		s.entries[order[k]] = nil
		return err
	})
}
