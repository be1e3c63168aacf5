package resourcelist

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Versions are the ResourceList apiVersions of the KRM function protocol:
// v1, and v1alpha1 from older kpt and kustomize.
var Versions = []string{kio.ResourceListAPIVersion, "config.kubernetes.io/v1alpha1"}

// ErrNotResourceList is wrapped by every error of Parse.
var ErrNotResourceList = errors.New("the input is not a ResourceList")

// maxAliasNodes bounds the nodes that expanding aliases across items may
// add: far more than any package shares, far less than the memory of the
// machine.
const maxAliasNodes = 1 << 20

// IsResourceList reports whether the first YAML document of in is a map
// whose kind is ResourceList, whatever else is wrong with it: Parse says
// what.
func IsResourceList(in []byte) bool {
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(in)).Decode(&doc); err != nil || len(doc.Content) == 0 {
		return false
	}
	kind, _ := yamltree.Lookup(doc.Content[0], "kind")
	return yamltree.ScalarText(kind) == kio.ResourceListKind
}

// Parse reads a ResourceList as fn.ParseResourceList does, and refuses
// what that parser silently gets wrong:
//
//   - a key written twice at the top (two items: keys, the second list was
//     dropped; two functionConfig: keys, the first won) or in the
//     functionConfig;
//   - more than one YAML document, an items value that is not a list, an
//     item that is not a map (errors in the SDK's internal types);
//   - an apiVersion other than the protocol's, read from the parsed tree
//     (not from the text, where a line of a multi-line scalar can look
//     like a key).
//
// An alias whose anchor is in another item, or outside the items, is
// replaced by a copy of what it points to (as is an item that is itself an
// alias): items are written one by one and sorted, so such an alias could
// be written before its anchor, which makes the output unreadable, and an
// edit of the anchored item would change the aliasing one.
func Parse(in []byte) (*fn.ResourceList, error) {
	rl, err := parse(in)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotResourceList, err)
	}
	return rl, nil
}

// parse is Parse without the wrapping: one step per part of the list.
func parse(in []byte) (*fn.ResourceList, error) {
	root, err := decodeOne(in)
	if err != nil {
		return nil, err
	}
	top, err := topFields(root)
	if err != nil {
		return nil, err
	}
	ex := &yamltree.Expander{Budget: maxAliasNodes}
	items, err := itemNodes(ex, top["items"])
	if err != nil {
		return nil, err
	}
	config, err := configNode(ex, top["functionConfig"])
	if err != nil {
		return nil, err
	}
	if err := expandAcross(ex, items, config); err != nil {
		return nil, err
	}
	keepAfterItems(root, items)
	reattachTrailing(in, items)
	rl := &fn.ResourceList{FunctionConfig: fn.NewEmptyKubeObject()}
	if rl.Results, err = results(top["results"]); err != nil {
		return nil, err
	}
	for _, n := range items {
		yamltree.SpellEmptyNulls(n)
		rl.Items = append(rl.Items, fn.MoveToKubeObject(yaml.NewRNode(n)))
	}
	if config != nil {
		yamltree.SpellEmptyNulls(config)
		rl.FunctionConfig = fn.MoveToKubeObject(yaml.NewRNode(config))
	}
	return rl, nil
}

// decodeOne returns the root of the one YAML document in holds.
func decodeOne(in []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(in))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if err == io.EOF {
			return nil, errors.New("it is empty")
		}
		return nil, err
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case err == nil:
		return nil, errors.New("it holds more than one YAML document; a ResourceList is one document")
	case err != io.EOF:
		return nil, err
	}
	return doc.Content[0], nil
}

// topFields returns the fields of the list's top map by key, once it knows
// that no key is written twice (at the top or in the functionConfig) and
// that kind and apiVersion are the protocol's.
func topFields(root *yaml.Node) (map[string]*yaml.Node, error) {
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("it is %s, not a map with kind: ResourceList", yamltree.Describe(root))
	}
	top := map[string]*yaml.Node{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k := root.Content[i].Value
		if _, dup := top[k]; dup {
			return nil, fmt.Errorf("the key %s appears twice at the top of the ResourceList; keep one (one of them would be ignored)", strconv.Quote(k))
		}
		top[k] = root.Content[i+1]
	}
	if kind := yamltree.ScalarText(top["kind"]); kind != kio.ResourceListKind {
		return nil, fmt.Errorf("its kind is %s, want kind: %s", strconv.Quote(kind), kio.ResourceListKind)
	}
	if v := yamltree.ScalarText(top["apiVersion"]); v != Versions[0] && v != Versions[1] {
		return nil, fmt.Errorf("its apiVersion is %s; the KRM function protocol needs apiVersion: %s", strconv.Quote(v), kio.ResourceListAPIVersion)
	}
	// The functionConfig's duplicates make a config that readers read
	// differently: refused with the whole list, like the top's. Those in
	// items are reported against their item by the function.
	if fc := top["functionConfig"]; fc != nil {
		if path, dup := yamltree.FirstDuplicate(fc, "functionConfig"); dup {
			return nil, fmt.Errorf("%s %s", path, yamltree.DuplicateMessage)
		}
	}
	return top, nil
}

// itemNodes returns the maps of the items list (nil or null: none), each
// item that is an alias replaced by a copy of its target.
func itemNodes(ex *yamltree.Expander, items *yaml.Node) ([]*yaml.Node, error) {
	if items == nil || yamltree.IsNull(items) {
		return nil, nil
	}
	if items.Kind == yaml.AliasNode {
		return nil, errors.New("items is an alias; write the list out")
	}
	if items.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("items is %s; it must be a list of objects", yamltree.Describe(items))
	}
	var nodes []*yaml.Node
	for i, it := range items.Content {
		if it.Kind == yaml.AliasNode {
			cp, err := ex.Copy(it)
			if err != nil {
				return nil, fmt.Errorf("items[%d]: %w", i, err)
			}
			it = cp
		}
		if it.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("items[%d] is %s; each item must be an object (a map)", i, yamltree.Describe(it))
		}
		nodes = append(nodes, it)
	}
	return nodes, nil
}

// configNode returns the functionConfig's map (nil for none or null), a
// copy of the target when it is an alias.
func configNode(ex *yamltree.Expander, fc *yaml.Node) (*yaml.Node, error) {
	if fc == nil || yamltree.IsNull(fc) {
		return nil, nil
	}
	if fc.Kind == yaml.AliasNode {
		cp, err := ex.Copy(fc)
		if err != nil {
			return nil, fmt.Errorf("functionConfig: %w", err)
		}
		fc = cp
	}
	if fc.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("functionConfig is %s; it must be an object (a map)", yamltree.Describe(fc))
	}
	return fc, nil
}

// results decodes the results an earlier function left: a list, or (as
// some orchestrators write it) a map holding the list under items.
// Anything else is dropped, as the SDK drops it.
func results(res *yaml.Node) (fn.Results, error) {
	if res == nil || yamltree.IsNull(res) {
		return nil, nil
	}
	if res.Kind == yaml.MappingNode {
		res, _ = yamltree.Lookup(res, "items")
	}
	var out fn.Results
	if res != nil && res.Kind == yaml.SequenceNode {
		if err := res.Decode(&out); err != nil {
			return nil, fmt.Errorf("results: %w", err)
		}
	}
	return out, nil
}

// expandAcross replaces every alias of an item (or of the functionConfig)
// whose anchor is not in that same item with a copy of its target.
func expandAcross(ex *yamltree.Expander, items []*yaml.Node, config *yaml.Node) error {
	all := items
	if config != nil {
		all = append(all[:len(all):len(all)], config)
	}
	aliased := false
	for _, n := range all {
		if yamltree.HasAlias(n) {
			aliased = true
			break
		}
	}
	if !aliased {
		return nil
	}
	owner := map[*yaml.Node]int{}
	for i, n := range all {
		yamltree.Anchored(n, func(a *yaml.Node) { owner[a] = i })
	}
	for i, n := range all {
		err := ex.ExpandIf(n, func(target *yaml.Node) bool {
			o, ok := owner[target]
			return !ok || o != i
		})
		if err != nil {
			if i == len(items) {
				return fmt.Errorf("functionConfig: %w", err)
			}
			return fmt.Errorf("items[%d]: %w", i, err)
		}
	}
	return nil
}

// reattachTrailing puts each comment at the end of an item on the node
// of its own column. yaml.v3 attaches a comment that the next item
// follows at once to the deepest node before it, whatever its
// indentation, but one followed by a blank line (or by the end of the
// file, as kpt reads a package file) to the last key of its column: kpt
// hands over a package file's end-of-file comment at its item's level
// with the next file's item right after it, and copies its own reading
// back onto the output when the function's has the comment elsewhere,
// which wrote it twice. Encode's blank line after such a comment keeps it
// where this puts it.
func reattachTrailing(in []byte, items []*yaml.Node) {
	var lines [][]byte
	for _, item := range items {
		chain := lastChain(item)
		holder := -1
		for i, n := range chain {
			if n.FootComment != "" {
				holder = i
			}
		}
		if holder < 0 {
			continue
		}
		if lines == nil {
			lines = bytes.Split(in, []byte("\n"))
		}
		col, ok := commentColumn(lines, maxLine(chain[holder]), chain[holder].FootComment)
		if !ok || chain[holder].Column == col {
			continue
		}
		for i := holder - 1; i >= 0; i-- {
			if n := chain[i]; n.Column == col && isKey(chain, i) {
				if n.FootComment == "" {
					n.FootComment, chain[holder].FootComment = chain[holder].FootComment, ""
				}
				break
			}
		}
	}
}

// lastChain is the nodes on n's last line of descent: each map's last key
// and its value, each list's last item.
func lastChain(n *yaml.Node) []*yaml.Node {
	chain := []*yaml.Node{n}
	for {
		switch {
		case n.Kind == yaml.MappingNode && len(n.Content) >= 2:
			chain = append(chain, n.Content[len(n.Content)-2], n.Content[len(n.Content)-1])
			n = n.Content[len(n.Content)-1]
		case n.Kind == yaml.SequenceNode && len(n.Content) > 0:
			n = n.Content[len(n.Content)-1]
			chain = append(chain, n)
		default:
			return chain
		}
	}
}

// isKey reports whether chain[i] is a map key (followed by its value).
func isKey(chain []*yaml.Node, i int) bool {
	if i == 0 || i+1 >= len(chain) {
		return false
	}
	// A key follows the map it is in; a value or a list item does not.
	parent := chain[i-1]
	if parent.Kind != yaml.MappingNode {
		return false
	}
	return len(parent.Content) >= 2 && parent.Content[len(parent.Content)-2] == chain[i]
}

// maxLine is the last line n's text takes (1-based).
func maxLine(n *yaml.Node) int {
	last := n.Line
	if n.Kind == yaml.ScalarNode && (n.Style&(yaml.LiteralStyle|yaml.FoldedStyle)) != 0 {
		last += strings.Count(n.Value, "\n")
	}
	for _, c := range n.Content {
		last = max(last, maxLine(c))
	}
	return last
}

// commentColumn finds the first line of comment after line from (1-based)
// among the comment and blank lines that follow, and returns its column
// (1-based, as yaml.Node columns).
func commentColumn(lines [][]byte, from int, comment string) (int, bool) {
	first, _, _ := strings.Cut(comment, "\n")
	for i := max(from, 0); i < len(lines); i++ {
		t := bytes.TrimSpace(lines[i])
		switch {
		case string(t) == first:
			return len(lines[i]) - len(bytes.TrimLeft(lines[i], " ")) + 1, true
		case len(t) > 0 && t[0] != '#':
			return 0, false
		}
	}
	return 0, false
}

// keepAfterItems moves the comments between the last item and the key
// that follows the items (functionConfig, results), which yaml.v3 reads
// as that key's head comment, to the end of the last item: the list is
// written from the values of its top keys, so the comment was dropped.
func keepAfterItems(root *yaml.Node, items []*yaml.Node) {
	if len(items) == 0 || root.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+3 < len(root.Content); i += 2 {
		next := root.Content[i+2]
		if root.Content[i].Value != "items" || next.HeadComment == "" {
			continue
		}
		last := items[len(items)-1]
		if last.FootComment != "" {
			last.FootComment += "\n"
		}
		last.FootComment += next.HeadComment
		next.HeadComment = ""
	}
}
