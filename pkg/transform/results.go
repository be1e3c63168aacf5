package transform

import (
	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/resourcelist"
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

var severities = map[finding.Severity]fn.Severity{
	finding.Error:   fn.Error,
	finding.Warning: fn.Warning,
	finding.Info:    fn.Info,
}

// krmResults turns findings into KRM results that name the resource, the
// field and the file, as kpt shows them.
// Each object is read through its metadata.
func krmResults(findings []settled) fn.Results {
	var out fn.Results
	for _, r := range findings {
		for _, f := range r.found {
			res := &fn.Result{Message: f.Message, Severity: severities[f.Severity]}
			if m := r.meta; m != nil && !m.Empty() {
				res.ResourceRef = &fn.ResourceRef{
					APIVersion: m.APIVersion,
					Kind:       m.Kind,
					Name:       m.Name,
					Namespace:  m.Namespace,
				}
				if p := m.Path(); p != "" {
					res.File = &fn.File{Path: p, Index: m.Index()}
				}
			}
			if f.Path != "" {
				res.Field = &fn.Field{Path: f.Path}
				if f.Current != "" {
					res.Field.CurrentValue = shorten(f.Current)
				}
				if f.Proposed != "" {
					res.Field.ProposedValue = f.Proposed
				}
			}
			out = append(out, res)
		}
	}
	return out
}

// shorten keeps a value shown in a result readable: a hostile input may
// hold a megabyte where a port number belongs.
func shorten(v string) string {
	const limit = 200
	if len(v) <= limit {
		return v
	}
	return v[:limit] + "..."
}

// settled is a report on an object the loop is done with: its findings
// and the object's metadata, which results read.
type settled struct {
	meta  *resourcelist.Meta
	found finding.List
}
