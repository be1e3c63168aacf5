package jobsetrender

import (
	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/jobset"
	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// JobSetNameLabel is the label the JobSet controller puts on its pods and
// selects them by in the subdomain's Service.
const JobSetNameLabel = "jobset.sigs.k8s.io/jobset-name"

// MaxConfigMapData is what the API server accepts in one ConfigMap: the
// lengths of its keys and values together at most 1 MiB
// (k8s.io/kubernetes validation's MaxSecretSize, which ConfigMaps share).
const MaxConfigMapData = 1 << 20

// Claim is an object of the list that claims a subdomain: a Service of
// that name, or a JobSet whose pods use it.
type Claim struct {
	Kind, Name string
	// Selects is the JobSet a Service's selector picks by the label the
	// JobSet controller gives its pods ("" for none).
	Selects string
	// Flux: a JobSet selected for Flux.
	Flux bool
}

// Neighbours is what the render of one JobSet reads of the rest of the
// list: the objects of the names it generates, who else claims its pods'
// subdomain, and the keys of the objects its environment comes from.
type Neighbours interface {
	// ConfigMap reports whether the list holds a v1 ConfigMap of
	// namespace and name, and whether jobset-flux made it (its
	// managed-by label).
	ConfigMap(namespace, name string) (exists, managed bool)
	// NetworkPolicy is ConfigMap for a networking.k8s.io/v1
	// NetworkPolicy.
	NetworkPolicy(namespace, name string) (exists, managed bool)
	// Secret is the list's v1 Secret of namespace and name, whole, or
	// nil.
	Secret(namespace, name string) *fn.KubeObject
	// Claims are the objects that claim the subdomain in namespace.
	Claims(namespace, subdomain string) []Claim
	// EnvKeys are the keys of the list's v1 ConfigMap or Secret (kind)
	// of namespace and name, which envFrom turns into variables; ok is
	// false when the list holds no such object.
	EnvKeys(kind, namespace, name string) (keys []string, ok bool)
}

// checkInstance checks what the render would apply beside the JobSet,
// against the API and the rest of the input: the generated ConfigMap's
// size, and the pods' subdomain, whose headless Service the JobSet
// controller creates, or reuses as it is when one of that name exists.
func checkInstance(pl *plan.Plan, gen generated, nb Neighbours) finding.List {
	var found finding.List
	size := 0
	for key, content := range gen.files.Map() {
		size += len(key) + len(content)
	}
	if size > MaxConfigMapData {
		found.Errorf("spec.replicatedJobs", "the ConfigMap %q that jobset-flux generates would hold %d bytes, more than the %d the API server accepts in a ConfigMap (mostly broker.toml's hosts: one hostlist expression per Job of a replicatedJob whose Jobs have more than one pod); use fewer, larger Jobs (more completions, fewer replicas), or split the instance into several JobSets", pl.ConfigMapName, size, MaxConfigMapData)
	}
	found.Add(checkSubdomainShared(pl, nb))
	return found
}

// checkSubdomainShared refuses a subdomain that another JobSet of the
// input uses, or that an input Service is named: the controller reuses
// that Service, whose selector picks the other JobSet's pods (or
// whatever the Service says), so none of this JobSet's hostnames
// resolve and its brokers never connect.
func checkSubdomainShared(pl *plan.Plan, nb Neighbours) finding.List {
	var found finding.List
	path := "metadata.name"
	if pl.Subdomain != pl.Name {
		path = jobset.NetworkPath + ".subdomain"
	}
	for _, c := range nb.Claims(pl.Namespace, pl.Subdomain) {
		switch {
		case c.Kind == "Service" && c.Selects == pl.Name:
			// The controller's own Service for this JobSet, exported
			// with it: reusing it is what the controller does anyway.
		case c.Kind == "Service":
			found.Errorf(path, "the pods' subdomain %q is the name of the Service %q in the input: the JobSet controller reuses an existing Service of the subdomain's name as it is, and that one's selector is not this JobSet's pods, so no broker's hostname resolves; rename the Service, or set spec.network.subdomain to a name no Service has", pl.Subdomain, c.Name)
		case c.Name != pl.Name:
			found.Errorf(path, "the pods' subdomain %q is also JobSet %q's: the JobSet controller makes one headless Service of that name, whose selector picks one JobSet's pods, and the other's hostnames never resolve; give each JobSet its own spec.network.subdomain", pl.Subdomain, c.Name)
		}
	}
	return found
}
