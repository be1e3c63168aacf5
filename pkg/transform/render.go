package transform

import (
	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// render is the last step of the pipeline: it edits the JobSet's YAML
// nodes as the plan says (editJobSet) and builds the ConfigMap and
// Secret generated for it, all quoted as YAML 1.1 readers need and every
// block scalar one that reads back (yamltree.SafeBlockStyles). The
// generated objects take their file placement from the JobSet's
// annotations.
func render(rn *yaml.RNode, pl *plan.Plan, gen generated, annotations map[string]string) (*fn.KubeObject, []*fn.KubeObject, error) {
	if err := editJobSet(rn.YNode(), pl); err != nil {
		return nil, nil, err
	}
	dropEmptied(rn.YNode())
	yamltree.QuoteAmbiguous(rn.YNode())
	yamltree.SafeBlockStyles(rn.YNode())
	objects := []*fn.KubeObject{configMap(pl, gen.files, annotations)}
	if gen.cert != nil {
		objects = append(objects, secret(pl, gen.cert, annotations))
	}
	return fn.MoveToKubeObject(rn), objects, nil
}
