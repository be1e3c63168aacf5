package resourcelist

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// placeholders swap the strings of results that cannot be written as the
// SDK writes them (see resultsPiece) for plain words, and put them back.
type placeholders struct {
	// prefix starts every placeholder; no string of the results holds it.
	prefix string
	// originals are the swapped strings by placeholder.
	originals map[string]string
}

func newPlaceholders(results fn.Results) *placeholders {
	// Every string of the results is in their JSON, and a placeholder
	// needs no escaping there.
	all, _ := json.Marshal(results)
	text := string(all)
	prefix := "jobset-flux-placeholder-"
	for n := 0; strings.Contains(text, prefix); n++ {
		prefix = fmt.Sprintf("jobset-flux-placeholder%d-", n)
	}
	return &placeholders{prefix: prefix, originals: map[string]string{}}
}

// unwritable reports whether s is a string yaml.v3 writes as a literal
// block that cannot be read back.
func unwritable(s string) bool {
	return strings.HasPrefix(s, "\t") && strings.Contains(s, "\n")
}

// str returns s, or a placeholder for it.
func (p *placeholders) str(s string) string {
	if !unwritable(s) {
		return s
	}
	ph := fmt.Sprintf("%s%d", p.prefix, len(p.originals))
	p.originals[ph] = s
	return ph
}

// value swaps the strings of a decoded value (a result's current or
// proposed value), in lists and maps too.
func (p *placeholders) value(v any) any {
	switch v := v.(type) {
	case string:
		return p.str(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = p.value(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = p.value(e)
		}
		return out
	}
	return v
}

// result returns a copy of r with its strings swapped.
func (p *placeholders) result(r *fn.Result) *fn.Result {
	c := *r
	c.Message = p.str(r.Message)
	if r.ResourceRef != nil {
		ref := *r.ResourceRef
		ref.APIVersion, ref.Kind, ref.Name, ref.Namespace = p.str(ref.APIVersion), p.str(ref.Kind), p.str(ref.Name), p.str(ref.Namespace)
		c.ResourceRef = &ref
	}
	if r.Field != nil {
		f := *r.Field
		f.Path, f.CurrentValue, f.ProposedValue = p.str(f.Path), p.value(f.CurrentValue), p.value(f.ProposedValue)
		c.Field = &f
	}
	if r.File != nil {
		f := *r.File
		f.Path = p.str(f.Path)
		c.File = &f
	}
	if r.Tags != nil {
		c.Tags = make(map[string]string, len(r.Tags))
		for k, v := range r.Tags {
			c.Tags[k] = p.str(v)
		}
	}
	return &c
}

// restore puts the swapped strings back into the nodes, double-quoted.
func (p *placeholders) restore(n *yaml.Node) {
	if n.Kind == yaml.ScalarNode {
		if s, ok := p.originals[n.Value]; ok {
			n.Value, n.Tag = s, yaml.NodeTagString
			n.Style = yaml.DoubleQuotedStyle
		}
		return
	}
	for _, c := range n.Content {
		p.restore(c)
	}
}
