package transform

import (
	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/jobset"
	"github.com/jobset-flux/jobset-flux/pkg/jobsetrender"
	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/jobset-flux/jobset-flux/pkg/resourcelist"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// isService reports whether an item is a v1 Service.
func isService(meta *resourcelist.Meta) bool {
	return meta.Kind == "Service" && meta.APIVersion == "v1"
}

// isSecret reports whether an item is a v1 Secret.
func isSecret(meta *resourcelist.Meta) bool {
	return meta.Kind == "Secret" && meta.APIVersion == "v1"
}

// isUserConfigMap reports whether an item is a v1 ConfigMap that
// jobset-flux did not make.
func isUserConfigMap(meta *resourcelist.Meta) bool {
	return meta.Kind == "ConfigMap" && meta.APIVersion == "v1" && meta.Label(plan.ManagedByLabel) != plan.ManagedByValue
}

// isGeneratedKind reports whether an item is of a kind and version the
// function generates, whose object of the same namespace and name a
// generated one replaces.
func isGeneratedKind(meta *resourcelist.Meta) bool {
	switch meta.Kind {
	case "ConfigMap", "Secret":
		return meta.APIVersion == "v1"
	case jobsetrender.NetworkPolicyKind:
		return meta.APIVersion == jobsetrender.NetworkPolicyAPIVersion
	case jobsetrender.RoleKind, jobsetrender.RoleBindingKind:
		return meta.APIVersion == jobsetrender.RBACAPIVersion
	}
	return false
}

// isSelected reports whether its metadata is of a JobSet marked for Flux.
func isSelected(meta *resourcelist.Meta) bool {
	return meta.Kind == jobset.Kind && meta.Annotation(settings.EnabledAnnotation) == "true"
}

// isOwner reports whether an item is a JobSet whose generated objects
// are not orphans: one marked for Flux, unless marked "false". The
// function never removes or renames a JobSet, so the owners of the
// output are those of the input.
func isOwner(meta *resourcelist.Meta) bool {
	value, marked := meta.Annotations()[settings.EnabledAnnotation]
	return meta.Kind == jobset.Kind && marked && value != "false"
}

// index is what a JobSet's render reads of the rest of the list
// (jobsetrender.Neighbours): the input's objects of the kinds the
// function generates (isGeneratedKind) by kind, namespace and name, at
// their positions in the list, the subdomains the input claims, and the
// input's JobSets selected for Flux counted by namespace and name. What stands at a position changes as the loop goes
// on (a generated object replaces the input's): the index reads the
// run's output table and its whole items.
type index struct {
	positions map[string]int
	jobsets   map[string]int
	out       *[]*resourcelist.Meta
	src       resourcelist.Source
	// claims are by namespace/subdomain.
	claims map[string][]jobsetrender.Claim
	// err is the first error of the source while a render asked for a
	// Secret: the render loop returns it (failed).
	err error
}

func key(kind, namespace, name string) string { return kind + "/" + namespace + "/" + name }

// newIndex indexes input, read from src, what stands at each position
// of which out says as the loop goes on: every JobSet claims its name as
// subdomain (spec.network may say otherwise, which observe adds as the
// loop takes it), and every v1 Service its name, with the JobSet its
// selector picks (selectors, by position).
func newIndex(src resourcelist.Source, input []*resourcelist.Meta, out *[]*resourcelist.Meta, selectors map[int]string) *index {
	ix := &index{positions: map[string]int{}, jobsets: map[string]int{}, out: out, src: src, claims: map[string][]jobsetrender.Claim{}}
	for i, it := range input {
		switch {
		case isGeneratedKind(it):
			ix.positions[key(it.Kind, it.Namespace, it.Name)] = i
		case it.Kind == jobset.Kind:
			if it.APIVersion == jobset.APIVersion && it.Annotation(settings.EnabledAnnotation) == "true" && !it.LocalConfig() {
				ix.jobsets[key(jobset.Kind, it.Namespace, it.Name)]++
			}
		}
		switch {
		case isService(it):
			c := jobsetrender.Claim{Kind: "Service", Name: it.Name, Selects: selectors[i]}
			ix.claims[it.Namespace+"/"+it.Name] = append(ix.claims[it.Namespace+"/"+it.Name], c)
		case it.Kind == jobset.Kind:
			c := jobsetrender.Claim{Kind: jobset.Kind, Name: it.Name, Flux: isSelected(it)}
			ix.claims[it.Namespace+"/"+it.Name] = append(ix.claims[it.Namespace+"/"+it.Name], c)
		}
	}
	return ix
}

// position is where the input holds an object of kind (one
// isGeneratedKind accepts), namespace and name.
func (ix *index) position(kind, namespace, name string) (int, bool) {
	i, ok := ix.positions[key(kind, namespace, name)]
	return i, ok
}

// ConfigMap reports whether a ConfigMap stands where the input holds
// one of namespace and name, and whether jobset-flux made it.
func (ix *index) ConfigMap(namespace, name string) (exists, managed bool) {
	return ix.standing("ConfigMap", namespace, name)
}

// NetworkPolicy is ConfigMap for a NetworkPolicy.
func (ix *index) NetworkPolicy(namespace, name string) (exists, managed bool) {
	return ix.standing(jobsetrender.NetworkPolicyKind, namespace, name)
}

// standing reports whether an object of kind stands where the input
// holds one of namespace and name, and whether jobset-flux made it.
func (ix *index) standing(kind, namespace, name string) (exists, managed bool) {
	i, ok := ix.position(kind, namespace, name)
	if !ok || (*ix.out)[i] == nil {
		return false, false
	}
	return true, (*ix.out)[i].Label(plan.ManagedByLabel) == plan.ManagedByValue
}

// Secret is the input's Secret of namespace and name, whole, or nil:
// the function never generates a Secret where the input holds one
// (jobsetrender keeps an existing CURVE Secret), so it is the source's.
// A Secret the source cannot give (a streamed item that reads otherwise
// alone, resourcelist.ErrUnsafe) is kept in err for the loop to return:
// the render would take it for absent and generate one in its place,
// which the loop then takes instead of the input's, so the input's
// Secret would be neither checked nor read again.
func (ix *index) Secret(namespace, name string) *fn.KubeObject {
	i, ok := ix.position("Secret", namespace, name)
	if !ok {
		return nil
	}
	obj, err := ix.src.Item(i)
	if err != nil {
		if ix.err == nil {
			ix.err = err
		}
		return nil
	}
	return obj
}

// Claims are the objects that claim the subdomain in namespace.
func (ix *index) Claims(namespace, subdomain string) []jobsetrender.Claim {
	return ix.claims[namespace+"/"+subdomain]
}

// EnvKeys are the keys of the input's ConfigMap (data, binaryData) or
// Secret (data, stringData) of namespace and name, read whole from the
// source (survey asked it to give them again). A ConfigMap jobset-flux
// made holds its scripts, never a setting's variable, and is not read.
func (ix *index) EnvKeys(kind, namespace, name string) ([]string, bool) {
	i, ok := ix.position(kind, namespace, name)
	if !ok || kind == "ConfigMap" && !isUserConfigMap(ix.src.Metas()[i]) {
		return nil, false
	}
	obj, err := ix.src.Item(i)
	if err != nil {
		return nil, false
	}
	fields := []string{"data", "binaryData"}
	if kind == "Secret" {
		fields = []string{"data", "stringData"}
	}
	var keys []string
	for _, field := range fields {
		m := yamltree.Get(yamltree.NodeOf(obj), field)
		if m == nil || m.Kind != yaml.MappingNode {
			continue
		}
		for j := 0; j+1 < len(m.Content); j += 2 {
			keys = append(keys, m.Content[j].Value)
		}
	}
	return keys, true
}

func (ix *index) duplicate(namespace, name string) bool {
	return ix.jobsets[key(jobset.Kind, namespace, name)] > 1
}

// observe adds the subdomain a JobSet sets in spec.network, as the loop
// takes it: the JobSets after it are checked against it. A JobSet not
// selected for Flux whose subdomain is that of a Flux JobSet before it
// is reported here, as that JobSet could not see it.
func (ix *index) observe(item *fn.KubeObject, meta *resourcelist.Meta, reports *[]jobsetrender.Report) {
	if meta.Kind != jobset.Kind {
		return
	}
	sub, found, err := item.NestedString("spec", "network", "subdomain")
	if err != nil || !found || sub == "" || sub == meta.Name {
		return
	}
	k := meta.Namespace + "/" + sub
	if !isSelected(meta) {
		for _, c := range ix.claims[k] {
			if c.Flux && c.Name != meta.Name {
				var f finding.List
				f.Errorf(jobset.NetworkPath+".subdomain", "the pods' subdomain %q is also the Flux JobSet %q's: the JobSet controller makes one headless Service of that name, whose selector picks one JobSet's pods, and the other's hostnames never resolve; give each JobSet its own spec.network.subdomain", sub, c.Name)
				*reports = append(*reports, jobsetrender.Report{Obj: item, Found: f})
				break
			}
		}
	}
	ix.claims[k] = append(ix.claims[k], jobsetrender.Claim{Kind: jobset.Kind, Name: meta.Name, Flux: isSelected(meta)})
}
