package plan

import (
	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/jobset"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
)

// The owner-references setting: rank 0 makes its JobSet the owner of the
// objects generated for it, so that the garbage collector deletes them
// with the JobSet. A render cannot: an owner reference needs the JobSet's
// uid, which exists only once the JobSet does. Rank 0 reads it from its
// pod's jobset-uid label (the downward API) and patches the objects with
// its ServiceAccount's token, through a Role that allows patching exactly
// those objects, by name, and nothing else.

// Names and paths of owner-references.
const (
	// OwnerSuffix names the Role and RoleBinding.
	OwnerSuffix = "-flux-owner"
	// OwnerTokenVolume is rank 0's projected token volume, mounted at
	// OwnerTokenDir: a token of its own, whatever automountServiceAccountToken says.
	OwnerTokenVolume = "flux-owner-token"
	OwnerTokenDir    = "/mnt/flux/owner"
	// JobSetUIDEnv is the wrapped container's variable that holds its
	// JobSet's uid, from the pod label JobSetUIDLabel.
	JobSetUIDEnv   = "JOBSET_FLUX_JOBSET_UID"
	JobSetUIDLabel = "jobset.sigs.k8s.io/jobset-uid"
	// DefaultServiceAccount is a pod's ServiceAccount when it names none.
	DefaultServiceAccount = "default"
)

// Owner is what rank 0 patches and with whose rights.
type Owner struct {
	// ServiceAccount is rank 0's pods' ServiceAccount: the RoleBinding's subject.
	ServiceAccount string
	// Leader is rank 0's hostname: the pod that patches.
	Leader string
	// RBAC is the name of the Role and of the RoleBinding.
	RBAC string
	// Secret is the generated Secret's name, "" when curve-secret names
	// one of the user's, which is not the JobSet's to delete.
	Secret string
}

// deriveOwner is the plan's Owner, nil without owner-references.
func deriveOwner(js *jobset.JobSet, s *settings.Settings, p *Plan) *Owner {
	if !s.OwnerReferences {
		return nil
	}
	o := &Owner{ServiceAccount: js.ReplicatedJobs[p.Groups[0].Index].Pod.ServiceAccount,
		Leader: js.Name + "-" + p.Groups[0].Name + "-0-0", RBAC: js.Name + OwnerSuffix}
	if o.ServiceAccount == "" {
		o.ServiceAccount = DefaultServiceAccount
	}
	if p.GenerateSecret {
		o.Secret = p.SecretName
	}
	return o
}

// checkOwner refuses owner-references on a JobSet without a namespace: the
// RoleBinding must name its subject's. Beside network-policy it warns: the
// generated NetworkPolicy isolates the pods' egress to each other, so rank
// 0 reaches the API server only if a policy of the namespace lets it, which
// the render cannot see.
func checkOwner(js *jobset.JobSet, s *settings.Settings) finding.List {
	var found finding.List
	if !s.OwnerReferences {
		return found
	}
	if js.Namespace == "" {
		add(&found, finding.Error, "metadata.namespace", "", "",
			"is not set, but owner-references (%s) generates a RoleBinding whose subject, rank 0's ServiceAccount, must name its namespace; set the namespace before jobset-flux runs (kustomize: namespace: in the kustomization that lists jobset-flux under transformers), or remove owner-references", s.Origin("owner-references"))
	}
	if s.NetworkPolicy {
		add(&found, finding.Warning, s.Origin("owner-references"), "true", "",
			"needs rank 0 to reach the API server, but the NetworkPolicy that network-policy (%s) generates lets the instance's pods reach only each other; add a NetworkPolicy to the namespace that allows their egress to the API server's endpoints (kubectl get endpointslices -n default -l kubernetes.io/service-name=kubernetes), or rank 0 only warns and the generated objects stay when the JobSet is deleted", s.Origin("network-policy"))
	}
	return found
}
