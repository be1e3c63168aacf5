package jobsetrender

import (
	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// MaxStoredObject is the largest object the API server can store: etcd
// refuses a request over its --max-request-bytes, whose default this is
// (go.etcd.io/etcd/server/v3 embed.DefaultMaxRequestBytes). The API
// server's own limit on a request body is twice that, so etcd's is the
// one that binds. A custom resource such as a JobSet is stored as its
// JSON.
const MaxStoredObject = 1<<20 + 1<<19

// TotalAnnotationSize is the most the API server accepts in one object's
// annotations, keys and values together (k8s.io/apimachinery
// pkg/api/validation TotalAnnotationSizeLimitB: the function does not
// link that package, see TestNoTypedAPILinked; TestAPIConstants holds the
// copy to it).
const TotalAnnotationSize = 256 << 10

// LastAppliedAnnotation is where client-side kubectl apply, and Argo CD's
// default sync, keep the whole object as JSON (k8s.io/api/core/v1
// LastAppliedConfigAnnotation).
const LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// checkSizes checks the objects the render writes against what the API
// server stores. The size is the object's JSON (yamltree.JSONSize): what
// kubectl and Argo CD send and what etcd holds for a custom resource,
// less the metadata and status the server adds. It is measured on the
// tree, not taken from the writer: the writer writes YAML, after the
// render has decided what goes out (a JobSet with an error must be left
// as it was), and in memory only once every result is made.
func checkSizes(js *fn.KubeObject, generated []*fn.KubeObject) finding.List {
	var found finding.List
	root := yamltree.NodeOf(js)
	size := yamltree.JSONSize(root)
	if size > MaxStoredObject {
		found.Errorf("spec.replicatedJobs", "the rendered JobSet %q would be %d bytes as JSON, more than the %d etcd accepts in one request by default (--max-request-bytes), so the API server cannot store it; use fewer replicatedJobs (more replicas or completions in each), or split the instance into several JobSets", js.GetName(), size, MaxStoredObject)
		return found
	}
	warnLastApplied(&found, root, size)
	for _, obj := range generated {
		n := yamltree.NodeOf(obj)
		warnLastApplied(&found, n, yamltree.JSONSize(n))
	}
	return found
}

// warnLastApplied warns when client-side apply would refuse the object
// n, whose JSON is size bytes: the last-applied annotation holds that
// JSON and a line end, beside the object's other annotations, and all of
// them count against TotalAnnotationSize. Server-side apply keeps no
// such copy.
func warnLastApplied(found *finding.List, n *yaml.Node, size int) {
	total := len(LastAppliedAnnotation) + size + len("\n")
	if annotations := yamltree.GetPath(n, "metadata", "annotations"); annotations != nil {
		for i := 0; i+1 < len(annotations.Content); i += 2 {
			if k := annotations.Content[i].Value; k != LastAppliedAnnotation {
				total += len(k) + len(annotations.Content[i+1].Value)
			}
		}
	}
	if total <= TotalAnnotationSize {
		return
	}
	kind, name := yamltree.ScalarText(yamltree.Get(n, "kind")), yamltree.ScalarText(yamltree.GetPath(n, "metadata", "name"))
	found.Warnf("metadata.annotations", "the rendered %s %q is %d bytes as JSON: client-side `kubectl apply` (and Argo CD's default sync) copies it whole into the %s annotation, which makes its annotations %d bytes, more than the %d the API server accepts, so the apply is refused; apply with `kubectl apply --server-side` (Argo CD: the ServerSideApply=true sync option), which keeps no such copy", kind, name, size, LastAppliedAnnotation, total, TotalAnnotationSize)
}
