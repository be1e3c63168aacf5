package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// logLine is one line of `kubectl logs --timestamps`: the container
// runtime's arrival time of the line (nanoseconds, RFC 3339) and the text.
// Pod status times are whole seconds (the API serialises them so), which
// is why the benchmark reads these instead.
type logLine struct {
	at   time.Time
	text string
}

// parseLog splits a timestamped container log into lines; lines without a
// timestamp (none are expected) are skipped.
func parseLog(log string) []logLine {
	var out []logLine
	for _, l := range strings.Split(log, "\n") {
		ts, text, ok := strings.Cut(l, " ")
		if !ok {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, ts)
		if err != nil {
			continue
		}
		out = append(out, logLine{at: at, text: text})
	}
	return out
}

// parseUnix reads `date +%s.%N` exactly (no float rounding).
func parseUnix(s string) (time.Time, error) {
	secs, frac, _ := strings.Cut(s, ".")
	sec, err := strconv.ParseInt(secs, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("clock %q: %w", s, err)
	}
	var nsec int64
	if frac != "" {
		if len(frac) > 9 {
			frac = frac[:9]
		}
		frac += strings.Repeat("0", 9-len(frac))
		if nsec, err = strconv.ParseInt(frac, 10, 64); err != nil {
			return time.Time{}, fmt.Errorf("clock %q: %w", s, err)
		}
	}
	return time.Unix(sec, nsec), nil
}

// outputs collects the job's lines (outputMark, the task's clock, its
// host) from every log: each host's clock, once.
func outputs(logs []logLine, into map[string]time.Time) error {
	for _, l := range logs {
		f := strings.Fields(l.text)
		if len(f) != 3 || f[0] != outputMark {
			continue
		}
		at, err := parseUnix(f[1])
		if err != nil {
			return err
		}
		if prev, seen := into[f[2]]; seen && !prev.Equal(at) {
			return fmt.Errorf("host %s printed its line twice (%s, %s): did a task or pod run again?", f[2], f[1], prev)
		}
		into[f[2]] = at
	}
	return nil
}

// brokerEvent finds an entry of rank 0's broker log ring, as flux dmesg
// prints it inside the job ("<time> broker.info[0]: <event>: ..."), and
// returns the broker's own timestamp of it (microseconds, UTC).
func brokerEvent(logs []logLine, event string) (time.Time, bool) {
	for _, l := range logs {
		f := strings.Fields(l.text)
		if len(f) < 3 || f[1] != "broker.info[0]:" || f[2] != event+":" {
			continue
		}
		if at, err := time.Parse(time.RFC3339Nano, f[0]); err == nil {
			return at, true
		}
	}
	return time.Time{}, false
}

// firstWith returns the arrival time of the first line starting with prefix.
func firstWith(logs []logLine, prefix string) (time.Time, bool) {
	for _, l := range logs {
		if strings.HasPrefix(l.text, prefix) {
			return l.at, true
		}
	}
	return time.Time{}, false
}

// installerSpan is the flux-installer's copy as its own log shows it: its
// first line (printed as the script starts) to its "done" line.
func installerSpan(logs []logLine) (start, done time.Time, err error) {
	if len(logs) == 0 {
		return start, done, fmt.Errorf("the flux-installer logged nothing")
	}
	done, ok := firstWith(logs, "flux-installer: done")
	if !ok {
		return start, done, fmt.Errorf("the flux-installer did not log done")
	}
	return logs[0].at, done, nil
}

// fluxStart is the clock Flux's own start printed just before it ran
// flux start --test-size.
func fluxStart(logs []logLine) (time.Time, error) {
	for _, l := range logs {
		if f := strings.Fields(l.text); len(f) == 2 && f[0] == fluxStartMark {
			return parseUnix(f[1])
		}
	}
	return time.Time{}, fmt.Errorf("no %s line", fluxStartMark)
}
