package jobset

import (
	"fmt"

	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Field paths of what decides who starts a JobSet.
const (
	SuspendPath   = SpecKey + ".suspend"
	ManagedByPath = SpecKey + ".managedBy"
)

// Queueing is what decides who starts the JobSet, as written: a queue
// (a label), spec.suspend and spec.managedBy.
type Queueing struct {
	// Labels are metadata.labels (nil when there are none).
	Labels map[string]string
	// Suspend is spec.suspend, nil when unset.
	Suspend *bool
	// ManagedBy is spec.managedBy, "" when unset.
	ManagedBy string
}

// queueing reads metadata.labels, spec.suspend and spec.managedBy.
func (r *reader) queueing(meta, spec *yaml.Node) Queueing {
	q := Queueing{
		Suspend:   r.boolean(spec, SpecKey, "suspend"),
		ManagedBy: r.str(spec, SpecKey, "managedBy"),
	}
	labels := r.mapping(meta, "metadata", "labels")
	if labels == nil {
		return q
	}
	q.Labels = map[string]string{}
	for i := 0; i+1 < len(labels.Content); i += 2 {
		k, v := labels.Content[i].Value, yamltree.NonNull(labels.Content[i+1])
		if v == nil || v.Kind != yaml.ScalarNode || v.ShortTag() != "!!str" {
			r.found.Errorf(fmt.Sprintf("metadata.labels[%s]", k), "label values must be strings (quote it), got %s", yamltree.DescribeValue(v))
			continue
		}
		q.Labels[k] = v.Value
	}
	return q
}
