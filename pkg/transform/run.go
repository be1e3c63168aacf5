package transform

import (
	"fmt"
	"slices"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/jobset"
	"github.com/jobset-flux/jobset-flux/pkg/jobsetrender"
	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/jobset-flux/jobset-flux/pkg/resourcelist"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// Keeps is which of an item's labels and annotations its metadata keeps:
// those the function reads of an item other than when it has it whole.
// prune reads the Flux annotation, local-config and the generated-for
// labels; withPlacement, uniquePaths and results the placement
// annotations; wantPolicies the network-policy annotation. Sources are
// made with it (resourcelist.NewWhole, resourcelist.ParseLazy).
func Keeps(field, key string) bool {
	if field == "labels" {
		return key == plan.ManagedByLabel || key == plan.JobSetLabel
	}
	return key == settings.EnabledAnnotation || key == settings.NetworkPolicyAnnotation || key == settings.OwnerReferencesAnnotation || key == fn.KptLocalConfig || jobsetrender.IsPlacement(key)
}

// run is one Render, in two passes over the source: the index pass
// (survey) reads what the render of any item may need of the others,
// and the render pass takes each item, renders it and puts what goes
// out in its place in the sink. An item needed again later (a CURVE
// Secret a JobSet names, an orphan whose fate is known at the end) is
// asked of the source again: whether that reads it from memory or
// parses it again is the source's business.
//
// Positions are those of the output before it is sorted: the input's,
// then the generated objects appended (added).
type run struct {
	src  resourcelist.Source
	sink resourcelist.Sink
	rc   *resourcelist.MetaReader

	input []*resourcelist.Meta // the input's, by position
	out   []*resourcelist.Meta // what stands at each position; nil: pruned
	added []int                // positions of the generated objects appended
	// placed are the generated objects placed at a position of the
	// input that the loop has not reached: they go down the loop there,
	// in place of the input's item.
	placed map[int]*fn.KubeObject

	owners    map[string]bool   // namespace/name of the JobSets that own generated objects
	policies  map[string]bool   // of the owners, those that ask for a NetworkPolicy (wantPolicies)
	owned     map[string]bool   // of the owners, those that ask for owner references (wantPolicies)
	rendered  map[string]bool   // of the owners, those rendered without an error
	selectors map[int]string    // by position: the JobSet a v1 Service's selector picks
	targets   []target          // orphans prune may remove, if nothing names them
	refs      map[int]reference // by target position: the first item that names it

	findings []settled
}

func newRun(src resourcelist.Source, sink resourcelist.Sink, keep resourcelist.MetaFilter) *run {
	input := src.Metas()
	r := &run{src: src, sink: sink, rc: resourcelist.NewMetaReader(keep), input: input,
		out: slices.Clone(input), placed: map[int]*fn.KubeObject{}, owners: map[string]bool{},
		policies: map[string]bool{}, owned: map[string]bool{}, rendered: map[string]bool{},
		selectors: map[int]string{}, refs: map[int]reference{}}
	for _, meta := range input {
		if isOwner(meta) {
			r.owners[meta.Namespace+"/"+meta.Name] = true
		}
	}
	return r
}

// candidate reports whether an item is labelled as generated for a
// JobSet that no longer asks for it: an orphan prune looks at. That is a
// JobSet not in the input, or, for a NetworkPolicy, one whose
// network-policy is no longer "true", for a Role or RoleBinding one whose
// owner-references is no longer "true".
func (r *run) candidate(meta *resourcelist.Meta) bool {
	owner, generated := generatedFor(meta)
	if !generated {
		return false
	}
	id := meta.Namespace + "/" + owner
	switch {
	case !r.owners[id]:
		return true
	case meta.Kind == jobsetrender.NetworkPolicyKind:
		return !r.policies[id]
	case meta.Kind == jobsetrender.RoleKind || meta.Kind == jobsetrender.RoleBindingKind:
		return !r.owned[id]
	}
	return false
}

// wantPolicies notes which owners ask for a NetworkPolicy, and which for
// the Role and RoleBinding of owner-references: by their
// annotation, else by the function config (the setting has no
// environment variable). It is known before any JobSet is rendered, as
// candidate needs: an annotation neither "true" nor "false" fails its
// JobSet's render, and prune then keeps what that JobSet had.
func (r *run) wantPolicies(config settings.Settings) {
	for _, meta := range r.input {
		if isOwner(meta) {
			value, set := meta.Annotations()[settings.NetworkPolicyAnnotation]
			r.policies[meta.Namespace+"/"+meta.Name] = value == "true" || !set && config.NetworkPolicy
			value, set = meta.Annotations()[settings.OwnerReferencesAnnotation]
			r.owned[meta.Namespace+"/"+meta.Name] = value == "true" || !set && config.OwnerReferences
		}
	}
}

// survey is the index pass: it reads whole the input's v1 Services
// (their selectors say whether a JobSet's subdomain is taken: newIndex)
// and the orphan candidates (their digests say which are targets), and
// tells the source which items the render pass asks for more than once:
// those two, the input's v1 Secrets (a JobSet may use one as its CURVE
// Secret and read its certificate) and the ConfigMaps it did not make
// (a JobSet's envFrom may name one, whose keys it reads). Whether a
// candidate is an orphan depends only on the input's JobSets, which the
// metadata say.
func (r *run) survey() error {
	for i, meta := range r.input {
		if isSecret(meta) || isUserConfigMap(meta) {
			r.src.Again(i)
		}
		if !isService(meta) && !r.candidate(meta) {
			continue
		}
		r.src.Again(i)
		obj, err := r.src.Item(i)
		if err != nil {
			return err
		}
		if isService(meta) {
			r.selectors[i], _, _ = obj.NestedString("spec", "selector", jobsetrender.JobSetNameLabel)
		}
		if r.candidate(meta) {
			if recorded, matches := jobsetrender.DigestMatches(obj); recorded && matches {
				r.targets = append(r.targets, target{i, meta.Name, meta.Namespace})
			}
		}
	}
	return nil
}

// take is item i whole: a generated object placed there, else the
// source's.
func (r *run) take(i int) (*fn.KubeObject, error) {
	if obj, ok := r.placed[i]; ok {
		delete(r.placed, i)
		return obj, nil
	}
	return r.src.Item(i)
}

// deliver puts obj, whose metadata is meta, at position at: in the sink,
// but for an orphan candidate, whose fate prune decides at the end.
// What it names of the targets is noted on the way.
func (r *run) deliver(at int, obj *fn.KubeObject, meta *resourcelist.Meta) {
	r.out[at] = meta
	r.noteReferences(obj, at)
	if r.candidate(meta) {
		return
	}
	r.sink.Put(at, meta, obj)
}

// noteReferences keeps, for each target obj names, the reference of the
// lowest position: the first in the output's order.
func (r *run) noteReferences(obj *fn.KubeObject, at int) {
	for t, ref := range referencesIn(obj, at, r.targets) {
		if old, ok := r.refs[t]; !ok || old.at < 0 || ref.at >= 0 && ref.at < old.at {
			r.refs[t] = ref
		}
	}
}

// place puts each object generated while the loop is at i where the
// input holds one of its kind, namespace and name (kpt wrote it into
// the package), with that object's placement; the others are appended.
// An object placed after i goes down the loop when it gets there, as
// the input's would have.
func (r *run) place(generated []*fn.KubeObject, i int, index *index) {
	for _, obj := range generated {
		at, ok := index.position(obj.GetKind(), obj.GetNamespace(), obj.GetName())
		switch {
		case !ok:
			at = len(r.out)
			r.out = append(r.out, nil)
			r.added = append(r.added, at)
			r.deliver(at, obj, r.rc.Read(obj))
		case at > i:
			obj = withPlacement(obj, r.out[at])
			r.out[at], r.placed[at] = r.rc.Read(obj), obj
		default:
			obj = withPlacement(obj, r.out[at])
			r.deliver(at, obj, r.rc.Read(obj))
		}
	}
}

// done ends the loop's work on item i: input is the item it took,
// finished what goes out in its place, reports what was said on their
// behalf. Only a JobSet's metadata can change on the way (rendering,
// unrendering), so another item keeps the metadata it came with.
func (r *run) done(i int, input, finished *fn.KubeObject, reports []jobsetrender.Report) {
	inputMeta, meta := r.out[i], r.out[i]
	if finished != input || meta.Kind == jobset.Kind {
		meta = r.rc.Read(finished)
	}
	r.settle(reports, known{finished, meta}, known{input, inputMeta})
	r.deliver(i, finished, meta)
}

// known is an object whose metadata is made already.
type known struct {
	obj  *fn.KubeObject
	meta *resourcelist.Meta
}

// settle keeps reports as findings on their objects' metadata: the first
// of known that names the object, else its metadata made now.
func (r *run) settle(reports []jobsetrender.Report, metas ...known) {
	for _, rep := range reports {
		if len(rep.Found) == 0 {
			continue
		}
		var meta *resourcelist.Meta
		for _, k := range metas {
			if k.obj == rep.Obj {
				meta = k.meta
				break
			}
		}
		if meta == nil && rep.Obj != nil {
			meta = r.rc.Read(rep.Obj)
		}
		r.findings = append(r.findings, settled{meta, rep.Found})
	}
}

// passThrough puts every item in the sink as it is: an error in the
// functionConfig leaves the list unchanged.
func (r *run) passThrough() error {
	for i, meta := range r.input {
		obj, err := r.src.Item(i)
		if err != nil {
			return err
		}
		r.sink.Put(i, meta, obj)
	}
	return r.src.Finish()
}

// prune removes the ConfigMaps, Secrets and NetworkPolicies the
// function generated for JobSets that are no longer in the input, or no
// longer annotated for Flux, and the NetworkPolicy of a JobSet whose
// network-policy is no longer "true" once that JobSet rendered (a JobSet
// with an error is left as it was, and so is its policy). kpt writes
// generated objects into the package, so without this a renamed or
// removed JobSet would leave its old files behind for good.
//
// An object is removed only when the function can prove it wrote that
// exact object and that nothing still needs it: it carries the digest the
// function recorded when it wrote it (plan.DigestAnnotation) and the
// digest still matches the object (stampDigest, digestOf), and nothing in
// the output or the function config names it (referencesIn). Every
// other object labelled as generated for a JobSet that is gone stays, with
// a warning that says why; among them the objects earlier versions wrote,
// which carry no digest: nothing tells them from a user's lookalike.
// The candidates the loop left out of the sink go there now, unless
// removed.
func (r *run) prune(config *fn.KubeObject) error {
	r.noteReferences(config, -1)
	for at, meta := range r.out {
		if meta == nil || !r.candidate(meta) {
			continue
		}
		obj, err := r.src.Item(at)
		if err != nil {
			return err
		}
		// As in the loop: a block scalar no reader can read must not be
		// written back.
		yamltree.SafeBlockStyles(yamltree.NodeOf(obj))
		owner, _ := generatedFor(meta)
		id := meta.Namespace + "/" + owner
		if r.owners[id] && !r.rendered[id] {
			r.sink.Put(at, meta, obj)
			continue
		}
		ref, referenced := r.refs[at]
		found := pruneVerdict(obj, meta, r.owners[id], ref, referenced)
		r.findings = append(r.findings, settled{meta, found})
		if found[0].Severity == finding.Info {
			r.out[at] = nil
			continue
		}
		r.sink.Put(at, meta, obj)
	}
	return nil
}

// finish gives generated objects new to the package files of their own
// (uniquePaths), and checks the items of the source never taken.
func (r *run) finish() error {
	for _, at := range uniquePaths(r.out, r.added) {
		p := placedAt(r.out[at])
		if err := r.sink.Edit(at, func(full *fn.KubeObject) { setPlacement(full, p) }); err != nil {
			return fmt.Errorf("moving %s %s to %s: %w", r.out[at].Kind, r.out[at].Name, p, err)
		}
	}
	return r.src.Finish()
}

// results are the source's results, then the function's.
func (r *run) results() fn.Results {
	return append(slices.Clip(r.src.Results()), krmResults(r.findings)...)
}

// failed reports whether any finding is an error.
func (r *run) failed() bool {
	for _, f := range r.findings {
		if f.found.HasErrors() {
			return true
		}
	}
	return false
}
