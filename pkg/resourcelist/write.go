package resourcelist

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// Write writes rl to w in the bytes Encode returns, with less memory:
// each item is taken out of rl.Items (the slot set to nil) as soon as it
// is encoded, so that its tree can be collected while the next ones are
// encoded, and the pieces are written one by one instead of being joined
// into one more copy of the whole output. Peak memory is then about the
// larger of the trees and the output text (a tree takes several times
// its text), where Encode and one write need the trees, every piece and
// their concatenation at once. rl.Items holds only nils afterwards.
//
// Nothing is written unless every piece was encoded: an error leaves w
// untouched, as Encode's does.
func Write(w io.Writer, rl *fn.ResourceList) error {
	pieces, err := takePieces(rl.Items)
	if err != nil {
		return err
	}
	tail, err := tailPieces(rl)
	if err != nil {
		return err
	}
	pieces = append(pieces, tail...)
	if _, err := io.WriteString(w, header); err != nil {
		return err
	}
	for i, p := range pieces {
		if _, err := w.Write(p); err != nil {
			return err
		}
		pieces[i] = nil
	}
	return nil
}

// takePieces encodes each item as Encode does, on all CPUs, and clears
// its slot once it is encoded.
func takePieces(items fn.KubeObjects) ([][]byte, error) {
	pieces := make([][]byte, len(items), len(items)+2)
	errs := make([]error, len(items))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(items)) {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(items); i = int(next.Add(1)) - 1 {
				obj := items[i]
				b, err := itemBytes(obj, true)
				switch {
				case err != nil:
					errs[i] = fmt.Errorf("items[%d] (%s %s): %w", i, obj.GetKind(), obj.GetName(), err)
				case i > 0:
					b = b[len(itemsKey):]
				}
				pieces[i] = b
				items[i] = nil
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return pieces, nil
}

// tailPieces encodes what follows the items: the functionConfig and the
// results.
func tailPieces(rl *fn.ResourceList) ([][]byte, error) {
	var pieces [][]byte
	if rl.FunctionConfig != nil && !rl.FunctionConfig.IsEmpty() {
		b, err := piece(&fn.ResourceList{FunctionConfig: rl.FunctionConfig})
		if err != nil {
			return nil, fmt.Errorf("functionConfig: %w", err)
		}
		pieces = append(pieces, b)
	}
	if len(rl.Results) > 0 {
		b, err := resultPieces(rl.Results)
		if err != nil {
			return nil, fmt.Errorf("results: %w", err)
		}
		pieces = append(pieces, b)
	}
	return pieces, nil
}

// resultsKey opens the results sequence, as itemsKey the items.
const resultsKey = "results:\n"

// resultPieces is the text piece writes for results, made one result at
// a time. The SDK turns each result into nodes on its own and the
// emitter writes each entry in the same column and context whatever
// the others are, so the text is the same; but encoded as one document
// the emitter keeps every event until the end, a large part of the
// live heap at the peak (docs/contributing/performance.md, "Memory").
// Each result is encoded as resultsPiece encodes a list that holds only
// it (so a string no reader would accept is written double-quoted), and
// all but the first lose the results key, as items lose the items key
// (takePieces).
func resultPieces(results fn.Results) ([]byte, error) {
	var out []byte
	for i, r := range results {
		b, err := resultsPiece(fn.Results{r})
		if err != nil {
			return nil, fmt.Errorf("results[%d]: %w", i, err)
		}
		if i > 0 {
			rest, ok := bytes.CutPrefix(b, []byte(resultsKey))
			if !ok {
				return nil, fmt.Errorf("results[%d]: the SDK wrote results that do not start with %q", i, resultsKey)
			}
			b = rest
		}
		out = append(out, b...)
	}
	return out, nil
}
