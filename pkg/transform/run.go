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
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// Keeps is what a record keeps of an item's labels and annotations:
// those the function reads of an item it does not hold whole.
// prune reads the Flux annotation, local-config and the
// generated-for labels; withPlacement, uniquePaths and results the
// placement annotations. Sources are made with it
// (resourcelist.NewWhole, resourcelist.ParseLazy).
func Keeps(field, key string) bool {
	if field == "labels" {
		return key == plan.ManagedByLabel || key == plan.JobSetLabel
	}
	return key == settings.EnabledAnnotation || key == fn.KptLocalConfig || jobsetrender.IsPlacement(key)
}

// run is one Render: the input's table of records, the output's, and
// the items the function holds whole until the end.
//
// Positions are those of the output before it is sorted: the input's,
// then the generated objects appended (added). Each item goes to the
// sink once the loop is done with it, unless something later must read
// more of it than its record (keep); those are held, and go to the sink
// at the end (finish).
type run struct {
	src  resourcelist.Source
	sink resourcelist.Sink
	rc   *resourcelist.Recorder

	input []*resourcelist.Record // the input's, by position
	out   []*resourcelist.Record // what stands at each position; nil: pruned
	added []int                  // positions of the generated objects appended
	held  map[int]*fn.KubeObject // whole items not in the sink, by position

	owners  map[string]bool  // namespace/name of the JobSets that own generated objects
	targets []*fn.KubeObject // orphans prune may remove

	findings []settled
}

func newRun(src resourcelist.Source, sink resourcelist.Sink, keep resourcelist.RecordFilter) *run {
	input := src.Records()
	r := &run{src: src, sink: sink, rc: resourcelist.NewRecorder(keep), input: input,
		out: slices.Clone(input), held: map[int]*fn.KubeObject{}, owners: map[string]bool{}}
	for _, rec := range input {
		if isOwner(rec) {
			r.owners[rec.Namespace+"/"+rec.Name] = true
		}
	}
	return r
}

// candidate reports whether an item is labelled as generated for a
// JobSet that is not in the input: an orphan prune looks at.
func (r *run) candidate(rec *resourcelist.Record) bool {
	owner, generated := generatedFor(rec)
	return generated && !r.owners[rec.Namespace+"/"+owner]
}

// takeEarly takes the items read whole before the loop gets to them:
// the input's v1 Secrets (a JobSet may use one as its CURVE Secret and
// read its certificate), its v1 Services (their selectors say whether a
// JobSet's subdomain is taken: newClaims) and the orphan candidates (their digests say
// which are targets). Whether a candidate is an orphan depends only on
// the input's JobSets, which the records say.
func (r *run) takeEarly() error {
	for i, rec := range r.input {
		if !isSecret(rec) && !isService(rec) && !r.candidate(rec) {
			continue
		}
		obj, err := r.src.Item(i)
		if err != nil {
			return err
		}
		r.held[i] = obj
		if r.candidate(rec) {
			if recorded, matches := jobsetrender.DigestMatches(obj); recorded && matches {
				r.targets = append(r.targets, obj)
			}
		}
	}
	return nil
}

// keep reports whether an item stays whole until the end, because
// something later reads more of it than its record; inInput is whether
// it stands at a position of the input:
//
//   - a v1 Secret of the input: a later JobSet may use it as its CURVE
//     Secret and read its certificate (generate);
//   - an orphan candidate: prune checks its digest, over the
//     whole object;
//   - an item that names a target (an orphan prune may remove):
//     findReferences must find that name where it is.
func (r *run) keep(obj *fn.KubeObject, rec *resourcelist.Record, inInput bool) bool {
	if inInput && isSecret(rec) || r.candidate(rec) {
		return true
	}
	return len(r.targets) > 0 && len(findReferences(fn.KubeObjects{obj}, nil, r.targets)) > 0
}

// take is item i whole: the one held there (taken early, or a generated
// object placed there), else the source's.
func (r *run) take(i int) (*fn.KubeObject, error) {
	if obj, ok := r.held[i]; ok {
		delete(r.held, i)
		return obj, nil
	}
	return r.src.Item(i)
}

// deliver puts obj, whose record is rec, at position at: held when keep
// says so, else in the sink.
func (r *run) deliver(at int, obj *fn.KubeObject, rec *resourcelist.Record, inInput bool) {
	r.out[at] = rec
	if r.keep(obj, rec, inInput) {
		r.held[at] = obj
		return
	}
	delete(r.held, at)
	r.sink.Put(at, rec, obj)
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
			r.deliver(at, obj, r.rc.Record(obj), false)
		case at > i:
			obj = withPlacement(obj, r.out[at])
			r.out[at], r.held[at] = r.rc.Record(obj), obj
		default:
			obj = withPlacement(obj, r.out[at])
			r.deliver(at, obj, r.rc.Record(obj), true)
		}
	}
}

// done ends the loop's work on item i: input is the item it took,
// finished what goes out in its place, reports what was said on their
// behalf. Only a JobSet's metadata can change on the way (rendering,
// unrendering), so another item keeps the record it came with.
func (r *run) done(i int, input, finished *fn.KubeObject, reports []jobsetrender.Report) {
	inputRec, rec := r.out[i], r.out[i]
	if finished != input || rec.Kind == jobset.Kind {
		rec = r.rc.Record(finished)
	}
	r.settle(reports, known{finished, rec}, known{input, inputRec})
	r.deliver(i, finished, rec, true)
}

// known is an object whose record is made already.
type known struct {
	obj *fn.KubeObject
	rec *resourcelist.Record
}

// settle keeps reports as findings on their objects' records: the first
// of known that names the object, else its record made now.
func (r *run) settle(reports []jobsetrender.Report, records ...known) {
	for _, rep := range reports {
		if len(rep.Found) == 0 {
			continue
		}
		var rec *resourcelist.Record
		for _, k := range records {
			if k.obj == rep.Obj {
				rec = k.rec
				break
			}
		}
		if rec == nil && rep.Obj != nil {
			rec = r.rc.Record(rep.Obj)
		}
		r.findings = append(r.findings, settled{rec, rep.Found})
	}
}

// passThrough puts every item in the sink as it is: an error in the
// functionConfig leaves the list unchanged.
func (r *run) passThrough() error {
	for i, rec := range r.input {
		obj, err := r.src.Item(i)
		if err != nil {
			return err
		}
		r.sink.Put(i, rec, obj)
	}
	return r.src.Finish()
}

// heldTrees are the items held, in position order.
func (r *run) heldTrees() fn.KubeObjects {
	var out fn.KubeObjects
	for at := range r.out {
		if obj, ok := r.held[at]; ok {
			out = append(out, obj)
		}
	}
	return out
}

// finish gives generated objects new to the package files of their own
// (uniquePaths), puts the items held in the sink, and checks the items
// of the source never taken.
func (r *run) finish() error {
	var edits []int
	for _, at := range uniquePaths(r.out, r.added) {
		if obj, ok := r.held[at]; ok {
			setPlacement(obj, placedAt(r.out[at]))
		} else {
			edits = append(edits, at)
		}
	}
	for at := range r.out {
		if obj, ok := r.held[at]; ok {
			r.sink.Put(at, r.out[at], obj)
		}
	}
	r.held = nil
	for _, at := range edits {
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

// prune removes the ConfigMaps and Secrets the function generated
// for JobSets that are no longer in the input, or no longer annotated for
// Flux. kpt writes generated objects into the package, so without this a
// renamed or removed JobSet would leave its old files behind for good.
//
// An object is removed only when the function can prove it wrote that
// exact object and that nothing still needs it: it carries the digest the
// function recorded when it wrote it (plan.DigestAnnotation) and the
// digest still matches the object (stampDigest, digestOf), and nothing in
// the output or the function config names it (findReferences). Every
// other object labelled as generated for a JobSet that is gone stays, with
// a warning that says why; among them the objects earlier versions wrote,
// which carry no digest: nothing tells them from a user's lookalike.
func (r *run) prune(config *fn.KubeObject) {
	var orphans []int
	var proven []*fn.KubeObject
	for at, rec := range r.out {
		if rec != nil && r.candidate(rec) {
			// keep held every candidate whole.
			orphans = append(orphans, at)
			if recorded, matches := jobsetrender.DigestMatches(r.held[at]); recorded && matches {
				proven = append(proven, r.held[at])
			}
		}
	}
	if len(orphans) == 0 {
		return
	}
	// An item in the sink never names an orphan that may be removed
	// (keep held such items whole): only the items held can.
	refs := findReferences(r.heldTrees(), config, proven)
	for _, at := range orphans {
		found := pruneVerdict(r.held[at], r.out[at], refs)
		r.findings = append(r.findings, settled{r.out[at], found})
		if found[0].Severity == finding.Info {
			r.out[at] = nil
			delete(r.held, at)
		}
	}
}
