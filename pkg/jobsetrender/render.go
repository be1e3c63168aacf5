package jobsetrender

import (
	"fmt"

	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/jobset-flux/jobset-flux/pkg/resourcelist"
	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// render is the last step of the pipeline: it edits the JobSet's YAML
// nodes as the plan says (editJobSet) and builds the ConfigMap, Secret
// and NetworkPolicy generated for it, all quoted as YAML 1.1 readers need, every
// block scalar one that reads back (yamltree.SafeBlockStyles), each
// generated object with the digest of what was written (stampDigest).
// The generated objects take their file placement from the JobSet's
// annotations.
func render(rn *yaml.RNode, pl *plan.Plan, gen generated, annotations map[string]string) (*fn.KubeObject, []*fn.KubeObject, error) {
	root := rn.YNode()
	if err := edit(root, pl); err != nil {
		return nil, nil, err
	}
	root, err := settle(root, pl)
	if err != nil {
		return nil, nil, err
	}
	unreportRecorded(pl, annotations[DefaultsAnnotation])
	objects := []*fn.KubeObject{configMap(pl, gen.files, annotations)}
	if gen.cert != nil {
		objects = append(objects, secret(pl, gen.cert, annotations))
	}
	if pl.Settings.NetworkPolicy {
		objects = append(objects, networkPolicy(pl, annotations))
	}
	if pl.Owner != nil {
		objects = append(objects, ownerRole(pl, annotations), ownerRoleBinding(pl, annotations))
	}
	for _, obj := range objects {
		stampDigest(obj)
	}
	return fn.MoveToKubeObject(yaml.NewRNode(root)), objects, nil
}

// edit is the render of a stripped JobSet's nodes.
func edit(root *yaml.Node, pl *plan.Plan) error {
	if err := editJobSet(root, pl); err != nil {
		return err
	}
	recordDefaults(root, pl)
	dropEmptied(root)
	yamltree.QuoteAmbiguous(root)
	yamltree.SafeBlockStyles(root)
	return nil
}

// maxSettle bounds the renders settle tries; one more than the two a
// comment needs to find its place has been enough in every case fuzzed.
const maxSettle = 4

// settle returns the rendered JobSet as the next render of its own output
// writes it. A YAML reader attaches a comment to a node by where the
// comment is in the text, and the text changes with what the function
// adds: a comment at the end of the file, or after the last item of a
// list the function appends to, is written after the function's last
// addition and read back as that node's. The strip keeps such comments
// (after the list they were in), so that the next render writes them
// elsewhere; settle writes them there at once. Each round writes the
// JobSet as an item of a ResourceList, as the function's output does,
// reads it back, strips and renders it again, until the text stays the
// same. A JobSet without comments is written as it is.
func settle(root *yaml.Node, pl *plan.Plan) (*yaml.Node, error) {
	if !hasUserComments(root) {
		return root, nil
	}
	text, err := itemText(root)
	if err != nil {
		return nil, err
	}
	for range maxSettle {
		again, err := readItem(text)
		if err != nil {
			return nil, err
		}
		stripRendering(again)
		if err := edit(again, pl); err != nil {
			return nil, err
		}
		next, err := itemText(again)
		if err != nil {
			return nil, err
		}
		if next == text {
			return again, nil
		}
		root, text = again, next
	}
	return root, nil
}

// itemText writes n as an item of a list, followed by another as in the
// function's output (the JobSet sorts before its ConfigMap), with the
// function's own writer: what follows a comment decides where the reader
// attaches it.
func itemText(n *yaml.Node) (string, error) {
	next := yamltree.Map(yamltree.KV("apiVersion", yamltree.String("v1")), yamltree.KV("kind", yamltree.String("ConfigMap")))
	rl := &fn.ResourceList{Items: fn.KubeObjects{fn.MoveToKubeObject(yaml.NewRNode(n)), fn.MoveToKubeObject(yaml.NewRNode(next))}}
	b, err := resourcelist.Encode(rl)
	if err != nil {
		return "", fmt.Errorf("writing the rendered JobSet: %w", err)
	}
	return string(b), nil
}

// readItem reads back the item itemText wrote, with the function's own
// reader.
func readItem(text string) (*yaml.Node, error) {
	rl, err := resourcelist.Parse([]byte(text))
	if err != nil {
		return nil, fmt.Errorf("reading back the rendered JobSet: %w", err)
	}
	if len(rl.Items) != 2 {
		return nil, fmt.Errorf("reading back the rendered JobSet: no item")
	}
	return yamltree.NodeOf(rl.Items[0]), nil
}

// hasUserComments reports whether any node under n has a comment other
// than the file modes the function writes.
func hasUserComments(n *yaml.Node) bool {
	if n.HeadComment != "" || n.FootComment != "" || n.LineComment != "" && !isModeComment(n.LineComment) {
		return true
	}
	for _, c := range n.Content {
		if hasUserComments(c) {
			return true
		}
	}
	return false
}
