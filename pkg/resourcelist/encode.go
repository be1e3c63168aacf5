// Encoding: the text each item, the functionConfig and the results take
// in the output, the same bytes as the SDK's ResourceList.ToYAML (or
// KubeObject.String, in a plain YAML stream) at a fraction of its time
// and memory; write.go puts the pieces together.
//
// ToYAML encodes the whole list as one YAML document, and go-yaml's
// emitter keeps every event of a document until the document ends: for a
// list of N items the event queue, and the garbage collector's work on it,
// grow with all N. Encoding each item on its own, in the place it takes in
// the list, bounds that queue by the largest item, so memory follows the
// largest item rather than the whole list (measurements in
// docs/contributing/performance.md, "What made it fast", 1). Every piece
// is encoded by the SDK inside a list that holds only that piece, so it
// takes the same column and context as in the whole list and comes out
// the same; only the shared header is cut off.

package resourcelist

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// header is what ToYAML writes before the first field of every list.
const header = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n"

// itemsKey opens the items sequence; each item below it starts with "- "
// in column 0 (kyaml's compact sequence style).
const itemsKey = "items:\n"

// framing is how an item's text stands in the output.
type framing int

const (
	// listEntry is an entry of a ResourceList's items, as the SDK's
	// ToYAML writes it, without the items key. One difference is
	// deliberate: when the text ends in a comment (a foot comment on the
	// item's last line), a blank line follows it. yaml.v3 attaches a
	// comment that is followed at once by the next item to the deepest
	// node before it, whatever its indentation, and one followed by a
	// blank line to the node of its own column (the node it was read
	// from), so without the line a comment at the end of a kpt package
	// file moved into the last field the function wrote, and kpt, which
	// copies comments back from its own reading of the file, wrote it a
	// second time.
	listEntry framing = iota
	// sdkListEntry is listEntry without the blank line: exactly ToYAML's
	// bytes, which the tests compare with.
	sdkListEntry
	// document is a document of a plain YAML stream, as the SDK's
	// KubeObject.String writes it.
	document
)

// encodeItem is an item's text in the output, framed by f: the one
// place where an item becomes bytes, on every path that writes one. Its
// tree is made safe first (safeNode), so obj's nodes are edited.
func encodeItem(obj *fn.KubeObject, f framing) ([]byte, error) {
	n := safeNode(obj)
	if f == document {
		var b bytes.Buffer
		if err := yaml.NewEncoder(&b).Encode(n); err != nil {
			return nil, err
		}
		return b.Bytes(), nil
	}
	b, err := piece(&fn.ResourceList{Items: fn.KubeObjects{obj}, FunctionConfig: fn.NewEmptyKubeObject()})
	if err != nil {
		return nil, err
	}
	b = b[len(itemsKey):]
	if f == listEntry && endsInComment(n) {
		return append(separateComments(b, trailingCommentLines(n)), '\n'), nil
	}
	// A copy of exactly its length: the encoder's buffer has grown by
	// doubling, and would keep up to twice the text alive while the
	// piece waits to be written.
	return bytes.Clone(b), nil
}

// safeNode returns obj's node with every block scalar that no reader
// could read back written double-quoted instead
// (yamltree.SafeBlockStyles): whatever the function was handed or
// made, what it writes reads back as the same text.
func safeNode(obj *fn.KubeObject) *yaml.Node {
	n := yamltree.NodeOf(obj)
	yamltree.SafeBlockStyles(n)
	return n
}

// encodeConfig is the functionConfig's text in a ResourceList, made
// safe as an item's is; nil when there is none.
func encodeConfig(fc *fn.KubeObject) ([]byte, error) {
	if fc == nil || fc.IsEmpty() {
		return nil, nil
	}
	safeNode(fc)
	b, err := piece(&fn.ResourceList{FunctionConfig: fc})
	if err != nil {
		return nil, fmt.Errorf("functionConfig: %w", err)
	}
	return b, nil
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

// resultsKey opens the results sequence, as itemsKey the items.
const resultsKey = "results:\n"

// encodeResults is the text piece writes for results, made one result at
// a time. The SDK turns each result into nodes on its own and the
// emitter writes each entry in the same column and context whatever
// the others are, so the text is the same; but encoded as one document
// the emitter keeps every event until the end, a large part of the
// live heap at the peak (docs/contributing/performance.md, "Memory").
// Each result is encoded as resultsPiece encodes a list that holds only
// it (so a string no reader would accept is written double-quoted), and
// all but the first lose the results key, as items lose the items key
// (listEntry).
func encodeResults(results fn.Results) ([]byte, error) {
	if len(results) == 0 {
		return nil, nil
	}
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
