// Package transform is the jobset-flux KRM function over a whole
// ResourceList: it reads the function config once (pkg/settings), takes
// each item in list order, sends each JobSet selected for Flux down the
// pipeline of one JobSet (pkg/jobsetrender), puts the generated objects
// where the package holds them or appends them, prunes the objects
// generated for JobSets that are gone, gives new objects files of their
// own, and turns findings into results. A JobSet with any error is left
// exactly as it was; every other item is passed through.
// docs/contributing/design.md describes each step.
package transform

import (
	"io"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/jobsetrender"
	"github.com/jobset-flux/jobset-flux/pkg/resourcelist"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
	"github.com/kptdev/krm-functions-sdk/go/fn"
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
	jobsets *jobsetrender.Renderer
}

// New checks the options and returns the processor.
func New(opts Options) (*Processor, error) {
	jobsets, err := jobsetrender.New(opts.Seed, opts.Random)
	if err != nil {
		return nil, err
	}
	return &Processor{jobsets: jobsets}, nil
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
// goes down the pipeline when it is a JobSet selected (jobsetrender),
// and goes to sink once the function is done with it (run.done); the
// objects generated replace the input's objects of their names or are
// appended (run.place). At the end generated objects whose JobSet is
// gone are pruned when that is safe (run.prune) and new ones get
// files of their own (uniquePaths). It returns src's results and the
// function's (so far, with an error), and false when any error result
// was produced. An error means sink holds no list to write; one that
// wraps resourcelist.ErrUnsafe says src must be read whole.
func (p *Processor) Render(src resourcelist.Source, sink resourcelist.Sink) (fn.Results, bool, error) {
	return p.render(src, sink, Keeps)
}

// render is Render whose own metadata keep the labels and annotations
// keep allows (Keeps; TestKeepsIsEnough renders with all of them kept).
func (p *Processor) render(src resourcelist.Source, sink resourcelist.Sink, keep resourcelist.MetaFilter) (fn.Results, bool, error) {
	r := newRun(src, sink, keep)
	config, found := settings.FromFunctionConfig(src.FunctionConfig())
	r.settle([]jobsetrender.Report{{Obj: src.FunctionConfig(), Found: found}})
	if found.HasErrors() {
		return r.results(), false, r.passThrough()
	}
	r.wantPolicies(config)
	if err := r.survey(); err != nil {
		return r.results(), false, err
	}
	index := newIndex(src, r.input, &r.out, r.selectors)
	for i := range r.input {
		item, err := r.take(i)
		if err != nil {
			return r.results(), false, err
		}
		// Every item is written back, by Encode or by the standalone
		// command: a block scalar no reader can read must not be.
		yamltree.SafeBlockStyles(yamltree.NodeOf(item))
		var reports []jobsetrender.Report
		finished := item
		index.observe(item, r.input[i], &reports)
		if !selectItem(item, index, &reports) {
			var found finding.List
			if finished, found = jobsetrender.Unrender(item); len(found) > 0 {
				reports = append(reports, jobsetrender.Report{Obj: finished, Found: found})
			}
		} else {
			out := p.jobsets.Render(item, config, index)
			if index.err != nil {
				return r.results(), false, index.err
			}
			reports = append(reports, out.Reports...)
			if !out.Failed() {
				finished = out.JobSet
				r.place(out.Generated, i, index)
				r.rendered[r.input[i].Namespace+"/"+r.input[i].Name] = true
			}
		}
		r.done(i, item, finished, reports)
	}
	if err := r.prune(src.FunctionConfig()); err != nil {
		return r.results(), false, err
	}
	if err := r.finish(); err != nil {
		return r.results(), false, err
	}
	return r.results(), !r.failed(), nil
}
