// Package verify reads back an output ResourceList just far enough to
// prove that a function did its work: how many items, ConfigMaps, Secrets,
// flux-installer init containers and broker.toml files it holds, and the
// text of the first broker.toml.
//
// It scans lines instead of parsing YAML, relying on the layout the SDK's
// rl.ToYAML always writes: top-level keys at column 0, items as "- "
// entries at column 0, an item's own keys at two spaces and a ConfigMap's
// data keys at four.
package verify

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/jobset-flux/jobset-flux/test/bench/internal/gen"
)

// Output is what was found in one output ResourceList.
type Output struct {
	gen.Counts
	// Broker is the first broker.toml found ("" when none).
	Broker string
}

// File reads the output ResourceList at path.
func File(path string) (*Output, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f)
}

// Read scans an output ResourceList.
func Read(r io.Reader) (*Output, error) {
	var out Output
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	section := ""
	inBroker, brokerDone := false, false
	var broker strings.Builder
	for sc.Scan() {
		line := sc.Text()
		if inBroker {
			switch {
			case line == "":
				broker.WriteByte('\n')
				continue
			case strings.HasPrefix(line, "      "):
				broker.WriteString(line[6:])
				broker.WriteByte('\n')
				continue
			}
			inBroker, brokerDone = false, true
		}
		if line == "" || line[0] == '#' {
			continue
		}
		if line[0] != ' ' && line[0] != '-' {
			section, _, _ = strings.Cut(line, ":")
			continue
		}
		if section != "items" {
			continue
		}
		switch {
		case strings.HasPrefix(line, "- "):
			out.Items++
		case line == "  kind: ConfigMap":
			out.ConfigMaps++
		case line == "  kind: Secret":
			out.Secrets++
		case strings.HasPrefix(line, "    broker.toml: |"):
			out.BrokerConfigs++
			if !brokerDone {
				inBroker = true
			}
		case strings.TrimSpace(line) == "- name: "+"flux-installer":
			out.InitContainers++
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	// A literal block's last line break belongs to the value; the trailing
	// blank lines do not.
	out.Broker = strings.TrimRight(broker.String(), "\n") + "\n"
	if out.BrokerConfigs == 0 {
		out.Broker = ""
	}
	return &out, nil
}

// Check compares what was found with what was wanted.
func Check(got gen.Counts, want gen.Counts) error {
	if got != want {
		return fmt.Errorf("output holds %+v, want %+v", got, want)
	}
	return nil
}
