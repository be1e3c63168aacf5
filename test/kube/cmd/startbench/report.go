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
	{msCompleted, "**JobSet Completed**", true},
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

// sizeTables writes the tables of one pod count.
func sizeTables(b *strings.Builder, pods int, flux, floor []*result, warm *result) {
	fmt.Fprintf(b, "### %d pods\n\n", pods)
	loads, others := loadRange(append(slices.Clone(flux), floor...))
	fmt.Fprintf(b, "%d Flux and %d floor runs, interleaved; 1-minute load at their starts %s; other pods running on the node at their starts %s.\n\n", len(flux), len(floor), loads, others)
	b.WriteString("| from `kubectl apply` to | Flux | floor | Flux/floor |\n|---|---|---|---|\n")
	for _, row := range milestoneRows {
		f := summarize(values(flux, "", row.key))
		var fl summary
		if row.floor {
			fl = summarize(values(floor, "", row.key))
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", row.label, f, fl, ratio(f, fl))
	}
	b.WriteString("\n| Flux start-up, split | median (min-max) |\n|---|---|\n")
	for _, row := range splitRows {
		fmt.Fprintf(b, "| %s | %s |\n", row.label, summarize(values(flux, row.from, row.to)))
	}
	var copies []float64
	for _, r := range flux {
		copies = append(copies, r.InitCopy...)
	}
	fmt.Fprintf(b, "| init container: one pod's view copy (%d pods) | %s |\n", len(copies), summarize(copies))
	if warm != nil {
		fmt.Fprintf(b, "| disk: the view copy per pod (flux-install/view + flux-software) | %s |\n", diskCell(warm.Disk))
	}
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
	cell := fmt.Sprintf("%.1f MB apparent, %.1f MB allocated, %.0f entries", bs.med/1e6, as.med/1e6, fs.med)
	if bs.min != bs.max {
		cell += fmt.Sprintf(" (apparent %.1f-%.1f MB)", bs.min/1e6, bs.max/1e6)
	}
	return cell + fmt.Sprintf("; %.1f MB for the %d pods", as.med*float64(len(d))/1e6, len(d))
}

// tables writes every pod count's tables, in the order of sizes.
func tables(sizes []int, runs []*result, warm map[int]*result) string {
	var b strings.Builder
	for _, n := range sizes {
		var flux, floor []*result
		for _, r := range runs {
			if r.Pods != n {
				continue
			}
			if r.Flux {
				flux = append(flux, r)
			} else {
				floor = append(floor, r)
			}
		}
		sizeTables(&b, n, flux, floor, warm[n])
	}
	return b.String()
}
