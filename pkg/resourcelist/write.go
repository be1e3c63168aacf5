// Writing: the one writer of the output. Every path (a ResourceList
// from memory or from a spool, a plain YAML stream in standalone mode)
// encodes its items with encodeItem, in the background on all CPUs
// (encoders), and writes the pieces in one of two framings (writeOut).

package resourcelist

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// sortedPositions is the positions whose record is not nil, in the
// order ToYAML writes their items: by sortKey, ties by position.
func sortedPositions(records []*Meta) []int {
	var at []int
	for i, r := range records {
		if r != nil {
			at = append(at, i)
		}
	}
	keys := make([]string, len(records))
	for _, i := range at {
		keys[i] = records[i].sortKey()
	}
	slices.SortStableFunc(at, func(a, b int) int { return strings.Compare(keys[a], keys[b]) })
	return at
}

// sortItems puts items in the order ToYAML writes them (apiVersion, kind,
// namespace, name), keeping the input order of items that tie. Each key
// is computed once: the SDK's sort computes both keys on every
// comparison, which grows slow with large lists (docs/contributing/performance.md).
func sortItems(items fn.KubeObjects) {
	records := make([]*Meta, len(items))
	for i, it := range items {
		records[i] = &Meta{APIVersion: it.GetAPIVersion(), Kind: it.GetKind(), Namespace: it.GetNamespace(), Name: it.GetName()}
	}
	sorted := make(fn.KubeObjects, 0, len(items))
	for _, i := range sortedPositions(records) {
		sorted = append(sorted, items[i])
	}
	copy(items, sorted)
}

// encoders encode items in the background, one goroutine per CPU at
// most: the one parallel loop of the writer. Encoding only reads and
// edits the item's own nodes (Parse copied the aliases across items,
// and an alias to another item's anchor is written by name), so items
// are encoded in any order.
type encoders struct {
	jobs chan encodeJob
	wg   sync.WaitGroup
}

// encodeJob is an item to encode, in framing f, and what takes its
// piece.
type encodeJob struct {
	obj  *fn.KubeObject
	f    framing
	done func([]byte, error)
}

// startEncoders starts n encoders. Their queue is short: when they fall
// behind, encode waits, so that trees do not pile up in it.
func startEncoders(n int) *encoders {
	e := &encoders{jobs: make(chan encodeJob, n)}
	for range n {
		e.wg.Go(func() {
			for j := range e.jobs {
				j.done(encodeItem(j.obj, j.f))
			}
		})
	}
	return e
}

// encode queues obj; done gets its piece, on an encoder's goroutine.
func (e *encoders) encode(obj *fn.KubeObject, f framing, done func([]byte, error)) {
	e.jobs <- encodeJob{obj: obj, f: f, done: done}
}

// stop waits until every item queued is encoded.
func (e *encoders) stop() {
	close(e.jobs)
	e.wg.Wait()
}

// encodeAll encodes items, framed by f, on all CPUs, and clears each
// slot once its item is queued: its tree can be collected as soon as
// it is encoded, while the next ones are. The error names the first item
// that could not be encoded by its place in items.
func encodeAll(items fn.KubeObjects, f framing) ([][]byte, error) {
	pieces := make([][]byte, len(items))
	errs := make([]error, len(items))
	e := startEncoders(min(runtime.GOMAXPROCS(0), len(items)))
	for i, obj := range items {
		e.encode(obj, f, func(b []byte, err error) {
			if err != nil {
				err = fmt.Errorf("items[%d] (%s %s): %w", i, obj.GetKind(), obj.GetName(), err)
			}
			pieces[i], errs[i] = b, err
		})
		items[i] = nil
	}
	e.stop()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return pieces, nil
}

// output is how the pieces of a framing stand together: what comes
// before the first item, between two, and after the last.
type output struct {
	open      string
	separator string
	tail      [][]byte
}

// listOutput is a ResourceList of n items, then the functionConfig and
// the results (tail, encodeTail).
func listOutput(n int, tail [][]byte) output {
	if n == 0 {
		return output{open: header, tail: tail}
	}
	return output{open: header + itemsKey, tail: tail}
}

// streamOutput is a plain YAML stream: its documents, "---" between.
var streamOutput = output{separator: "---\n"}

// writeOut writes n item pieces framed by o: item writes the k-th piece
// to w. It is the one place the output's pieces are put together.
func writeOut(w io.Writer, o output, n int, item func(w io.Writer, k int) error) error {
	if _, err := io.WriteString(w, o.open); err != nil {
		return err
	}
	for k := range n {
		if k > 0 && o.separator != "" {
			if _, err := io.WriteString(w, o.separator); err != nil {
				return err
			}
		}
		if err := item(w, k); err != nil {
			return err
		}
	}
	for _, p := range o.tail {
		if _, err := w.Write(p); err != nil {
			return err
		}
	}
	return nil
}

// writePieces writes pieces framed by o, each dropped once written.
func writePieces(w io.Writer, o output, pieces [][]byte) error {
	return writeOut(w, o, len(pieces), func(w io.Writer, k int) error {
		_, err := w.Write(pieces[k])
		pieces[k] = nil
		return err
	})
}

// encodeTail encodes what follows a list's items: the functionConfig and
// the results.
func encodeTail(fc *fn.KubeObject, results fn.Results) ([][]byte, error) {
	config, err := encodeConfig(fc)
	if err != nil {
		return nil, err
	}
	res, err := encodeResults(results)
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	var tail [][]byte
	for _, p := range [][]byte{config, res} {
		if p != nil {
			tail = append(tail, p)
		}
	}
	return tail, nil
}

// Write writes rl to w as a ResourceList, in the bytes Encode returns,
// with less memory: each item is taken out of rl.Items (the slot set to
// nil) as soon as it is queued to be encoded, so that its tree can be
// collected while the next ones are encoded, and the pieces are written
// one by one instead of being joined into one more copy of the whole
// output. Peak memory is then about the larger of the trees and the
// output text (a tree takes several times its text). rl.Items holds
// only nils afterwards. Unlike Encode, Write does not sort: the items
// are written in their order.
//
// Nothing is written unless every piece was encoded: an error leaves w
// untouched.
func Write(w io.Writer, rl *fn.ResourceList) error {
	pieces, err := encodeAll(rl.Items, listEntry)
	if err != nil {
		return err
	}
	return writeList(w, pieces, rl.FunctionConfig, rl.Results)
}

// writeList writes a ResourceList of the item pieces, fc and results.
func writeList(w io.Writer, pieces [][]byte, fc *fn.KubeObject, results fn.Results) error {
	tail, err := encodeTail(fc, results)
	if err != nil {
		return err
	}
	return writePieces(w, listOutput(len(pieces), tail), pieces)
}

// Encode returns rl as YAML, with the bytes of rl.ToYAML: like ToYAML it
// first sorts rl.Items in place (apiVersion, kind, namespace, name; ties
// keep their order), and it keeps them. The bytes are Write's, which
// differ from ToYAML's in one way only: an item whose text ends in a
// comment is followed by a blank line (listEntry).
func Encode(rl *fn.ResourceList) ([]byte, error) {
	sortItems(rl.Items)
	return encode(rl, true)
}

// encode is Encode without the sort; without separate, the bytes are
// exactly ToYAML's (sdkListEntry).
func encode(rl *fn.ResourceList, separate bool) ([]byte, error) {
	f := listEntry
	if !separate {
		f = sdkListEntry
	}
	pieces, err := encodeAll(slices.Clone(rl.Items), f)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := writeList(&out, pieces, rl.FunctionConfig, rl.Results); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// WriteStream writes items to w as a plain YAML stream (standalone mode):
// each item as a document, in the order of items, "---" between. Like
// Write, it takes each item out of items once queued, and writes nothing
// unless every item was encoded.
func WriteStream(w io.Writer, items fn.KubeObjects) error {
	pieces, err := encodeAll(items, document)
	if err != nil {
		return err
	}
	return writePieces(w, streamOutput, pieces)
}
