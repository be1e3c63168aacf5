package main

import (
	"fmt"
	"slices"
	"strings"
)

// summary is the median and range of one figure over runs.
type summary struct {
	med, min, max float64
	n             int
}

// summarize returns the median (the mean of the middle two for an even
// count), minimum and maximum.
func summarize(v []float64) summary {
	if len(v) == 0 {
		return summary{}
	}
	s := slices.Clone(v)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return summary{med: med, min: s[0], max: s[len(s)-1], n: len(s)}
}

func (s summary) String() string {
	if s.n == 0 {
		return ""
	}
	if s.n == 1 {
		return fmt.Sprintf("%.2f s", s.med)
	}
	return fmt.Sprintf("%.2f s (%.2f-%.2f)", s.med, s.min, s.max)
}

// ratio is a/b of two medians, as "2.31x", or "" when either is missing.
func ratio(a, b summary) string {
	if a.n == 0 || b.n == 0 || b.med <= 0 {
		return ""
	}
	return fmt.Sprintf("%.2fx", a.med/b.med)
}

// milestoneRows are the rows of the main table: milestone, its label, and
// whether the floor has it.
var milestoneRows = []struct {
	key, label string
	floor      bool
}{
	{msCreated, "all pods created", true},
	{msInitStart, "the last view copy started (flux-installer's first log line)", false},
	{msInitDone, "the last view copy done (its `done` log line)", false},
	{msRunning, "**all pods Running**", true},
	{msBrokerStart, "the last broker started (the entrypoint's `starting:` line)", false},
	{msRC1, "rank 0's broker: rc1 done (modules loaded)", false},
	{msJoined, "**every broker joined** (rank 0's `quorum-full`)", false},
	{msFirstOutput, "**the job's first output line** (a task's `date +%s.%N`)", true},
	{msLastOutput, "the job's last output line", true},
	{msCompleted, "**the end**: JobSet Completed (a MiniCluster's Job, a TrainJob: Complete)", true},
}

// splitRows are the Flux start-up's parts: from one milestone to the next.
var splitRows = []struct{ from, to, label string }{
	{"", msInitStart, "Kubernetes until the view copy: pods created, scheduled, sandboxes, init container started"},
	{msInitStart, msInitDone, "**init container**: the view copy (until the last pod's is done)"},
	{msInitDone, msJoined, "**broker quorum**: app containers start, brokers load modules and connect, the last joins"},
	{msJoined, msFirstOutput, "**job**: `flux run` submits, Fluxion schedules, the first task prints"},
	{msFirstOutput, msCompleted, "job: the rest of the job, brokers shut down, pods end, JobSet Completed"},
}

// values collects one milestone (or the difference of two) over runs.
func values(runs []*result, from, to string) []float64 {
	var v []float64
	for _, r := range runs {
		end, ok := r.Milestones[to]
		if !ok {
			continue
		}
		v = append(v, end-r.Milestones[from])
	}
	return v
}

// byKind groups one pod count's runs by variant (the failing ones apart).
func byKind(runs []*result, pods int) (ok map[string][]*result, failed map[string][]*result) {
	ok, failed = map[string][]*result{}, map[string][]*result{}
	for _, r := range runs {
		switch {
		case r.Pods != pods:
		case r.Fail:
			failed[r.Variant] = append(failed[r.Variant], r)
		default:
			ok[r.Variant] = append(ok[r.Variant], r)
		}
	}
	return ok, failed
}

// sizeTables writes the tables of one pod count: a column per kind, each
// Flux variant's ratio to the floor, then the split of the start-up.
func sizeTables(b *strings.Builder, pods int, kinds []string, runs map[string][]*result, warm map[string]*result) {
	fmt.Fprintf(b, "### %d pods\n\n", pods)
	var all []*result
	counts := make([]string, 0, len(kinds))
	for _, k := range kinds {
		all = append(all, runs[k]...)
		counts = append(counts, fmt.Sprintf("%d %s", len(runs[k]), variant{kind: k}.title()))
	}
	loads, others := loadRange(all)
	fmt.Fprintf(b, "Runs, interleaved: %s; 1-minute load at their starts %s; other pods running on the node at their starts %s.\n\n", strings.Join(counts, ", "), loads, others)
	head, rule := "| from `kubectl apply` to", "|---"
	var ratios []string
	for _, k := range kinds {
		head += " | " + variant{kind: k}.title()
		rule += "|---"
	}
	for _, k := range kinds {
		if k != kindFloor && k != kindFluxOwn && len(runs[kindFloor]) > 0 {
			ratios = append(ratios, k)
			head += " | " + k + "/floor"
			rule += "|---"
		}
	}
	b.WriteString(head + " |\n" + rule + "|\n")
	for _, row := range milestoneRows {
		fl := summarize(values(runs[kindFloor], "", row.key))
		line := "| " + row.label
		for _, k := range kinds {
			line += " | " + summarize(values(runs[k], "", row.key)).String()
		}
		for _, k := range ratios {
			var f summary
			if row.floor {
				f = summarize(values(runs[k], "", row.key))
			}
			line += " | " + ratio(f, fl)
		}
		b.WriteString(line + " |\n")
	}
	var mounts []string
	for _, k := range kinds {
		if (variant{kind: k}).rendered() {
			mounts = append(mounts, k)
		}
	}
	splitTable(b, mounts, runs, warm)
}

// splitTable writes the Flux start-up's parts, per view-mount mode, and
// what each pod wrote to the node's disk.
func splitTable(b *strings.Builder, mounts []string, flux map[string][]*result, warm map[string]*result) {
	head, rule := "| Flux start-up, split", "|---"
	for _, m := range mounts {
		head += " | " + m
		rule += "|---"
	}
	b.WriteString("\n" + head + " |\n" + rule + "|\n")
	row := func(label string, cell func(m string) string) {
		b.WriteString("| " + label)
		for _, m := range mounts {
			b.WriteString(" | " + cell(m))
		}
		b.WriteString(" |\n")
	}
	for _, r := range splitRows {
		row(r.label, func(m string) string { return summarize(values(flux[m], r.from, r.to)).String() })
	}
	row("from apply to the last broker started (no view copy in image mode)", func(m string) string {
		return summarize(values(flux[m], "", msBrokerStart)).String()
	})
	row("init container: one pod's view copy", func(m string) string {
		var copies []float64
		for _, r := range flux[m] {
			copies = append(copies, r.InitCopy...)
		}
		if len(copies) == 0 {
			return "none"
		}
		return fmt.Sprintf("%s (%d pods)", summarize(copies), len(copies))
	})
	row("disk: per pod, in its emptyDirs (flux-install/view + flux-software)", func(m string) string {
		if w := warm[m]; w != nil {
			return diskCell(w.Disk)
		}
		return ""
	})
	row("disk: per pod, the image volume's writable layer", func(m string) string {
		if w := warm[m]; w != nil && m == "image" {
			return diskCell(w.ImageVolumes)
		}
		return "none"
	})
	b.WriteString("\n")
}

// loadRange formats the range of load averages and of other pods.
func loadRange(runs []*result) (loads, others string) {
	var l, o []float64
	for _, r := range runs {
		l = append(l, r.Load1)
		o = append(o, float64(r.OtherPods))
	}
	ls, oth := summarize(l), summarize(o)
	return fmt.Sprintf("%.1f-%.1f", ls.min, ls.max), fmt.Sprintf("%.0f-%.0f", oth.min, oth.max)
}

// diskCell is the per-pod size of the view copy; pods of one run copy the
// same image, so a spread means something went wrong and is shown.
func diskCell(d []diskUsage) string {
	if len(d) == 0 {
		return ""
	}
	var bytes, alloc, files []float64
	for _, u := range d {
		bytes = append(bytes, float64(u.Bytes))
		alloc = append(alloc, float64(u.Allocated))
		files = append(files, float64(u.Files))
	}
	bs, as, fs := summarize(bytes), summarize(alloc), summarize(files)
	cell := fmt.Sprintf("%s apparent, %s allocated, %.0f entries", size(bs.med), size(as.med), fs.med)
	if bs.min != bs.max {
		cell += fmt.Sprintf(" (apparent %s-%s)", size(bs.min), size(bs.max))
	}
	return cell + fmt.Sprintf("; %s for the %d pods", size(as.med*float64(len(d))), len(d))
}

// size is a byte count in MB, or in kB below a tenth of a MB (what an
// image volume's writable layer or a mounted view's link come to).
func size(bytes float64) string {
	if bytes < 1e5 {
		return fmt.Sprintf("%.1f kB", bytes/1e3)
	}
	return fmt.Sprintf("%.1f MB", bytes/1e6)
}

// tables writes the comparison across pod counts, what grows with them,
// the failing runs, and then every pod count's own tables.
func tables(sizes []int, kinds []string, runs []*result, warm map[string]*result) string {
	var b strings.Builder
	comparison(&b, sizes, kinds, runs)
	growth(&b, sizes, kinds, runs)
	failures(&b, sizes, runs)
	for _, n := range sizes {
		ok, _ := byKind(runs, n)
		w := map[string]*result{}
		for _, k := range kinds {
			w[k] = warm[warmKey(n, k)]
		}
		sizeTables(&b, n, kinds, ok, w)
	}
	return b.String()
}
