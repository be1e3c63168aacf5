// Package transform is the jobset-flux KRM function. Each JobSet goes
// down one pipeline (processJobSet): read, select, resolve its settings
// (pkg/settings), validate and derive its plan (pkg/plan), generate the
// Flux files and the CURVE key, render (edit the JobSet's YAML, build the
// ConfigMap and Secret), and report results. A JobSet with any error is
// left exactly as it was; every other item is passed through.
// docs/design.md describes each step.
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

// report is what the function says about one object.
type report struct {
	obj   *fn.KubeObject
	found finding.List
}

// Process implements fn.ResourceListProcessor: the function config is
// resolved once, then each JobSet selected goes down the pipeline
// (processJobSet), and its outcome replaces it; generated objects whose
// JobSet is gone are pruned when that is safe (pruneOrphans), and new
// ones get files of their own (uniquePaths). It returns false when any
// error result was produced.
func (p *Processor) Process(rl *fn.ResourceList) (bool, error) {
	return p.process(rl, nil, nil)
}

// ProcessCompact is Process for a list that is then written by
// resourcelist.WriteCompacted with the Compactor it returns: each item the
// function is done with is handed to the Compactor, which encodes it in
// the background, and stands in the list as a stub from then on (see
// compacting). Memory then follows the output text, not the trees of the
// whole list; the bytes written are those of Process and
// resourcelist.Write. With a spool (not nil) the text goes to its file,
// not memory (resourcelist.NewSpooledCompactor); the Compactor owns it.
func (p *Processor) ProcessCompact(rl *fn.ResourceList, sp *resourcelist.Spool) (bool, *resourcelist.Compactor, error) {
	c := resourcelist.NewSpooledCompactor(stubKeeps, sp)
	ok, err := p.process(rl, c, nil)
	if err != nil {
		c.Release()
		return false, nil, err
	}
	return ok, c, nil
}

// process is Process, compacting items into c when c is not nil, and
// loading the items of a lazily parsed list from lazy when it is not nil
// (see ProcessStream).
func (p *Processor) process(rl *fn.ResourceList, c *resourcelist.Compactor, lazy *resourcelist.Lazy) (bool, error) {
	var reports []report
	var cp *compacting
	defer func() { rl.Results = append(rl.Results, results(reports, cp.meta)...) }()

	config, found := p.readConfig(rl.FunctionConfig)
	if len(found) > 0 {
		reports = append(reports, report{rl.FunctionConfig, found})
	}
	if found.HasErrors() {
		return false, nil
	}
	if err := loadEarly(rl.Items, lazy); err != nil {
		return false, err
	}
	var err error
	if rl.Items, err = unwrapLists(rl.Items, lazy, &reports); err != nil {
		return false, err
	}
	cp = newCompacting(c, lazy, rl.Items)
	index := newIndex(rl.Items, cp.meta)
	var added fn.KubeObjects
	for i := range rl.Items {
		item, err := loadAt(rl.Items, i, lazy)
		if err != nil {
			return false, err
		}
		from := len(reports)
		// Every item is written back, by Encode or by the standalone
		// command: a block scalar no reader can read must not be.
		yamltree.SafeBlockStyles(nodeOf(item))
		if !selectItem(item, index, &reports) {
			rl.Items[i] = unrenderDisabled(item, &reports)
			cp.done(rl.Items, i, item, reports[from:])
			continue
		}
		out := p.processJobSet(item, config, index)
		reports = append(reports, out.reports...)
		if !out.failed() {
			rl.Items[i] = out.jobset
			more, replaced := place(out.generated, rl.Items, index)
			added = append(added, cp.added(more)...)
			cp.replaced(rl.Items, i, replaced)
		}
		cp.done(rl.Items, i, item, reports[from:])
	}
	rl.Items = append(rl.Items, added...)
	rl.Items = pruneOrphans(rl.Items, rl.FunctionConfig, &reports, cp)
	if err := cp.uniquePaths(rl.Items, added); err != nil {
		return false, err
	}
	for _, r := range reports {
		if r.found.HasErrors() {
			return false, nil
		}
	}
	return true, nil
}

// selectItem reports whether item goes down the pipeline: a JobSet
// selected for Flux, written once, with no key written twice. Every item
// with a key written twice is reported and passed through as it is,
// like any item with an error.
func selectItem(item *fn.KubeObject, index *index, reports *[]report) bool {
	if dup := duplicateKeys(nodeOf(item)); len(dup) > 0 {
		*reports = append(*reports, report{item, dup})
		return false
	}
	if !selected(item, reports) {
		return false
	}
	if index.duplicate(item) {
		*reports = append(*reports, report{item, finding.List{{Severity: finding.Error, Path: "metadata.name",
			Message: "the input holds this JobSet more than once; keep one (their generated ConfigMap and Secret would collide)"}}})
		return false
	}
	return true
}

// place puts each generated object where the input holds one of its
// kind, namespace and name (kpt wrote it into the package), and returns
// the others, to be appended, and the positions it replaced.
func place(generated []*fn.KubeObject, items fn.KubeObjects, index *index) (added []*fn.KubeObject, replaced []int) {
	for _, obj := range generated {
		if at, ok := index.position(obj); ok {
			items[at] = withPlacement(obj, index.meta(items[at]))
			replaced = append(replaced, at)
		} else {
			added = append(added, obj)
		}
	}
	return added, replaced
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
	if cm := index.find("ConfigMap", pl.Namespace, pl.ConfigMapName); cm != nil && index.meta(cm).GetLabel(plan.ManagedByLabel) != plan.ManagedByValue {
		found.Errorf("metadata.name", "the ConfigMap %q that jobset-flux generates for this JobSet already exists and was not made by jobset-flux (no %s=%s label); rename or remove it", pl.ConfigMapName, plan.ManagedByLabel, plan.ManagedByValue)
	}
	existing := index.find("Secret", pl.Namespace, pl.SecretName)
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

// index finds input objects by kind, namespace and name. The items
// are those of the list, which may become stubs as the loop goes on:
// what find returns is read through meta.
type index struct {
	positions map[string]int
	items     fn.KubeObjects
	jobsets   map[string]int
	meta      metaOf
	// subdomains are the input's Services and JobSets by the subdomain
	// they claim, built on first use (instance.go).
	subdomains map[string][]claim
}

func key(kind, namespace, name string) string { return kind + "/" + namespace + "/" + name }

func newIndex(items fn.KubeObjects, meta metaOf) *index {
	ix := &index{positions: map[string]int{}, items: items, jobsets: map[string]int{}, meta: meta}
	for i, obj := range items {
		it := meta(obj)
		switch it.GetKind() {
		case "ConfigMap", "Secret":
			if it.GetAPIVersion() == "v1" {
				ix.positions[key(it.GetKind(), it.GetNamespace(), it.GetName())] = i
			}
		case jobset.Kind:
			if it.GetAPIVersion() == jobset.APIVersion && it.GetAnnotation(settings.EnabledAnnotation) == "true" && !it.IsLocalConfig() {
				ix.jobsets[key(jobset.Kind, it.GetNamespace(), it.GetName())]++
			}
		}
	}
	return ix
}

func (ix *index) find(kind, namespace, name string) *fn.KubeObject {
	if i, ok := ix.positions[key(kind, namespace, name)]; ok {
		return ix.items[i]
	}
	return nil
}

func (ix *index) position(obj *fn.KubeObject) (int, bool) {
	m := ix.meta(obj)
	i, ok := ix.positions[key(m.GetKind(), m.GetNamespace(), m.GetName())]
	return i, ok
}

func (ix *index) duplicate(js *fn.KubeObject) bool {
	m := ix.meta(js)
	return ix.jobsets[key(jobset.Kind, m.GetNamespace(), m.GetName())] > 1
}

// withPlacement gives a regenerated object the file placement of the
// object it replaces, so kpt keeps it where the package has it.
func withPlacement(obj *fn.KubeObject, old resourcelist.Meta) *fn.KubeObject {
	annotations := old.GetAnnotations()
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
