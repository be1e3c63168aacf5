package jobsetrender

import (
	"encoding/base64"
	"maps"
	"slices"

	"github.com/jobset-flux/jobset-flux/pkg/fluxfiles"
	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// secretTypeOpaque is corev1.SecretTypeOpaque (see jobset.IndexedCompletion
// for why k8s.io/api is not imported; TestAPIConstants compares them).
const secretTypeOpaque = "Opaque"

// generated is what the function generates for a JobSet besides its
// edits: the ConfigMap's files, and the CURVE certificate of a new Secret
// (nil when none is generated).
type generated struct {
	files fluxfiles.Files
	cert  []byte
}

// metadata builds the metadata of a generated object: in the JobSet's
// namespace, labelled back to it, ordered before it and kept as long by
// Argo CD and Helm (plan.Ordering), and, when the JobSet came from a file
// (kpt), placed in a file next to it.
func metadata(p *plan.Plan, name, kind string, jobsetAnnotations map[string]string) *yaml.Node {
	meta := yamltree.Map(yamltree.KV("name", yamltree.String(name)))
	if p.Namespace != "" {
		yamltree.Set(meta, "namespace", yamltree.String(p.Namespace), "")
	}
	yamltree.Set(meta, "labels", yamltree.Map(
		yamltree.KV(plan.ManagedByLabel, yamltree.String(plan.ManagedByValue)),
		yamltree.KV(plan.JobSetLabel, yamltree.String(p.Name)),
	), "")
	annotations := yamltree.Map()
	for _, key := range slices.Sorted(maps.Keys(p.Ordering)) {
		yamltree.Set(annotations, key, yamltree.String(p.Ordering[key]), "")
	}
	for _, key := range []string{kioutil.PathAnnotation, LegacyPathAnnotation} {
		if jsPath, ok := jobsetAnnotations[key]; ok {
			yamltree.Set(annotations, key, yamltree.String(objectFile(jsPath, kind, name)), "")
		}
	}
	if len(annotations.Content) > 0 {
		yamltree.Set(meta, "annotations", annotations, "")
	}
	return meta
}

// configMap builds the ConfigMap holding the scripts and the broker config.
func configMap(p *plan.Plan, files fluxfiles.Files, jobsetAnnotations map[string]string) *fn.KubeObject {
	data := yamltree.Map()
	contents := files.Map()
	for _, key := range []string{plan.BrokerConfig, plan.EntrypointScript, plan.InitScript, plan.SetupScript} {
		content, ok := contents[key]
		if !ok {
			continue // no setup.sh without the setup setting, no init.sh without a view
		}
		v := yamltree.String(content)
		v.Style = yaml.LiteralStyle // unless it cannot be one: see object
		yamltree.Set(data, key, v, "")
	}
	return object("ConfigMap", metadata(p, p.ConfigMapName, "ConfigMap", jobsetAnnotations), yamltree.KV("data", data))
}

// secret builds the Secret holding the CURVE certificate. It uses data,
// not stringData, so the certificate is never shown as plain text in a diff.
func secret(p *plan.Plan, cert []byte, jobsetAnnotations map[string]string) *fn.KubeObject {
	return object("Secret", metadata(p, p.SecretName, "Secret", jobsetAnnotations),
		yamltree.KV("type", yamltree.String(secretTypeOpaque)),
		yamltree.KV("data", yamltree.Map(yamltree.KV(plan.CertKey, yamltree.String(base64.StdEncoding.EncodeToString(cert))))),
	)
}

// object is a core (v1) object of kind with metadata and the fields that
// follow it, as build writes it.
func object(kind string, metadata *yaml.Node, fields ...yamltree.Pair) *fn.KubeObject {
	return build("v1", kind, metadata, fields...)
}

// build is an object of apiVersion and kind with metadata and the fields
// that follow it, quoted as YAML 1.1 readers need. The ConfigMap's files
// are literal blocks, but for a text no block can hold (a setup script
// whose first line starts with a tab), which is double-quoted.
func build(apiVersion, kind string, metadata *yaml.Node, fields ...yamltree.Pair) *fn.KubeObject {
	n := yamltree.Map(append([]yamltree.Pair{
		yamltree.KV("apiVersion", yamltree.String(apiVersion)),
		yamltree.KV("kind", yamltree.String(kind)),
		yamltree.KV("metadata", metadata),
	}, fields...)...)
	yamltree.QuoteAmbiguous(n)
	yamltree.SafeBlockStyles(n)
	return fn.MoveToKubeObject(yaml.NewRNode(n))
}
