package transform

import (
	"cmp"
	"path"
	"slices"
	"strconv"
	"strings"

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
func uniquePaths(items fn.KubeObjects, added []*fn.KubeObject) {
	uniquePathsOf(items, added, whole)
}

// uniquePathsOf is uniquePaths, reading and writing each object's
// metadata through meta (some may be stubs: compacting.meta).
func uniquePathsOf(items fn.KubeObjects, added []*fn.KubeObject, meta metaOf) {
	var placed []*fn.KubeObject
	wants, isAdded := map[string]int{}, map[*fn.KubeObject]bool{}
	for _, obj := range added {
		isAdded[obj] = true
		if p := placedAt(meta(obj)); p != "" {
			placed = append(placed, obj)
			wants[p]++
		}
	}
	if len(placed) == 0 {
		return // not written into a package (kustomize, standalone)
	}
	taken := map[string]bool{}
	for _, item := range items {
		if p := placedAt(meta(item)); p != "" && !isAdded[item] {
			taken[p] = true
		}
	}
	slices.SortFunc(placed, func(a, b *fn.KubeObject) int { return byFile(meta(a), meta(b)) })
	var moved []*fn.KubeObject
	for _, obj := range placed {
		p := placedAt(meta(obj))
		if taken[p] || (wants[p] > 1 && meta(obj).GetNamespace() != "") {
			moved = append(moved, obj)
			continue
		}
		taken[p] = true
	}
	for _, obj := range moved {
		p := freePath(placedAt(meta(obj)), meta(obj), taken)
		taken[p] = true
		setPlacement(meta(obj), p)
	}
}

// placedAt is the file an object is placed in, cleaned; "" when none.
func placedAt(obj resourcelist.Meta) string {
	p := obj.GetAnnotation(kioutil.PathAnnotation)
	if p == "" {
		p = obj.GetAnnotation(legacyPathAnnotation)
	}
	if p == "" {
		return ""
	}
	return path.Clean(p)
}

// byFile orders objects by file, namespace, kind and name.
func byFile(a, b resourcelist.Meta) int {
	return cmp.Or(
		strings.Compare(placedAt(a), placedAt(b)),
		strings.Compare(a.GetNamespace(), b.GetNamespace()),
		strings.Compare(a.GetKind(), b.GetKind()),
		strings.Compare(a.GetName(), b.GetName()),
	)
}

// objectFile is the file a generated object is written to beside its
// JobSet's file: <kind>_<name>.yaml, as kpt names a new object's file.
func objectFile(jobsetFile, kind, name string) string {
	return path.Join(path.Dir(jobsetFile), strings.ToLower(kind)+"_"+name+".yaml")
}

// freePath is the first free file for an object whose own is taken: with
// its namespace in the name, then numbered.
func freePath(own string, obj resourcelist.Meta, taken map[string]bool) string {
	base := own
	if ns := obj.GetNamespace(); ns != "" {
		base = path.Join(path.Dir(own), strings.ToLower(obj.GetKind())+"_"+ns+"_"+obj.GetName()+".yaml")
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
// annotation that it carries.
func setPlacement(obj resourcelist.Meta, p string) {
	for _, key := range []string{kioutil.PathAnnotation, legacyPathAnnotation} {
		if obj.GetAnnotation(key) != "" {
			if err := obj.SetAnnotation(key, p); err != nil {
				panic("setting the path of a generated object: " + err.Error())
			}
		}
	}
}
