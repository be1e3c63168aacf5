package jobsetrender

import (
	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// NetworkPolicyAPIVersion and NetworkPolicyKind are the generated
// NetworkPolicy's type. Another API group's NetworkPolicy (Calico's, for
// one) is another resource: it neither clashes with nor stands for it.
const (
	NetworkPolicyAPIVersion = "networking.k8s.io/v1"
	NetworkPolicyKind       = "NetworkPolicy"
)

// NetworkPolicyName is the name of the NetworkPolicy generated for the
// JobSet named jobSet.
func NetworkPolicyName(jobSet string) string { return jobSet + plan.NetworkPolicySuffix }

// networkPolicy builds the NetworkPolicy that lets the instance's pods,
// and only them, reach each other. It opens every port between them, not
// only the TBON port: MPI, PMI and the jobs themselves listen on ports of
// their own choosing. It opens nothing else, DNS included: policies add
// up, and the namespace's own policy decides who may resolve names.
func networkPolicy(p *plan.Plan, jobsetAnnotations map[string]string) *fn.KubeObject {
	name := NetworkPolicyName(p.Name)
	pods := func() *yaml.Node {
		return yamltree.Map(yamltree.KV("matchLabels", yamltree.Map(yamltree.KV(JobSetNameLabel, yamltree.String(p.Name)))))
	}
	peers := func() *yaml.Node { return yamltree.Seq(yamltree.Map(yamltree.KV("podSelector", pods()))) }
	spec := yamltree.Map(
		yamltree.KV("podSelector", pods()),
		yamltree.KV("policyTypes", yamltree.Strings("Ingress", "Egress")),
		yamltree.KV("ingress", yamltree.Seq(yamltree.Map(yamltree.KV("from", peers())))),
		yamltree.KV("egress", yamltree.Seq(yamltree.Map(yamltree.KV("to", peers())))),
	)
	return build(NetworkPolicyAPIVersion, NetworkPolicyKind, metadata(p, name, NetworkPolicyKind, jobsetAnnotations), yamltree.KV("spec", spec))
}
