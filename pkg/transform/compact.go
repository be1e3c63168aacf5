package transform

import (
	"github.com/jobset-flux/jobset-flux/pkg/jobset"
	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/jobset-flux/jobset-flux/pkg/resourcelist"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// compacting decides which items ProcessCompact hands to the Compactor
// (which keeps only their text and a stub of their metadata) and when.
// An item is compacted once the loop is done with it, unless something
// later must read more of it than its metadata:
//
//   - a v1 Secret of the input: a later JobSet may use it as its CURVE
//     Secret and read its certificate (generate);
//   - an orphan candidate (labelled as generated for a JobSet that is not
//     in the input): pruneOrphans checks its digest, over the whole object;
//   - an item that names a candidate whose digest matches (one pruneOrphans
//     may remove): findReferences must find that name where it is.
//
// Whether a candidate is an orphan depends only on the JobSets of the
// input, which the function never removes or renames, so the candidates
// known before the loop are those pruneOrphans finds after it. A stub
// holds apiVersion, kind and metadata, every field that sorting,
// pruning, path assignment and results read of the other items; it is a
// shell whose getters panic, read through meta.
type compacting struct {
	c       *resourcelist.Compactor
	lazy    *resourcelist.Lazy // nil: the items were parsed whole
	owners  map[string]bool
	targets []*fn.KubeObject
}

// stubKeeps is what a stub keeps of the labels and annotations: those
// the function reads of an item it is done with. pruneOrphans reads the
// Flux annotation, local-config and the generated-for labels;
// withPlacement, uniquePaths and results the placement annotations.
// Nothing else is read: a stub never names an orphan that may be removed
// (keep), so findReferences finds nothing in it either way.
func stubKeeps(field, key string) bool {
	if field == "labels" {
		return key == plan.ManagedByLabel || key == plan.JobSetLabel
	}
	return key == settings.EnabledAnnotation || key == fn.KptLocalConfig || isPlacement(key)
}

// metaOf is what an object's metadata is read through.
type metaOf func(*fn.KubeObject) resourcelist.Meta

// whole is metaOf for a list without stubs.
func whole(obj *fn.KubeObject) resourcelist.Meta { return obj }

// meta is what obj's metadata is read through: the record of a shell
// of the Lazy (an item not loaded yet) or of the Compactor (an item
// compacted), or obj itself. Every reader of an item that may be a shell
// goes through it; a shell's own getters panic (cp may be nil: nothing
// is compacted or lazy).
func (cp *compacting) meta(obj *fn.KubeObject) resourcelist.Meta {
	if cp == nil {
		return obj
	}
	if m := cp.lazy.Meta(obj); m != resourcelist.Meta(obj) {
		return m
	}
	return cp.c.Meta(obj)
}

// trees is items without the stubs.
func (cp *compacting) trees(items fn.KubeObjects) fn.KubeObjects {
	if cp == nil {
		return items
	}
	var out fn.KubeObjects
	for _, it := range items {
		if !cp.c.Has(it) {
			out = append(out, it)
		}
	}
	return out
}

// newCompacting returns nil (compact nothing) when c is nil; the items
// not loaded yet are shells of lazy (nil: none).
func newCompacting(c *resourcelist.Compactor, lazy *resourcelist.Lazy, items fn.KubeObjects) *compacting {
	if c == nil {
		return nil
	}
	cp := &compacting{c: c, lazy: lazy, owners: map[string]bool{}}
	for _, item := range items {
		if m := cp.meta(item); isOwner(m) {
			cp.owners[m.GetNamespace()+"/"+m.GetName()] = true
		}
	}
	for _, item := range items {
		if cp.candidate(item) {
			if recorded, matches := digestMatches(item); recorded && matches {
				cp.targets = append(cp.targets, item)
			}
		}
	}
	return cp
}

// isOwner reports whether item is a JobSet whose generated objects are
// not orphans: one marked for Flux, unless marked "false".
func isOwner(item resourcelist.Meta) bool {
	value, marked := item.GetAnnotations()[settings.EnabledAnnotation]
	return item.GetKind() == jobset.Kind && marked && value != "false"
}

// candidate reports whether obj is labelled as generated for a JobSet
// that is not in the input.
func (cp *compacting) candidate(obj *fn.KubeObject) bool {
	m := cp.meta(obj)
	owner, generated := generatedFor(m)
	return generated && !cp.owners[m.GetNamespace()+"/"+owner]
}

// keep reports whether obj stays a tree (see compacting); inInput is
// whether it sits in a position of the input list.
func (cp *compacting) keep(obj *fn.KubeObject, inInput bool) bool {
	if m := cp.meta(obj); inInput && m.GetKind() == "Secret" && m.GetAPIVersion() == "v1" {
		return true
	}
	if cp.candidate(obj) {
		return true
	}
	return len(cp.targets) > 0 && len(findReferences(fn.KubeObjects{obj}, nil, cp.targets)) > 0
}

// done compacts items[i] once the loop is done with it; input is the
// item as the input held it, and reps the reports made on its behalf,
// which from then on name the stubs (results read their metadata only).
func (cp *compacting) done(items fn.KubeObjects, i int, input *fn.KubeObject, reps []report) {
	if cp == nil || cp.keep(items[i], true) {
		return
	}
	obj := items[i]
	stub := cp.c.Compact(obj)
	items[i] = stub
	var inputStub *fn.KubeObject
	for k := range reps {
		switch reps[k].obj {
		case obj:
			reps[k].obj = stub
		case input:
			if inputStub == nil {
				inputStub = cp.c.Describe(input)
			}
			reps[k].obj = inputStub
		}
	}
}

// replaced compacts the generated objects placed at positions the loop
// has passed (before i); those after i are compacted when it gets there.
func (cp *compacting) replaced(items fn.KubeObjects, i int, positions []int) {
	if cp == nil {
		return
	}
	for _, at := range positions {
		if at < i && !cp.keep(items[at], true) {
			items[at] = cp.c.Compact(items[at])
		}
	}
}

// added compacts the generated objects appended to the list.
func (cp *compacting) added(objs []*fn.KubeObject) []*fn.KubeObject {
	if cp == nil {
		return objs
	}
	out := make([]*fn.KubeObject, len(objs))
	for i, obj := range objs {
		out[i] = obj
		if !cp.keep(obj, false) {
			out[i] = cp.c.Compact(obj)
		}
	}
	return out
}

// uniquePaths is uniquePaths for a list of stubs: a generated object
// moved to another file is encoded again with its new placement.
func (cp *compacting) uniquePaths(items fn.KubeObjects, added []*fn.KubeObject) error {
	if cp == nil {
		uniquePaths(items, added)
		return nil
	}
	before := make(map[*fn.KubeObject]string, len(added))
	for _, obj := range added {
		before[obj] = placedAt(cp.meta(obj))
	}
	// A stub's new placement is set on its record; its piece is then
	// encoded again from the item read back, with the same placement.
	uniquePathsOf(items, added, cp.meta)
	for i, obj := range items {
		old, isAdded := before[obj]
		if !isAdded || placedAt(cp.meta(obj)) == old || !cp.c.Has(obj) {
			continue
		}
		p := placedAt(cp.meta(obj))
		next, err := cp.c.Recompact(obj, func(full *fn.KubeObject) { setPlacement(full, p) })
		if err != nil {
			return err
		}
		items[i] = next
	}
	return nil
}
