package transform

import (
	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/jobset"
	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/jobset-flux/jobset-flux/pkg/resourcelist"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// jobSetNameLabel is the label the JobSet controller puts on its pods and
// selects them by in the subdomain's Service.
const jobSetNameLabel = "jobset.sigs.k8s.io/jobset-name"

// MaxConfigMapData is what the API server accepts in one ConfigMap: the
// lengths of its keys and values together at most 1 MiB
// (k8s.io/kubernetes validation's MaxSecretSize, which ConfigMaps share).
const MaxConfigMapData = 1 << 20

// checkInstance checks what the render would apply beside the JobSet,
// against the API and the rest of the input: the generated ConfigMap's
// size, and the pods' subdomain, whose headless Service the JobSet
// controller creates, or reuses as it is when one of that name exists.
func checkInstance(pl *plan.Plan, gen generated, index *index) finding.List {
	var found finding.List
	size := 0
	for key, content := range gen.files.Map() {
		size += len(key) + len(content)
	}
	if size > MaxConfigMapData {
		found.Errorf("spec.replicatedJobs", "the ConfigMap %q that jobset-flux generates would hold %d bytes, more than the %d the API server accepts in a ConfigMap (mostly broker.toml's hosts: one hostlist expression per Job of a replicatedJob whose Jobs have more than one pod); use fewer, larger Jobs (more completions, fewer replicas), or split the instance into several JobSets", pl.ConfigMapName, size, MaxConfigMapData)
	}
	found.Add(checkSubdomainShared(pl, index))
	return found
}

// claim is an input object that claims a subdomain: a Service of that
// name, or a JobSet whose pods use it.
type claim struct {
	kind, name string
	// selects is the JobSet a Service's selector picks by the label the
	// JobSet controller gives its pods ("" for none).
	selects string
	// flux: a JobSet selected for Flux.
	flux bool
}

// newClaims indexes the subdomains the input claims, by
// namespace/subdomain: every JobSet by its name (its subdomain unless
// spec.network says otherwise, which observe adds as the loop takes
// it), and every v1 Service by its name with its selector (the run
// takes Services whole before the loop).
func newClaims(r *run) map[string][]claim {
	claims := map[string][]claim{}
	for i, rec := range r.input {
		switch {
		case isService(rec):
			c := claim{kind: "Service", name: rec.Name}
			if obj := r.held[i]; obj != nil {
				c.selects, _, _ = obj.NestedString("spec", "selector", jobSetNameLabel)
			}
			claims[rec.Namespace+"/"+rec.Name] = append(claims[rec.Namespace+"/"+rec.Name], c)
		case rec.Kind == jobset.Kind:
			c := claim{kind: jobset.Kind, name: rec.Name, flux: isSelected(rec)}
			claims[rec.Namespace+"/"+rec.Name] = append(claims[rec.Namespace+"/"+rec.Name], c)
		}
	}
	return claims
}

// isService reports whether an item is a v1 Service.
func isService(rec *resourcelist.Record) bool {
	return rec.Kind == "Service" && rec.APIVersion == "v1"
}

// isSelected reports whether a record is of a JobSet marked for Flux.
func isSelected(rec *resourcelist.Record) bool {
	return rec.Kind == jobset.Kind && rec.Annotation(settings.EnabledAnnotation) == "true"
}

// observe adds the subdomain a JobSet sets in spec.network, as the loop
// takes it: the JobSets after it are checked against it. A JobSet not
// selected for Flux whose subdomain is that of a Flux JobSet before it
// is reported here, as that JobSet could not see it.
func (ix *index) observe(item *fn.KubeObject, rec *resourcelist.Record, reports *[]report) {
	if rec.Kind != jobset.Kind {
		return
	}
	sub, found, err := item.NestedString("spec", "network", "subdomain")
	if err != nil || !found || sub == "" || sub == rec.Name {
		return
	}
	k := rec.Namespace + "/" + sub
	if !isSelected(rec) {
		for _, c := range ix.claims[k] {
			if c.flux && c.name != rec.Name {
				var f finding.List
				f.Errorf(jobset.NetworkPath+".subdomain", "the pods' subdomain %q is also the Flux JobSet %q's: the JobSet controller makes one headless Service of that name, whose selector picks one JobSet's pods, and the other's hostnames never resolve; give each JobSet its own spec.network.subdomain", sub, c.name)
				*reports = append(*reports, report{item, f})
				break
			}
		}
	}
	ix.claims[k] = append(ix.claims[k], claim{kind: jobset.Kind, name: rec.Name, flux: isSelected(rec)})
}

// checkSubdomainShared refuses a subdomain that another JobSet of the
// input uses, or that an input Service is named: the controller reuses
// that Service, whose selector picks the other JobSet's pods (or
// whatever the Service says), so none of this JobSet's hostnames
// resolve and its brokers never connect.
func checkSubdomainShared(pl *plan.Plan, index *index) finding.List {
	var found finding.List
	path := "metadata.name"
	if pl.Subdomain != pl.Name {
		path = jobset.NetworkPath + ".subdomain"
	}
	for _, c := range index.claims[pl.Namespace+"/"+pl.Subdomain] {
		switch {
		case c.kind == "Service" && c.selects == pl.Name:
			// The controller's own Service for this JobSet, exported
			// with it: reusing it is what the controller does anyway.
		case c.kind == "Service":
			found.Errorf(path, "the pods' subdomain %q is the name of the Service %q in the input: the JobSet controller reuses an existing Service of the subdomain's name as it is, and that one's selector is not this JobSet's pods, so no broker's hostname resolves; rename the Service, or set spec.network.subdomain to a name no Service has", pl.Subdomain, c.name)
		case c.name != pl.Name:
			found.Errorf(path, "the pods' subdomain %q is also JobSet %q's: the JobSet controller makes one headless Service of that name, whose selector picks one JobSet's pods, and the other's hostnames never resolve; give each JobSet its own spec.network.subdomain", pl.Subdomain, c.name)
		}
	}
	return found
}
