package transform

import (
	"strings"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
)

var severities = map[finding.Severity]fn.Severity{
	finding.Error:   fn.Error,
	finding.Warning: fn.Warning,
	finding.Info:    fn.Info,
}

// results turns findings into KRM results that name the resource, the
// field and the file, as kpt shows them.
// Each object is read through its record.
func results(findings []settled) fn.Results {
	var out fn.Results
	for _, r := range findings {
		for _, f := range r.found {
			res := &fn.Result{Message: f.Message, Severity: severities[f.Severity]}
			if m := r.rec; m != nil && !m.Empty() {
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

// kpt still writes the pre-"internal." spellings of the placement
// annotations next to the current ones; both must stay in step.
const (
	legacyPathAnnotation  = "config.kubernetes.io/path"
	legacyIndexAnnotation = "config.kubernetes.io/index"
)

// isPlacement reports whether an annotation says where an object lives
// in the package (kpt's path and index annotations).
func isPlacement(key string) bool {
	switch key {
	case kioutil.PathAnnotation, legacyPathAnnotation, kioutil.IndexAnnotation, legacyIndexAnnotation:
		return true
	}
	return strings.HasPrefix(key, "internal.config.kubernetes.io/") && key != kioutil.IdAnnotation
}
