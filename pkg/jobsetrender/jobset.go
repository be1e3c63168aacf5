// Package jobsetrender renders one JobSet for Flux. Each JobSet goes down
// one pipeline (Renderer.Render): read it, resolve its settings
// (pkg/settings), validate and derive its plan (pkg/plan), generate the
// Flux files and the CURVE key, check what the instance would apply
// beside it, render (edit the JobSet's YAML, build the ConfigMap and
// Secret), and summarize. A JobSet with any error is left exactly as it
// was. What the render reads of the rest of the list it asks of
// Neighbours; pkg/transform runs it over a whole list.
// docs/contributing/design.md describes each step.
package jobsetrender

import (
	"slices"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/fluxfiles"
	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// Report is what the render says about one object: the JobSet, or
// another object of the list it read (an existing CURVE Secret).
type Report struct {
	Obj   *fn.KubeObject
	Found finding.List
}

// Outcome is what the pipeline made of one JobSet: the JobSet edited for
// Flux and the objects generated for it, unless a report holds an error.
type Outcome struct {
	JobSet    *fn.KubeObject
	Generated []*fn.KubeObject
	Reports   []Report
}

// Failed reports whether any report holds an error: then the JobSet is
// left as it was and nothing is generated.
func (o *Outcome) Failed() bool {
	for _, rep := range o.Reports {
		if rep.Found.HasErrors() {
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

// Render is the pipeline of one JobSet: read, resolve its settings over
// config (the function config's), validate, derive the plan, generate
// the files and the key, check the instance, render, check the sizes of
// what was rendered, summarize. It works
// on a copy of the JobSet, so nothing is half-applied: the copy replaces
// the original only when every step succeeded.
func (r *Renderer) Render(item *fn.KubeObject, config settings.Settings, nb Neighbours) (out Outcome) {
	var st steps
	defer func() { out.Reports = append([]Report{{item, withoutInfosOnError(st.found)}}, out.Reports...) }()

	rn := item.CopyToResourceNode()
	js, found := readJobSet(rn)
	if !st.ok(found) {
		return out
	}
	s, found := settings.Resolve(config, js)
	if !st.ok(found) || !st.ok(plan.Validate(js, s)) || !st.ok(checkEnvFromObjects(js, &s, nb)) {
		return out
	}
	pl, notes := plan.Derive(js, s)
	st.ok(notes)
	gen, found, secretReports := r.generate(pl, nb)
	out.Reports = append(out.Reports, secretReports...)
	if !st.ok(found) || !st.ok(checkInstance(pl, gen, nb)) {
		return out
	}
	edited, objects, err := render(rn, pl, gen, item.GetAnnotations())
	if err != nil {
		st.found.Errorf("", "cannot edit the JobSet: %v", err)
		return out
	}
	if !st.ok(checkSizes(edited, objects)) {
		return out
	}
	st.found = summarize(st.found, pl)
	out.JobSet, out.Generated = edited, objects
	return out
}

// withoutInfosOnError drops the infos of a JobSet with an error: it is
// left as it was, and nothing was set on its behalf.
func withoutInfosOnError(found finding.List) finding.List {
	if found.HasErrors() {
		return slices.DeleteFunc(found, func(f finding.Finding) bool { return f.Severity == finding.Info })
	}
	return found
}

// generate makes the Flux files and the CURVE key of a plan, and checks
// the objects of the same names already in the input. The findings of
// an existing Secret are reported on that Secret.
func (r *Renderer) generate(pl *plan.Plan, nb Neighbours) (generated, finding.List, []Report) {
	var found finding.List
	var reports []Report
	if exists, managed := nb.ConfigMap(pl.Namespace, pl.ConfigMapName); exists && !managed {
		found.Errorf("metadata.name", "the ConfigMap %q that jobset-flux generates for this JobSet already exists and was not made by jobset-flux (no %s=%s label); rename or remove it", pl.ConfigMapName, plan.ManagedByLabel, plan.ManagedByValue)
	}
	if pl.Settings.NetworkPolicy {
		name := NetworkPolicyName(pl.Name)
		if exists, managed := nb.NetworkPolicy(pl.Namespace, name); exists && !managed {
			found.Errorf("metadata.name", "the NetworkPolicy %q that jobset-flux generates for this JobSet (network-policy is \"true\") already exists and was not made by jobset-flux (no %s=%s label); rename or remove it, or leave network-policy unset and keep your own", name, plan.ManagedByLabel, plan.ManagedByValue)
		}
	}
	existing := nb.Secret(pl.Namespace, pl.SecretName)
	cert, f, secretFound := r.certificate(pl, existing)
	found.Add(f)
	if len(secretFound) > 0 {
		reports = append(reports, Report{existing, secretFound})
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
