package jobsetrender

import (
	"fmt"
	"slices"
	"strings"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/jobset"
	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
)

// summarize replaces the infos in found with one: what was set on the
// user's behalf (spec.network, then each replicatedJob in rank order) and
// the notes recorded while rendering (infos without a value set; their
// messages name what they are about, since the merged info has no field
// path). kpt prints every result, so a JobSet gets one info line, not one
// per field; errors and warnings keep a result each. When nothing was set
// and no note applies (re-rendering the function's own output), there is
// no info at all.
func summarize(found finding.List, pl *plan.Plan) finding.List {
	var parts, notes []string
	for _, f := range found {
		if f.Severity == finding.Info {
			notes = append(notes, f.Message)
		}
	}
	found = slices.DeleteFunc(found, func(f finding.Finding) bool { return f.Severity == finding.Info })
	// What was set is the list editJobSet set, spec.network's named by
	// their whole path.
	if len(pl.SetNetwork) > 0 {
		parts = append(parts, "set "+describeDefaults(pl.SetNetwork, jobset.NetworkPath))
	}
	for _, g := range pl.Groups {
		if len(g.Set) > 0 {
			parts = append(parts, fmt.Sprintf("replicatedJob %q: set %s", g.Name, describeDefaults(g.Set, "")))
		}
	}
	parts = append(parts, notes...)
	if len(parts) == 0 {
		return found
	}
	brokers := "brokers"
	if pl.Brokers == 1 {
		brokers = "broker"
	}
	size := fmt.Sprintf("%d %s", pl.Brokers, brokers)
	if pl.Quorum > 0 {
		size = fmt.Sprintf("elastic: %d to %d brokers, starting once %d have joined", pl.Quorum, pl.Brokers, pl.Quorum)
	}
	found.Infof("", "rendered for Flux (%s); %s", size, strings.Join(parts, "; "))
	return found
}

// describeDefaults lists defaults as field=value, each field under path.
func describeDefaults(defaults []plan.Default, path string) string {
	set := make([]string, len(defaults))
	for i, d := range defaults {
		set[i] = yamltree.Key(path, d.Field) + "=" + d.Value.String()
	}
	return strings.Join(set, ", ")
}
