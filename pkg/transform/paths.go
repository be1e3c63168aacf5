package transform

import (
	"cmp"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/jobset-flux/jobset-flux/pkg/jobsetrender"
	"github.com/jobset-flux/jobset-flux/pkg/resourcelist"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
)

// uniquePaths gives every generated object that is new to the package
// (added: not replacing an object of the input, which keeps its file) a
// file no other object has. kpt refuses a whole render when two objects
// share a path and an index, and a new object has no index: two JobSets
// of one name in two namespaces side by side would both get
// configmap_<name>-flux-entrypoint.yaml.
//
// An object keeps the file named for it (objectFile) unless another new
// object of another namespace wants the same file, or an object of the
// output already has it; then it goes to <kind>_<namespace>_<name>.yaml
// (an object without a namespace keeps the plain name if that is free),
// and if that is taken too, the first free <file>.<n>.yaml from n = 2. No
// object name or namespace holds "_", so the first two forms never meet.
// Objects are taken in the order of their files, namespaces, kinds and
// names, so the result does not depend on the order of the input.
//
// It reads and sets the metadata of out (nil: pruned) and returns the
// positions moved, whose items the caller moves to the same files.
func uniquePaths(out []*resourcelist.Meta, added []int) []int {
	var placed []int
	wants, isAdded := map[string]int{}, map[int]bool{}
	for _, at := range added {
		isAdded[at] = true
		if p := placedAt(out[at]); p != "" {
			placed = append(placed, at)
			wants[p]++
		}
	}
	if len(placed) == 0 {
		return nil // not written into a package (kustomize, standalone)
	}
	taken := map[string]bool{}
	for at, meta := range out {
		if p := placedAt(meta); meta != nil && p != "" && !isAdded[at] {
			taken[p] = true
		}
	}
	slices.SortFunc(placed, func(a, b int) int { return byFile(out[a], out[b]) })
	var moved []int
	for _, at := range placed {
		p := placedAt(out[at])
		if taken[p] || (wants[p] > 1 && out[at].Namespace != "") {
			moved = append(moved, at)
			continue
		}
		taken[p] = true
	}
	for _, at := range moved {
		p := freePath(placedAt(out[at]), out[at], taken)
		taken[p] = true
		for _, key := range []string{kioutil.PathAnnotation, jobsetrender.LegacyPathAnnotation} {
			if out[at].Annotation(key) != "" {
				must(out[at].SetAnnotation(key, p), "setting the path of a generated object")
			}
		}
	}
	return moved
}

// placedAt is the file an object is placed in, cleaned; "" when none.
func placedAt(meta *resourcelist.Meta) string {
	if meta == nil {
		return ""
	}
	p := meta.Annotation(kioutil.PathAnnotation)
	if p == "" {
		p = meta.Annotation(jobsetrender.LegacyPathAnnotation)
	}
	if p == "" {
		return ""
	}
	return path.Clean(p)
}

// byFile orders objects by file, namespace, kind and name.
func byFile(a, b *resourcelist.Meta) int {
	return cmp.Or(
		strings.Compare(placedAt(a), placedAt(b)),
		strings.Compare(a.Namespace, b.Namespace),
		strings.Compare(a.Kind, b.Kind),
		strings.Compare(a.Name, b.Name),
	)
}

// freePath is the first free file for an object whose own is taken: with
// its namespace in the name, then numbered.
func freePath(own string, meta *resourcelist.Meta, taken map[string]bool) string {
	base := own
	if ns := meta.Namespace; ns != "" {
		base = path.Join(path.Dir(own), strings.ToLower(meta.Kind)+"_"+ns+"_"+meta.Name+".yaml")
		if !taken[base] {
			return base
		}
	}
	stem := strings.TrimSuffix(base, ".yaml")
	for n := 2; ; n++ {
		if p := stem + "." + strconv.Itoa(n) + ".yaml"; !taken[p] {
			return p
		}
	}
}

// setPlacement moves an object to file p, in both spellings of the path
// annotation that it carries (as uniquePaths moved its metadata).
func setPlacement(obj *fn.KubeObject, p string) {
	for _, key := range []string{kioutil.PathAnnotation, jobsetrender.LegacyPathAnnotation} {
		if obj.GetAnnotation(key) != "" {
			must(obj.SetAnnotation(key, p), "setting the path of a generated object")
		}
	}
}

// must panics on an error that only a bug can cause: the function sets
// only annotations it may set, on objects it made.
func must(err error, doing string) {
	if err != nil {
		panic(doing + ": " + err.Error())
	}
}

// withPlacement gives a regenerated object the file placement of the
// object it replaces, so kpt keeps it where the package has it.
func withPlacement(obj *fn.KubeObject, old *resourcelist.Meta) *fn.KubeObject {
	annotations := old.Annotations()
	// In key order: a key the object lacks is appended, and the output
	// must not depend on map order.
	for _, k := range slices.Sorted(maps.Keys(annotations)) {
		if v := annotations[k]; jobsetrender.IsPlacement(k) {
			if err := obj.SetAnnotation(k, v); err != nil {
				panic(fmt.Sprintf("setting annotation on a generated object: %v", err))
			}
		}
	}
	return obj
}
