package transform

import (
	"encoding/base64"
	"path"
	"strings"

	"github.com/jobset-flux/jobset-flux/pkg/fluxfiles"
	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// secretTypeOpaque is corev1.SecretTypeOpaque (see jobset.IndexedCompletion
// for why k8s.io/api is not imported; TestAPIConstants compares them).
const secretTypeOpaque = "Opaque"

// metadata builds the metadata of a generated object: in the JobSet's
// namespace, labelled back to it, and, when the JobSet came from a file
// (kpt), placed in a file next to it.
func metadata(p *plan.Plan, name, kind string, jobsetAnnotations map[string]string) *yaml.Node {
	meta := mapping("name", name)
	if p.Namespace != "" {
		set(meta, "namespace", str(p.Namespace), "")
	}
	set(meta, "labels", mapping(plan.ManagedByLabel, plan.ManagedByValue, plan.JobSetLabel, p.Name), "")
	annotations := mapping()
	for _, key := range []string{kioutil.PathAnnotation, legacyPathAnnotation} {
		if jsPath, ok := jobsetAnnotations[key]; ok {
			set(annotations, key, str(path.Join(path.Dir(jsPath), strings.ToLower(kind)+"_"+name+".yaml")), "")
		}
	}
	if len(annotations.Content) > 0 {
		set(meta, "annotations", annotations, "")
	}
	return meta
}

// configMap builds the ConfigMap holding the scripts and the broker config.
func configMap(p *plan.Plan, files fluxfiles.Files, jobsetAnnotations map[string]string) *fn.KubeObject {
	data := mapping()
	contents := files.Map()
	for _, key := range []string{plan.BrokerConfig, plan.EntrypointScript, plan.InitScript, plan.SetupScript} {
		content, ok := contents[key]
		if !ok {
			continue // setup.sh exists only with the setup setting
		}
		v := str(content)
		v.Style = yaml.LiteralStyle
		set(data, key, v, "")
	}
	return object(mapping(
		"apiVersion", "v1",
		"kind", "ConfigMap",
		"metadata", metadata(p, p.ConfigMapName, "ConfigMap", jobsetAnnotations),
		"data", data,
	))
}

// secret builds the Secret holding the CURVE certificate. It uses data,
// not stringData, so the certificate is never shown as plain text in a diff.
func secret(p *plan.Plan, cert []byte, jobsetAnnotations map[string]string) *fn.KubeObject {
	return object(mapping(
		"apiVersion", "v1",
		"kind", "Secret",
		"metadata", metadata(p, p.SecretName, "Secret", jobsetAnnotations),
		"type", secretTypeOpaque,
		"data", mapping(plan.CertKey, base64.StdEncoding.EncodeToString(cert)),
	))
}

func object(n *yaml.Node) *fn.KubeObject {
	quoteAmbiguous(n)
	return fn.MoveToKubeObject(yaml.NewRNode(n))
}
