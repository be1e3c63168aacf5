// Writing a ResourceList: the same bytes as the SDK's ResourceList.ToYAML,
// at a fraction of its time and memory.
//
// ToYAML encodes the whole list as one YAML document, and go-yaml's
// emitter keeps every event of a document until the document ends: for a
// list of N items the event queue, and the garbage collector's work on it,
// grow with all N. Encoding each item on its own, in the place it takes in
// the list, bounds that queue by the largest item, so memory follows the
// largest item rather than the whole list (measurements in
// docs/contributing/performance.md, "What made it fast", 1).

package resourcelist

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// header is what ToYAML writes before the first field of every list.
const header = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n"

// itemsKey opens the items sequence; each item below it starts with "- "
// in column 0 (kyaml's compact sequence style).
const itemsKey = "items:\n"

// sortItems puts items in the order ToYAML writes them (apiVersion, kind,
// namespace, name), keeping the input order of items that tie. Each key
// is computed once: the SDK's sort computes both keys on every
// comparison, which grows slow with large lists (docs/contributing/performance.md).
func sortItems(items fn.KubeObjects) {
	records := make([]*Record, len(items))
	for i, it := range items {
		records[i] = &Record{APIVersion: it.GetAPIVersion(), Kind: it.GetKind(), Namespace: it.GetNamespace(), Name: it.GetName()}
	}
	sorted := make(fn.KubeObjects, 0, len(items))
	for _, i := range sortedPositions(records) {
		sorted = append(sorted, items[i])
	}
	copy(items, sorted)
}

// Encode returns rl as YAML, with the bytes of rl.ToYAML: like ToYAML it
// first sorts rl.Items in place (apiVersion, kind, namespace, name; ties
// keep their order).
//
// Every piece is encoded by the SDK inside a list that holds only that
// piece, so it takes the same column and context as in the whole list
// and comes out the same; only the shared header is cut off. Items are
// encoded on all CPUs: encoding only reads the nodes, and an alias to
// another item's anchor is written by name.
//
// One difference is deliberate: an item whose text ends in a comment is
// followed by a blank line (itemBytes), so that every YAML reader (kpt's,
// and this function's next run) attaches the comment where it was.
func Encode(rl *fn.ResourceList) ([]byte, error) {
	sortItems(rl.Items)
	return encode(rl, true)
}

// encode is Encode; without separate, the bytes are exactly ToYAML's.
func encode(rl *fn.ResourceList, separate bool) ([]byte, error) {
	pieces := make([][]byte, len(rl.Items), len(rl.Items)+2)
	errs := make([]error, len(rl.Items))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(rl.Items)) {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(rl.Items); i = int(next.Add(1)) - 1 {
				// An item's nodes are its own (Parse copied the aliases
				// across items), so this edit stays in its goroutine.
				yamltree.SafeBlockStyles(yamltree.NodeOf(rl.Items[i]))
				pieces[i], errs[i] = itemBytes(rl.Items[i], separate)
				if i > 0 && errs[i] == nil {
					pieces[i] = pieces[i][len(itemsKey):]
				}
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("items[%d] (%s %s): %w", i, rl.Items[i].GetKind(), rl.Items[i].GetName(), err)
		}
	}
	if rl.FunctionConfig != nil && !rl.FunctionConfig.IsEmpty() {
		yamltree.SafeBlockStyles(yamltree.NodeOf(rl.FunctionConfig))
		b, err := piece(&fn.ResourceList{FunctionConfig: rl.FunctionConfig})
		if err != nil {
			return nil, fmt.Errorf("functionConfig: %w", err)
		}
		pieces = append(pieces, b)
	}
	if len(rl.Results) > 0 {
		b, err := resultsPiece(rl.Results)
		if err != nil {
			return nil, fmt.Errorf("results: %w", err)
		}
		pieces = append(pieces, b)
	}
	size := len(header)
	for _, p := range pieces {
		size += len(p)
	}
	out := make([]byte, 0, size)
	out = append(out, header...)
	for _, p := range pieces {
		out = append(out, p...)
	}
	return out, nil
}

// itemBytes encodes obj as the only item of a list, the items key
// included. When separate is set and the text ends in a comment (a foot
// comment on the item's last line), a blank line follows it: yaml.v3
// attaches a comment that is followed at once by the next item to the
// deepest node before it, whatever its indentation, and one followed by
// a blank line to the node of its own column (the node it was read from),
// so without the line a comment at the end of a kpt package file moved
// into the last field the function wrote, and kpt, which copies comments
// back from its own reading of the file, wrote it a second time.
func itemBytes(obj *fn.KubeObject, separate bool) ([]byte, error) {
	b, err := piece(&fn.ResourceList{Items: fn.KubeObjects{obj}, FunctionConfig: fn.NewEmptyKubeObject()})
	if err != nil || !separate || !endsInComment(yamltree.NodeOf(obj)) {
		return b, err
	}
	return append(separateComments(b, trailingCommentLines(yamltree.NodeOf(obj))), '\n'), nil
}

// trailingCommentLines counts the lines of the foot comments that end
// n's text (see endsInComment): how many of its last lines can be
// comments, and not the text of a block scalar.
func trailingCommentLines(n *yaml.Node) int {
	count := func(c string) int {
		if c == "" {
			return 0
		}
		return strings.Count(c, "\n") + 1
	}
	lines := 0
	for n != nil {
		lines += count(n.FootComment)
		switch {
		case n.Kind == yaml.MappingNode && len(n.Content) >= 2:
			lines += count(n.Content[len(n.Content)-2].FootComment)
			n = n.Content[len(n.Content)-1]
		case n.Kind == yaml.SequenceNode && len(n.Content) > 0:
			n = n.Content[len(n.Content)-1]
		default:
			n = nil
		}
	}
	return lines
}

// separateComments writes a blank line between two comment lines among
// the last n lines of b (the comments that end an item) where the second
// is less indented than the first. yaml.v3 reads a run of comments of
// falling indentation after a nested block onto the deepest node, and
// each group followed by a blank line onto the key of its own column:
// with the lines, each comes back where the function had it, as the last
// one does thanks to the blank line after the item.
func separateComments(b []byte, n int) []byte {
	lines := bytes.SplitAfter(b, []byte("\n"))
	if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	start := max(len(lines)-n, 0)
	indent := func(l []byte) int { return len(l) - len(bytes.TrimLeft(l, " ")) }
	comment := func(l []byte) bool { return bytes.HasPrefix(bytes.TrimLeft(l, " "), []byte("#")) }
	out := make([]byte, 0, len(b)+n)
	for i, l := range lines {
		if i > start && comment(l) && comment(lines[i-1]) && indent(l) < indent(lines[i-1]) {
			out = append(out, '\n')
		}
		out = append(out, l...)
	}
	return out
}

// endsInComment reports whether the text of n ends in a foot comment: one
// of n, or of a node on its last line of descent (last key and value of
// a map, last item of a list).
func endsInComment(n *yaml.Node) bool {
	for n != nil {
		if n.FootComment != "" {
			return true
		}
		switch {
		case n.Kind == yaml.MappingNode && len(n.Content) >= 2:
			if n.Content[len(n.Content)-2].FootComment != "" {
				return true
			}
			n = n.Content[len(n.Content)-1]
		case n.Kind == yaml.SequenceNode && len(n.Content) > 0:
			n = n.Content[len(n.Content)-1]
		default:
			return false
		}
	}
	return false
}

// piece encodes a list with one field besides apiVersion and kind and
// returns that field's lines.
func piece(rl *fn.ResourceList) ([]byte, error) {
	b, err := rl.ToYAML()
	if err != nil {
		return nil, err
	}
	rest, ok := bytes.CutPrefix(b, []byte(header))
	if !ok {
		return nil, fmt.Errorf("the SDK wrote a ResourceList that does not start with %q", header)
	}
	return rest, nil
}

// resultsPiece encodes results as piece does, but for strings that
// yaml.v3 would write as a literal block no reader accepts (a message or
// value with a line break whose first line starts with a tab,
// yamltree.SafeBlockStyles): the SDK converts results to nodes through
// that text, and failed on it, so the function could write nothing. Such
// strings are swapped for placeholders, the list is encoded, and the
// strings go back, double-quoted, into the nodes of that text.
func resultsPiece(results fn.Results) ([]byte, error) {
	p := newPlaceholders(results)
	swapped := make(fn.Results, len(results))
	for i, r := range results {
		swapped[i] = p.result(r)
	}
	b, err := piece(&fn.ResourceList{Results: swapped, FunctionConfig: fn.NewEmptyKubeObject()})
	if err != nil || len(p.originals) == 0 {
		return b, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("reading back the results the SDK wrote: %w", err)
	}
	p.restore(&doc)
	yamltree.SafeBlockStyles(&doc)
	return yaml.Marshal(&doc)
}
