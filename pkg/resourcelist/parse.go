package resourcelist

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"

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
// machine (a node is about 150 bytes).
const maxAliasNodes = 1 << 20

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

func parse(in []byte) (*fn.ResourceList, error) {
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
	root := doc.Content[0]
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
	if kind := scalar(top["kind"]); kind != kio.ResourceListKind {
		return nil, fmt.Errorf("its kind is %s, want kind: %s", strconv.Quote(kind), kio.ResourceListKind)
	}
	if v := scalar(top["apiVersion"]); v != Versions[0] && v != Versions[1] {
		return nil, fmt.Errorf("its apiVersion is %s; the KRM function protocol needs apiVersion: %s", strconv.Quote(v), kio.ResourceListAPIVersion)
	}
	// The functionConfig's duplicates make a config that readers read
	// differently: refused with the whole list, like the top's. Those in
	// items are reported against their item by the function.
	if fc := top["functionConfig"]; fc != nil {
		var dupErr error
		yamltree.Duplicates(fc, "functionConfig", func(path string) {
			if dupErr == nil {
				dupErr = fmt.Errorf("%s %s", path, yamltree.DuplicateMessage)
			}
		})
		if dupErr != nil {
			return nil, dupErr
		}
	}

	ex := &yamltree.Expander{Budget: maxAliasNodes}
	rl := &fn.ResourceList{FunctionConfig: fn.NewEmptyKubeObject()}
	var nodes []*yaml.Node
	if items := top["items"]; items != nil && !isNull(items) {
		if items.Kind == yaml.AliasNode {
			return nil, errors.New("items is an alias; write the list out")
		}
		if items.Kind != yaml.SequenceNode {
			return nil, fmt.Errorf("items is %s; it must be a list of objects", yamltree.Describe(items))
		}
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
	}
	var config *yaml.Node
	if fc := top["functionConfig"]; fc != nil && !isNull(fc) {
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
		config = fc
	}
	if err := expandAcross(ex, nodes, config); err != nil {
		return nil, err
	}
	if res := top["results"]; res != nil && !isNull(res) {
		if res.Kind == yaml.MappingNode {
			res = get(res, "items")
		}
		if res != nil && res.Kind == yaml.SequenceNode {
			if err := res.Decode(&rl.Results); err != nil {
				return nil, fmt.Errorf("results: %w", err)
			}
		}
	}
	for _, n := range nodes {
		yamltree.SpellEmptyNulls(n)
		rl.Items = append(rl.Items, fn.MoveToKubeObject(yaml.NewRNode(n)))
	}
	if config != nil {
		yamltree.SpellEmptyNulls(config)
		rl.FunctionConfig = fn.MoveToKubeObject(yaml.NewRNode(config))
	}
	return rl, nil
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

func get(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func scalar(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}
