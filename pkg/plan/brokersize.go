package plan

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/jobset"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
)

// The broker settings that change how many nodes the scheduler has, or
// has when the command starts, against the flux run -N the function
// writes. flux-core's resource module leaves the ranks of [resource]
// exclude out of the resource set it hands the scheduler (acquire.c), so
// a job asking for every pod is unsatisfiable: the function asks for the
// pods left instead. broker.quorum starts the initial program once that
// many brokers are up, and Fluxion refuses a job asking for more nodes
// than are up as unsatisfiable (README, Troubleshooting): that cannot be
// made right, so it is refused.

// checkBrokerSize refuses a quorum below the instance's size and an
// exclude the function cannot read as ranks, for an instance whose
// command is one flux run over its pods.
func checkBrokerSize(js *jobset.JobSet, s *settings.Settings, groups []Group) finding.List {
	var found finding.List
	if s.Launcher || isInteractive(js, s, groups) {
		return found
	}
	size := 0
	for _, g := range groups {
		size += g.Replicas * g.PodsPerJob
	}
	if q, ok := quorum(s); ok && q < size {
		found.Errorf(s.Origin("broker-attributes"), "broker.quorum=%d is below the instance's %d brokers: rank 0 starts the command's flux run -N %d once %d brokers are up, and Fluxion refuses a job asking for more nodes than are up as unsatisfiable; remove broker.quorum (the default waits for every broker), or set flux-framework.org/launcher: \"true\" and wait for the nodes yourself (flux resource wait-up or flux resource list -s up) before your own flux run", q, size, size, q)
	}
	raw, ok := excludeValue(s)
	if !ok {
		return found
	}
	ranks, err := parseIDSet(raw, size)
	switch {
	case err != nil:
		found.Errorf(s.Origin("broker-config"), "[resource] exclude = %q: %v; the function runs the command as flux run -N <pods left> and must know which ranks exclude withholds: write it as ranks (an RFC 22 idset like \"0\" or \"0,2-3\"; rank 0 is pod 0 of Job 0 of the first replicatedJob, ranks follow in replicated-jobs order), or set flux-framework.org/launcher: \"true\" and run your own flux run", raw, err)
	case len(ranks) >= size:
		found.Errorf(s.Origin("broker-config"), "[resource] exclude = %q withholds all %d brokers from scheduling, so the command's job has no node to run on; exclude fewer ranks", raw, size)
	}
	return found
}

// quorum returns the broker.quorum of broker-attributes.
func quorum(s *settings.Settings) (int, bool) {
	for _, a := range s.BrokerAttributes {
		if v, ok := strings.CutPrefix(a, "broker.quorum="); ok {
			n, err := strconv.Atoi(v)
			return n, err == nil
		}
	}
	return 0, false
}

// excludeValue returns broker-config's [resource] exclude.
func excludeValue(s *settings.Settings) (string, bool) {
	resource, _ := s.BrokerConfig["resource"].(map[string]any)
	v, ok := resource["exclude"].(string)
	return v, ok
}

// parseIDSet reads an RFC 22 idset ("0", "0,2-3", "[1-2]") of ranks below
// size, ranks above it ignored as flux-core ignores them.
func parseIDSet(raw string, size int) (map[int]bool, error) {
	body := strings.TrimSuffix(strings.TrimPrefix(raw, "["), "]")
	ranks := map[int]bool{}
	for _, part := range strings.Split(body, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		if !isRange {
			hi = lo
		}
		a, errA := strconv.Atoi(lo)
		b, errB := strconv.Atoi(hi)
		if errA != nil || errB != nil || a < 0 || b < a || strconv.Itoa(a) != lo || strconv.Itoa(b) != hi {
			return nil, fmt.Errorf("is not a set of ranks (a hostlist, or %q is not a number or range)", part)
		}
		for r := a; r <= min(b, size-1); r++ {
			ranks[r] = true
		}
	}
	return ranks, nil
}

// applyExclude takes the ranks [resource] exclude withholds out of the
// command's flux run -N, with a note saying so. Validate accepted the
// value.
func applyExclude(p *Plan) finding.List {
	var notes finding.List
	raw, ok := excludeValue(&p.Settings)
	if !ok || p.Settings.Launcher || p.Interactive {
		return notes
	}
	ranks, err := parseIDSet(raw, p.Brokers)
	if err != nil {
		return notes
	}
	left := p.JobNodes
	for _, g := range p.Groups {
		if !g.RunsJob {
			continue
		}
		for r := g.FirstRank; r < g.FirstRank+g.Replicas*g.PodsPerJob; r++ {
			if ranks[r] {
				left--
			}
		}
	}
	if left == p.JobNodes {
		return notes
	}
	if left < 1 {
		notes.Errorf(p.Settings.Origin("broker-config"), "[resource] exclude = %q withholds every pod the command's job runs on; exclude fewer ranks", raw)
		return notes
	}
	notes.Infof("", "flux run -N %d, not %d: [resource] exclude = %q withholds %d of the job's pods from scheduling", left, p.JobNodes, raw, p.JobNodes-left)
	p.Excluded = p.JobNodes - left
	p.JobNodes = left
	p.Tasks = p.JobNodes * p.TasksPerNode
	return notes
}
