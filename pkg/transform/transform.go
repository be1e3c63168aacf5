// Package transform is the jobset-flux KRM function. Each JobSet goes
// down one pipeline (processJobSet): read, select, resolve its settings
// (pkg/settings), validate and derive its plan (pkg/plan), generate the
// Flux files and the CURVE key, render (edit the JobSet's YAML, build the
// ConfigMap and Secret), and report results. A JobSet with any error is
// left exactly as it was; every other item is passed through.
// docs/contributing/design.md describes each step.
package transform

import (
	"crypto/rand"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/fluxfiles"
	"github.com/jobset-flux/jobset-flux/pkg/jobset"
	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/jobset-flux/jobset-flux/pkg/resourcelist"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// Environment variables that supply the key seed, outside the package.
const (
	SeedEnv     = "JOBSET_FLUX_KEY_SEED"
	SeedFileEnv = "JOBSET_FLUX_KEY_SEED_FILE"
)

// Options are what the function takes from its process rather than from
// the ResourceList.
type Options struct {
	// Seed, when not nil, makes CURVE keys reproducible (at least
	// curve.MinSeedLen bytes).
	Seed []byte
	// Random is the source of random keys (crypto/rand when nil).
	Random io.Reader
}

// Processor is the KRM function. It keeps no state between calls.
type Processor struct {
	opts Options
}

// New checks the options and returns the processor.
func New(opts Options) (*Processor, error) {
	if opts.Seed != nil {
		if err := checkSeed(opts.Seed); err != nil {
			return nil, err
		}
	}
	if opts.Random == nil {
		opts.Random = rand.Reader
	}
	return &Processor{opts: opts}, nil
}

// report is what the function says about one object, while the loop
// works on it; settle turns it into a finding on the object's record.
type report struct {
	obj   *fn.KubeObject
	found finding.List
}

// Process implements fn.ResourceListProcessor: Render over the list in
// memory. rl.Items are then the output's items in list order (not
// sorted), and rl.Results every result.
func (p *Processor) Process(rl *fn.ResourceList) (bool, error) {
	sink := resourcelist.NewMemorySink()
	results, ok, err := p.Render(resourcelist.NewWhole(rl, Keeps), sink)
	rl.Items, rl.Results = sink.Items(), results
	return ok, err
}

// Render is the function, for every size of list: the function config
// is resolved once, then each item of src is taken whole in list order,
// goes down the pipeline when it is a JobSet selected (processJobSet),
// and goes to sink once the function is done with it (run.done); the
// objects generated replace the input's objects of their names or are
// appended (run.place). At the end generated objects whose JobSet is
// gone are pruned when that is safe (pruneOrphans) and new ones get
// files of their own (uniquePaths). It returns src's results and the
// function's (so far, with an error), and false when any error result
// was produced. An error means sink holds no list to write; one that
// wraps resourcelist.ErrUnsafe says src must be read whole.
func (p *Processor) Render(src resourcelist.Source, sink resourcelist.Sink) (fn.Results, bool, error) {
	return p.render(src, sink, Keeps)
}

// render is Render whose own records keep the labels and annotations
// keep allows (Keeps; TestKeepsIsEnough renders with all of them kept).
func (p *Processor) render(src resourcelist.Source, sink resourcelist.Sink, keep resourcelist.RecordFilter) (fn.Results, bool, error) {
	r := newRun(src, sink, keep)
	config, found := p.readConfig(src.FunctionConfig())
	r.settle([]report{{src.FunctionConfig(), found}})
	if found.HasErrors() {
		return r.results(), false, r.passThrough()
	}
	if err := r.takeEarly(); err != nil {
		return r.results(), false, err
	}
	index := newIndex(r)
	for i := range r.input {
		item, err := r.take(i)
		if err != nil {
			return r.results(), false, err
		}
		// Every item is written back, by Encode or by the standalone
		// command: a block scalar no reader can read must not be.
		yamltree.SafeBlockStyles(nodeOf(item))
		var reports []report
		finished := item
		index.observe(item, r.input[i], &reports)
		if !selectItem(item, index, &reports) {
			finished = unrenderDisabled(item, &reports)
		} else {
			out := p.processJobSet(item, config, index)
			reports = append(reports, out.reports...)
			if !out.failed() {
				finished = out.jobset
				r.place(out.generated, i, index)
			}
		}
		r.done(i, item, finished, reports)
	}
	pruneOrphans(r, src.FunctionConfig())
	if err := r.finish(); err != nil {
		return r.results(), false, err
	}
	return r.results(), !r.failed(), nil
}

// selectItem reports whether item goes down the pipeline: a JobSet
// selected for Flux, written once, with no key written twice. Every item
// with a key written twice is reported and passed through as it is,
// like any item with an error.
func selectItem(item *fn.KubeObject, index *index, reports *[]report) bool {
	if !checkList(item, reports) {
		return false
	}
	if dup := duplicateKeys(nodeOf(item)); len(dup) > 0 {
		*reports = append(*reports, report{item, dup})
		return false
	}
	if !selected(item, reports) {
		return false
	}
	if index.duplicate(item.GetNamespace(), item.GetName()) {
		*reports = append(*reports, report{item, finding.List{{Severity: finding.Error, Path: "metadata.name",
			Message: "the input holds this JobSet more than once; keep one (their generated ConfigMap and Secret would collide)"}}})
		return false
	}
	return true
}

// selected reports whether item is a JobSet to render. Other objects
// marked for Flux, and malformed markers, are reported.
func selected(item *fn.KubeObject, reports *[]report) bool {
	value, marked := item.GetAnnotations()[settings.EnabledAnnotation]
	checkUnselected(item, reports)
	if !marked || item.IsLocalConfig() {
		return false
	}
	var found finding.List
	path := "metadata.annotations[" + settings.EnabledAnnotation + "]"
	switch {
	case item.GetKind() != jobset.Kind:
		return false
	case item.GetAPIVersion() != jobset.APIVersion:
		found.Warnf("apiVersion", "only %s JobSets can be rendered for Flux; this one is left unchanged", jobset.APIVersion)
	case value != "true" && value != "false":
		found.Errorf(path, "must be \"true\" or \"false\", got %q", value)
	}
	if len(found) > 0 {
		*reports = append(*reports, report{item, found})
	}
	return value == "true" && !found.HasErrors() && len(found) == 0
}

// outcome is what the pipeline made of one JobSet: the JobSet edited for
// Flux and the objects generated for it, unless a report holds an error.
type outcome struct {
	jobset    *fn.KubeObject
	generated []*fn.KubeObject
	reports   []report
}

func (o *outcome) failed() bool {
	for _, rep := range o.reports {
		if rep.found.HasErrors() {
			return true
		}
	}
	return false
}

// steps collects one JobSet's findings, step by step.
type steps struct{ found finding.List }

// ok adds a step's findings and reports whether the pipeline goes on:
// a step with an error stops it.
func (st *steps) ok(found finding.List) bool {
	st.found.Add(found)
	return !st.found.HasErrors()
}

// processJobSet is the pipeline of one JobSet: read, resolve its
// settings, validate, derive the plan, generate the files and the key,
// render. It works on a copy of the JobSet, so nothing is half-applied:
// the copy replaces the original only when every step succeeded.
func (p *Processor) processJobSet(item *fn.KubeObject, config settings.Settings, index *index) (out outcome) {
	var st steps
	defer func() { out.reports = append([]report{{item, finish(st.found)}}, out.reports...) }()

	rn := item.CopyToResourceNode()
	js, found := readJobSet(rn)
	if !st.ok(found) {
		return out
	}
	s, found := settings.Resolve(config, js)
	if !st.ok(found) || !st.ok(plan.Validate(js, s)) {
		return out
	}
	pl, notes := plan.Derive(js, s)
	st.ok(notes)
	gen, found, secretReport := p.generate(pl, index)
	out.reports = append(out.reports, secretReport...)
	if !st.ok(found) || !st.ok(checkInstance(pl, gen, index)) {
		return out
	}
	edited, objects, err := render(rn, pl, gen, item.GetAnnotations())
	if err != nil {
		st.found.Errorf("", "cannot edit the JobSet: %v", err)
		return out
	}
	st.found = summarize(st.found, pl)
	out.jobset, out.generated = edited, objects
	return out
}

// finish drops the infos of a JobSet with an error: it is left as it
// was, and nothing was set on its behalf.
func finish(found finding.List) finding.List {
	if found.HasErrors() {
		return slices.DeleteFunc(found, func(f finding.Finding) bool { return f.Severity == finding.Info })
	}
	return found
}

// generated is what the function generates for a JobSet besides its
// edits: the ConfigMap's files, and the CURVE certificate of a new Secret
// (nil when none is generated).
type generated struct {
	files fluxfiles.Files
	cert  []byte
}

// generate makes the Flux files and the CURVE key of a plan, and checks
// the objects of the same names already in the input. The findings of
// an existing Secret are reported on that Secret.
func (p *Processor) generate(pl *plan.Plan, index *index) (generated, finding.List, []report) {
	var found finding.List
	var reports []report
	if cm := index.record("ConfigMap", pl.Namespace, pl.ConfigMapName); cm != nil && cm.Label(plan.ManagedByLabel) != plan.ManagedByValue {
		found.Errorf("metadata.name", "the ConfigMap %q that jobset-flux generates for this JobSet already exists and was not made by jobset-flux (no %s=%s label); rename or remove it", pl.ConfigMapName, plan.ManagedByLabel, plan.ManagedByValue)
	}
	existing := index.whole("Secret", pl.Namespace, pl.SecretName)
	cert, f, secretFound := p.certificate(pl, existing)
	found.Add(f)
	if len(secretFound) > 0 {
		reports = append(reports, report{existing, secretFound})
		if secretFound.HasErrors() {
			found.Errorf("", "its CURVE Secret %q is not usable (see the error on that Secret)", pl.SecretName)
		}
	}
	files, err := fluxfiles.Generate(pl)
	if err != nil {
		found.Errorf("", "cannot generate the Flux files: %v", err)
	}
	return generated{files: files, cert: cert}, found, reports
}

// index finds the input's ConfigMaps and Secrets by kind, namespace and
// name, at their positions in the list, and counts the input's JobSets
// selected for Flux by namespace and name. What stands at a position
// changes as the loop goes on (a generated object replaces the input's):
// find reads the run's output table and its whole items.
type index struct {
	positions map[string]int
	jobsets   map[string]int
	r         *run
	// claims are the subdomains the input's Services and JobSets claim,
	// by namespace/subdomain (instance.go).
	claims map[string][]claim
}

func key(kind, namespace, name string) string { return kind + "/" + namespace + "/" + name }

func newIndex(r *run) *index {
	ix := &index{positions: map[string]int{}, jobsets: map[string]int{}, r: r, claims: newClaims(r)}
	for i, it := range r.input {
		switch it.Kind {
		case "ConfigMap", "Secret":
			if it.APIVersion == "v1" {
				ix.positions[key(it.Kind, it.Namespace, it.Name)] = i
			}
		case jobset.Kind:
			if it.APIVersion == jobset.APIVersion && it.Annotation(settings.EnabledAnnotation) == "true" && !it.LocalConfig() {
				ix.jobsets[key(jobset.Kind, it.Namespace, it.Name)]++
			}
		}
	}
	return ix
}

// position is where the input holds a v1 object of kind (a ConfigMap or
// a Secret), namespace and name.
func (ix *index) position(kind, namespace, name string) (int, bool) {
	i, ok := ix.positions[key(kind, namespace, name)]
	return i, ok
}

// record is the record of what stands where the input holds the object,
// or nil.
func (ix *index) record(kind, namespace, name string) *resourcelist.Record {
	if i, ok := ix.position(kind, namespace, name); ok {
		return ix.r.out[i]
	}
	return nil
}

// whole is what stands where the input holds the Secret, whole (the run
// holds every Secret of the input: keep), or nil.
func (ix *index) whole(kind, namespace, name string) *fn.KubeObject {
	if i, ok := ix.position(kind, namespace, name); ok {
		return ix.r.held[i]
	}
	return nil
}

func (ix *index) duplicate(namespace, name string) bool {
	return ix.jobsets[key(jobset.Kind, namespace, name)] > 1
}

// withPlacement gives a regenerated object the file placement of the
// object it replaces, so kpt keeps it where the package has it.
func withPlacement(obj *fn.KubeObject, old *resourcelist.Record) *fn.KubeObject {
	annotations := old.Annotations()
	// In key order: a key the object lacks is appended, and the output
	// must not depend on map order.
	for _, k := range slices.Sorted(maps.Keys(annotations)) {
		if v := annotations[k]; isPlacement(k) {
			if err := obj.SetAnnotation(k, v); err != nil {
				panic(fmt.Sprintf("setting annotation on a generated object: %v", err))
			}
		}
	}
	return obj
}
