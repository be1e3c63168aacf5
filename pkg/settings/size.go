package settings

import (
	"fmt"
	"strings"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"k8s.io/apimachinery/pkg/util/validation"
)

// GroupSize is what min-size or max-size says of one replicatedJob: the
// pods each of its Jobs may shrink or grow to (its parallelism and
// completions, which JobSet's elastic update changes together).
type GroupSize struct {
	// Group is the replicatedJob's name; "" for a bare number, which
	// stands for the one replicatedJob of the instance.
	Group string
	// Pods is the number of pods per Job.
	Pods int
}

// MaxSizePods bounds one size: the ranks of an instance are written out
// in its hostlist at the largest size, so a size is as large as an
// instance may be.
const MaxSizePods = 1_000_000

// sizeRule is min-size or max-size: a bare number, or a comma-separated
// list of <replicatedJob>=<pods>.
func sizeRule(field func(*Settings) *[]GroupSize) rule {
	return rule{parse: func(s *Settings, raw string) error {
		sizes, err := parseSizes(raw)
		if err != nil {
			return err
		}
		*field(s) = sizes
		return nil
	}, clear: func(s *Settings) { *field(s) = nil }}
}

func parseSizes(raw string) ([]GroupSize, error) {
	if n, err := parseInt(raw, 1, MaxSizePods); err == nil {
		return []GroupSize{{Pods: n}}, nil
	}
	var sizes []GroupSize
	seen := map[string]bool{}
	for _, part := range strings.Split(raw, ",") {
		item := strings.Trim(part, " ")
		name, pods, ok := strings.Cut(item, "=")
		if !ok {
			return nil, fmt.Errorf("must be a number of pods per Job, or a comma-separated list of <replicatedJob>=<pods>, got %s", finding.Quote(item))
		}
		if len(name) > validation.DNS1035LabelMaxLength {
			name = name[:validation.DNS1035LabelMaxLength+1]
		}
		if errs := validation.IsDNS1035Label(name); len(errs) > 0 {
			return nil, fmt.Errorf("names replicatedJob %s, which is not a replicatedJob name: %s", finding.Quote(name), errs[0])
		}
		if seen[name] {
			return nil, fmt.Errorf("gives replicatedJob %q twice", name)
		}
		seen[name] = true
		n, err := parseInt(pods, 1, MaxSizePods)
		if err != nil {
			return nil, fmt.Errorf("gives replicatedJob %q a size that %w", name, err)
		}
		sizes = append(sizes, GroupSize{Group: name, Pods: n})
	}
	return sizes, nil
}

// SizeOf returns the size sizes gives the replicatedJob named group, and
// whether they give it one. A bare number is every replicatedJob's.
func SizeOf(sizes []GroupSize, group string) (int, bool) {
	for _, sz := range sizes {
		if sz.Group == "" || sz.Group == group {
			return sz.Pods, true
		}
	}
	return 0, false
}
