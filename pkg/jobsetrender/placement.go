package jobsetrender

import (
	"path"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
)

// LegacyPathAnnotation and LegacyIndexAnnotation are the pre-"internal."
// spellings of kpt's placement annotations: kpt still writes them next
// to the current ones, and both must stay in step.
const (
	LegacyPathAnnotation  = "config.kubernetes.io/path"
	LegacyIndexAnnotation = "config.kubernetes.io/index"
)

// IsPlacement reports whether an annotation says where an object lives
// in the package (kpt's path and index annotations).
func IsPlacement(key string) bool {
	switch key {
	case kioutil.PathAnnotation, LegacyPathAnnotation, kioutil.IndexAnnotation, LegacyIndexAnnotation:
		return true
	}
	return strings.HasPrefix(key, "internal.config.kubernetes.io/") && key != kioutil.IdAnnotation
}

// objectFile is the file a generated object is written to beside its
// JobSet's file: <kind>_<name>.yaml, as kpt names a new object's file.
func objectFile(jobsetFile, kind, name string) string {
	return path.Join(path.Dir(jobsetFile), strings.ToLower(kind)+"_"+name+".yaml")
}
