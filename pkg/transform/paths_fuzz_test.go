package transform

import (
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/jobsetrender"
	"github.com/jobset-flux/jobset-flux/pkg/resourcelist"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
)

// fuObject is an object placed in file (index "" for a new one).
func fuObject(t *testing.T, kind, namespace, name, file, index string) *fn.KubeObject {
	t.Helper()
	obj := fn.NewEmptyKubeObject()
	for _, err := range []error{
		obj.SetAPIVersion("v1"), obj.SetKind(kind), obj.SetName(name), obj.SetNamespace(namespace),
		obj.SetAnnotation(kioutil.PathAnnotation, file), obj.SetAnnotation(jobsetrender.LegacyPathAnnotation, file),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if index != "" {
		if err := obj.SetAnnotation(kioutil.IndexAnnotation, index); err != nil {
			t.Fatal(err)
		}
	}
	return obj
}

// fuBuild makes, from the fuzzer's bytes, a package's objects and the
// generated objects new to it, two bytes each.
func fuBuild(t *testing.T, data []byte) (items, added []*fn.KubeObject) {
	namespaces := []string{"", "a", "b", "c"}
	names := []string{"x", "y", "x-flux-entrypoint"}
	dirs := []string{".", "d", "d/e"}
	kinds := []string{"ConfigMap", "Secret"}
	suffix := map[string]string{"ConfigMap": "-flux-entrypoint", "Secret": "-flux-curve"}
	ids, next := map[string]bool{}, map[string]int{}
	for i := 0; i+1 < len(data) && i < 40; i += 2 {
		a, b := data[i], data[i+1]
		kind, ns, dir := kinds[a%2], namespaces[a/2%4], dirs[a/8%3]
		name := names[b%3] + suffix[kind]
		id := kind + "/" + ns + "/" + name
		if ids[id] {
			continue
		}
		ids[id] = true
		own := path.Join(dir, strings.ToLower(kind)+"_"+name+".yaml")
		if a/24%2 == 0 {
			added = append(added, fuObject(t, kind, ns, name, own, ""))
			continue
		}
		// An existing object: in its own file, or in one a new object wants.
		file := []string{own, path.Join(dir, strings.ToLower(kind)+"_"+ns+"_"+name+".yaml"), path.Join(dir, "other.yaml")}[b/3%3]
		items = append(items, fuObject(t, kind, ns, name, file, string(rune('0'+next[file]))))
		next[file]++
	}
	return append(items, added...), added
}

// FuzzUniquePaths: whatever the package, every new object gets a file
// that no other object has, in its JobSet's directory; it keeps its own
// file when no object of the package and no new object of another
// namespace wants it; and the result does not depend on the order.
func FuzzUniquePaths(f *testing.F) {
	for _, s := range []string{"\x02\x00\x04\x00", "\x00\x00\x02\x00\x04\x00\x06\x00", "\x02\x00\x1a\x03", "\x00\x00\x18\x00\x1a\x03\x18\x06"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		items, added := fuBuild(t, data)
		own := map[*fn.KubeObject]string{}
		for _, obj := range added {
			own[obj] = fuPlacedAt(obj)
		}
		fuUniquePaths(items, added)
		got := fuFiles(items)
		itemsBack, addedBack := fuBuild(t, data)
		slices.Reverse(itemsBack)
		slices.Reverse(addedBack)
		fuUniquePaths(itemsBack, addedBack)
		if back := fuFiles(itemsBack); !slices.Equal(back, got) {
			t.Fatalf("the files depend on the order:\n%v\n%v", got, back)
		}
		fuCheck(t, items, added, own)
	})
}

// fuUniquePaths is uniquePaths as a run applies it: over the records of
// items, added in its order, the objects moved as their records were.
func fuUniquePaths(items, added []*fn.KubeObject) {
	rc := resourcelist.NewMetaReader(Keeps)
	records := make([]*resourcelist.Meta, len(items))
	for i, it := range items {
		records[i] = rc.Read(it)
	}
	var at []int
	for _, obj := range added {
		at = append(at, slices.Index(items, obj))
	}
	for _, i := range uniquePaths(records, at) {
		setPlacement(items[i], placedAt(records[i]))
	}
}

// fuPlacedAt is placedAt of obj's record.
func fuPlacedAt(obj *fn.KubeObject) string {
	return placedAt(resourcelist.NewMetaReader(Keeps).Read(obj))
}

// fuCheck checks the files of the new objects against every other.
func fuCheck(t *testing.T, items, added []*fn.KubeObject, own map[*fn.KubeObject]string) {
	files := map[string]*fn.KubeObject{}
	for _, it := range items {
		if slices.Contains(added, it) {
			continue
		}
		files[fuPlacedAt(it)] = it
	}
	for _, obj := range added {
		p := fuPlacedAt(obj)
		if other, dup := files[p]; dup {
			t.Fatalf("%s/%s/%s and %s/%s/%s are both in %s", obj.GetKind(), obj.GetNamespace(), obj.GetName(), other.GetKind(), other.GetNamespace(), other.GetName(), p)
		}
		files[p] = obj
		if path.Dir(p) != path.Dir(own[obj]) || obj.GetAnnotation(jobsetrender.LegacyPathAnnotation) != p {
			t.Fatalf("%s moved from %s to %s (both annotations: %q)", obj.GetName(), own[obj], p, obj.GetAnnotation(jobsetrender.LegacyPathAnnotation))
		}
	}
	for _, obj := range added {
		if fuPlacedAt(obj) == own[obj] {
			continue
		}
		contested := false
		for _, it := range items {
			if it != obj && (!slices.Contains(added, it) || it.GetNamespace() != obj.GetNamespace()) && (fuPlacedAt(it) == own[obj] || own[it] == own[obj]) {
				contested = true
			}
		}
		if !contested {
			t.Fatalf("%s/%s left its own file %s for %s, which nothing else wanted", obj.GetNamespace(), obj.GetName(), own[obj], fuPlacedAt(obj))
		}
	}
}

// fuFiles lists every object with its file, in order.
func fuFiles(items []*fn.KubeObject) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.GetKind()+"/"+it.GetNamespace()+"/"+it.GetName()+" "+fuPlacedAt(it))
	}
	slices.Sort(out)
	return out
}
