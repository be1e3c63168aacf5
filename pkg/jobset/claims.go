package jobset

import (
	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// ClaimTemplate is one PersistentVolumeClaim template of a JobSet's
// spec.volumeClaimPolicies. The JobSet controller creates one claim per
// template per JobSet, named <template>-<jobset>, and its controller adds a
// volume of the template's name to every replicatedJob whose containers
// mount that name.
type ClaimTemplate struct {
	// Path is the field path of the template.
	Path string
	// Name is the template's metadata.name: the volume's name.
	Name string
	// AccessModes are its spec.accessModes, as written.
	AccessModes []string
	// WhenDeleted is its policy's retentionPolicy.whenDeleted ("" when
	// unset: the webhook defaults it to Delete).
	WhenDeleted string
}

// VolumeClaimPoliciesPath is the field path of the JobSet's claim policies.
var VolumeClaimPoliciesPath = yamltree.Key(SpecKey, "volumeClaimPolicies")

// Access modes of a claim, as in the API (corev1.PersistentVolumeAccessMode).
const (
	ReadWriteOnce    = "ReadWriteOnce"
	ReadWriteOncePod = "ReadWriteOncePod"
	ReadOnlyMany     = "ReadOnlyMany"
)

// claimTemplates reads spec.volumeClaimPolicies.
func (r *reader) claimTemplates(spec *yaml.Node) []ClaimTemplate {
	var claims []ClaimTemplate
	for i, policy := range r.list(spec, SpecKey, "volumeClaimPolicies") {
		at := yamltree.Index(VolumeClaimPoliciesPath, i)
		whenDeleted := ""
		if rp := r.mapping(policy, at, "retentionPolicy"); rp != nil {
			whenDeleted = r.str(rp, yamltree.Key(at, "retentionPolicy"), "whenDeleted")
		}
		templates := yamltree.Key(at, "templates")
		for j, t := range r.list(policy, at, "templates") {
			tp := yamltree.Index(templates, j)
			c := ClaimTemplate{Path: tp, WhenDeleted: whenDeleted}
			if meta := r.mapping(t, tp, "metadata"); meta != nil {
				c.Name = r.str(meta, yamltree.Key(tp, "metadata"), "name")
			}
			if spec := r.mapping(t, tp, SpecKey); spec != nil {
				c.AccessModes = r.strings(spec, yamltree.Key(tp, SpecKey), "accessModes")
			}
			claims = append(claims, c)
		}
	}
	return claims
}
