package main

import (
	"fmt"
	"strings"
)

// targetFactor is the bound: a Flux variant's first output within
// this factor of the pods' floor plus Flux's own start.
const targetFactor = 1.2

// ownStart is Flux's own start in each run of it: from the clock printed
// just before `flux start --test-size` to the first task's clock.
func ownStart(runs []*result) []float64 { return values(runs, msBrokerStart, msFirstOutput) }

// comparison writes the side-by-side tables: the first output and the end
// of every kind at every pod count, and each Flux variant against the
// target.
func comparison(b *strings.Builder, sizes []int, kinds []string, runs []*result) {
	b.WriteString("### Side by side\n\n")
	b.WriteString("Seconds from the start of `kubectl apply` to **the job's first output line**: median (min-max) of the runs. " +
		"Flux's own start is `flux start --test-size=N` in one pod from the same view, from `flux start` to the first task's line: no Kubernetes, network or DNS between its brokers. " +
		fmt.Sprintf("The target column is %.1f x (floor + Flux's own start); a Flux variant's ratio to (floor + Flux's own start) is beside it.\n\n", targetFactor))
	var fluxKinds []string
	head, rule := "| pods | load", "|---|---"
	for _, k := range kinds {
		head += " | " + variant{kind: k}.title()
		rule += "|---"
		if k == kindFluxOwn {
			head += " | target"
			rule += "|---"
		}
		if k != kindFloor && k != kindFluxOwn {
			fluxKinds = append(fluxKinds, k)
		}
	}
	for _, k := range fluxKinds {
		head += " | " + k + " / (floor + own)"
		rule += "|---"
	}
	b.WriteString(head + " |\n" + rule + "|\n")
	for _, n := range sizes {
		ok, _ := byKind(runs, n)
		var all []*result
		for _, k := range kinds {
			all = append(all, ok[k]...)
		}
		if len(all) == 0 {
			continue
		}
		loads, _ := loadRange(all)
		floor := summarize(values(ok[kindFloor], "", msFirstOutput))
		own := summarize(ownStart(ok[kindFluxOwn]))
		line := fmt.Sprintf("| %d | %s", n, loads)
		for _, k := range kinds {
			switch k {
			case kindFluxOwn:
				line += " | " + own.String()
				if floor.n > 0 && own.n > 0 {
					line += fmt.Sprintf(" | %.2f s", targetFactor*(floor.med+own.med))
				} else {
					line += " | "
				}
			default:
				line += " | " + summarize(values(ok[k], "", msFirstOutput)).String()
			}
		}
		for _, k := range fluxKinds {
			line += " | " + ratio(summarize(values(ok[k], "", msFirstOutput)), summary{med: floor.med + own.med, n: min(floor.n, own.n)})
		}
		b.WriteString(line + " |\n")
	}
	b.WriteString("\nSeconds from the start of `kubectl apply` to **the end**: the JobSet's Completed (the floor, jobset-flux, the Trainer's TrainJob: its Complete), the MiniCluster's Job Complete, and for Flux's own start its pod Succeeded.\n\n")
	head, rule = "| pods", "|---"
	for _, k := range kinds {
		head += " | " + variant{kind: k}.title()
		rule += "|---"
	}
	b.WriteString(head + " |\n" + rule + "|\n")
	for _, n := range sizes {
		ok, _ := byKind(runs, n)
		line := fmt.Sprintf("| %d", n)
		for _, k := range kinds {
			line += " | " + summarize(values(ok[k], "", msCompleted)).String()
		}
		b.WriteString(line + " |\n")
	}
	b.WriteString("\n")
}

// growth writes, for each jobset-flux variant and anchor, every part of
// the start-up at every pod count, and how much it grew from the smallest
// count to the largest against the pod count.
func growth(b *strings.Builder, sizes []int, kinds []string, runs []*result) {
	if len(sizes) < 2 {
		return
	}
	first, last := sizes[0], sizes[len(sizes)-1]
	b.WriteString("### What grows with the pod count\n\n")
	fmt.Fprintf(b, "Each part of the start-up (medians, seconds) at every pod count, and its growth from %d to %d pods (%.1fx the pods). A part that grows faster than the pods is in bold.\n\n", first, last, float64(last)/float64(first))
	head, rule := "| variant | part", "|---|---"
	for _, n := range sizes {
		head += fmt.Sprintf(" | %d", n)
		rule += "|---"
	}
	b.WriteString(head + " | growth |\n" + rule + "|---|\n")
	for _, k := range kinds {
		parts := growthParts(variant{kind: k})
		for _, p := range parts {
			line := "| " + variant{kind: k}.title() + " | " + p.label
			var lo, hi summary
			for _, n := range sizes {
				ok, _ := byKind(runs, n)
				s := summarize(values(ok[k], p.from, p.to))
				if n == first {
					lo = s
				}
				if n == last {
					hi = s
				}
				if s.n == 0 {
					line += " | "
					continue
				}
				line += fmt.Sprintf(" | %.2f", s.med)
			}
			g := ratio(hi, lo)
			if g != "" && hi.med/lo.med > float64(last)/float64(first) {
				g = "**" + g + "**"
			}
			b.WriteString(line + " | " + g + " |\n")
		}
	}
	b.WriteString("\n")
}

// part is one step of a start-up: from one milestone to the next.
type part struct{ from, to, label string }

// growthParts are the parts a variant's runs can show.
func growthParts(v variant) []part {
	switch {
	case v.kind == kindFloor:
		return []part{{"", msRunning, "apply to all pods Running"}, {"", msFirstOutput, "apply to first output"}, {msFirstOutput, msCompleted, "first output to Completed"}}
	case v.kind == kindFluxOwn:
		return []part{{msBrokerStart, msRC1, "flux start to rank 0's rc1 done"}, {msRC1, msJoined, "rc1 done to every broker joined"}, {msJoined, msFirstOutput, "joined to first output (flux run)"}, {msBrokerStart, msFirstOutput, "flux start to first output"}}
	case v.copies():
		return []part{{"", msInitStart, "apply to the last view copy started"}, {msInitStart, msInitDone, "the view copy"}, {msInitDone, msBrokerStart, "copy done to the last broker started"},
			{msBrokerStart, msJoined, "last broker started to every broker joined"}, {msJoined, msFirstOutput, "joined to first output (flux run)"}, {"", msFirstOutput, "apply to first output"}, {msFirstOutput, msCompleted, "first output to Completed"}}
	case v.rendered():
		return []part{{"", msBrokerStart, "apply to the last broker started"},
			{msBrokerStart, msJoined, "last broker started to every broker joined"}, {msJoined, msFirstOutput, "joined to first output (flux run)"}, {"", msFirstOutput, "apply to first output"}, {msFirstOutput, msCompleted, "first output to Completed"}}
	}
	return []part{{"", msRunning, "apply to all pods Running"}, {"", msJoined, "apply to every broker joined"}, {msJoined, msFirstOutput, "joined to first output (flux run)"}, {"", msFirstOutput, "apply to first output"}, {msFirstOutput, msCompleted, "first output to the end"}}
}

// failures writes the runs whose command exits 3: how each ended, and when.
func failures(b *strings.Builder, sizes []int, runs []*result) {
	var rows []string
	for _, n := range sizes {
		_, failed := byKind(runs, n)
		for _, k := range []string{kindCopy, kindImage, kindOperator, kindTrainer} {
			for _, r := range failed[k] {
				rows = append(rows, fmt.Sprintf("| %d | %s | %.2f s | %.2f s | **%s** (%s) |", n, variant{kind: k}.title(),
					r.Milestones[msFirstOutput], r.Milestones[msCompleted], r.End, strings.ReplaceAll(r.EndWhy, "|", "/")))
			}
		}
	}
	if len(rows) == 0 {
		return
	}
	b.WriteString("### A command that fails\n\nEvery task prints its line and exits 3; one run each.\n\n")
	b.WriteString("| pods | variant | first output | the end | ends as |\n|---|---|---|---|---|\n")
	b.WriteString(strings.Join(rows, "\n") + "\n\n")
}
