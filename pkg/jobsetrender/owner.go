package jobsetrender

import (
	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// owner-references (see plan/owner.go): a Role that lets rank 0's
// ServiceAccount patch exactly the generated objects, by name, its
// RoleBinding, and on rank 0's pods the token and the JobSet's uid.

// RBACAPIVersion and the kinds of the Role and RoleBinding.
const (
	RBACAPIVersion  = "rbac.authorization.k8s.io/v1"
	RoleKind        = "Role"
	RoleBindingKind = "RoleBinding"
	rbacGroup       = "rbac.authorization.k8s.io"
)

// ownerRole is the Role: patch, and nothing else, on the ConfigMap, the
// generated Secret, and the Role and RoleBinding themselves, each by
// name. A rule with resourceNames never allows create, list or watch.
func ownerRole(p *plan.Plan, jobsetAnnotations map[string]string) *fn.KubeObject {
	o := p.Owner
	rule := func(group, resources string, names ...string) *yaml.Node {
		return yamltree.Map(
			yamltree.KV("apiGroups", yamltree.Strings(group)),
			yamltree.KV("resources", yamltree.Strings(resources)),
			yamltree.KV("resourceNames", yamltree.Strings(names...)),
			yamltree.KV("verbs", yamltree.Strings("patch")),
		)
	}
	rules := yamltree.Seq(rule("", "configmaps", p.ConfigMapName))
	if o.Secret != "" {
		rules.Content = append(rules.Content, rule("", "secrets", o.Secret))
	}
	rules.Content = append(rules.Content, rule(rbacGroup, "roles", o.RBAC), rule(rbacGroup, "rolebindings", o.RBAC))
	return build(RBACAPIVersion, RoleKind, metadata(p, o.RBAC, RoleKind, jobsetAnnotations), yamltree.KV("rules", rules))
}

// ownerRoleBinding binds the Role to rank 0's pods' ServiceAccount.
func ownerRoleBinding(p *plan.Plan, jobsetAnnotations map[string]string) *fn.KubeObject {
	o := p.Owner
	return build(RBACAPIVersion, RoleBindingKind, metadata(p, o.RBAC, RoleBindingKind, jobsetAnnotations),
		yamltree.KV("roleRef", yamltree.Map(
			yamltree.KV("apiGroup", yamltree.String(rbacGroup)),
			yamltree.KV("kind", yamltree.String(RoleKind)),
			yamltree.KV("name", yamltree.String(o.RBAC)),
		)),
		yamltree.KV("subjects", yamltree.Seq(yamltree.Map(
			yamltree.KV("kind", yamltree.String("ServiceAccount")),
			yamltree.KV("name", yamltree.String(o.ServiceAccount)),
			yamltree.KV("namespace", yamltree.String(p.Namespace)),
		))),
	)
}

// tokenMode is the token volume's files' mode: the broker's user, any
// uid, reads them.
const tokenMode = 0o444

// ownerTokenVolume is rank 0's projected token and the cluster's CA, a
// volume of its own, so that the pod's automountServiceAccountToken does
// not matter.
func ownerTokenVolume() *yaml.Node {
	return volume(plan.OwnerTokenVolume, "projected", yamltree.Map(
		yamltree.KV("defaultMode", octal(tokenMode)),
		yamltree.KV("sources", yamltree.Seq(
			yamltree.Map(yamltree.KV("serviceAccountToken", yamltree.Map(
				yamltree.KV("path", yamltree.String("token")),
				yamltree.KV("expirationSeconds", yamltree.Int(3600)),
			))),
			yamltree.Map(yamltree.KV("configMap", yamltree.Map(
				yamltree.KV("name", yamltree.String("kube-root-ca.crt")),
				yamltree.KV("items", yamltree.Seq(yamltree.Map(
					yamltree.KV("key", yamltree.String("ca.crt")),
					yamltree.KV("path", yamltree.String("ca.crt")),
				))),
			))),
		)),
	))
}

// ownerUIDEnv is the wrapped container's variable that holds the JobSet's
// uid, from its pod's label.
func ownerUIDEnv() *yaml.Node {
	return yamltree.Map(
		yamltree.KV("name", yamltree.String(plan.JobSetUIDEnv)),
		yamltree.KV("valueFrom", yamltree.Map(yamltree.KV("fieldRef", yamltree.Map(
			yamltree.KV("fieldPath", yamltree.String("metadata.labels['"+plan.JobSetUIDLabel+"']")),
		)))),
	)
}
