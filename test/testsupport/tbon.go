package testsupport

import (
	"regexp"
	"strings"
)

// tbonSockets is a Python program that prints a broker's TBON sockets as
// its pod's network namespace holds them (/proc/net/tcp6, /proc/net/tcp):
// "listen ADDR" for each socket listening on port 8050, the port the render
// gives the brokers, and "peer ADDR" for each connection accepted there.
// Run in rank 0's pod, it shows the address family the instance uses.
const tbonSockets = `import socket, struct
def addr(hexaddr):
    raw = bytes.fromhex(hexaddr)
    if len(raw) == 4:
        return socket.inet_ntop(socket.AF_INET, raw[::-1])
    words = b"".join(struct.pack("<I", struct.unpack(">I", raw[i:i + 4])[0]) for i in range(0, 16, 4))
    return socket.inet_ntop(socket.AF_INET6, words)
for table in ("/proc/net/tcp6", "/proc/net/tcp"):
    for line in open(table).readlines()[1:]:
        fields = line.split()
        local, port = fields[1].split(":")
        if int(port, 16) != 8050:
            continue
        if fields[3] == "0A":
            print("listen", addr(local))
        elif fields[3] == "01":
            print("peer", addr(fields[2].split(":")[0]))
`

// TBONCommand is an instance's command, for the Flux command at flux, that
// shows how its brokers connected: each task prints its host ("task RANK on
// HOST"); rank 0's task also prints its broker's TBON sockets, and rank 1's
// the endpoint it reached its parent by ("parent URI").
func TBONCommand(flux string) []string {
	return []string{"bash", "-c", `echo "task $FLUX_TASK_RANK on $(hostname)"
case $FLUX_TASK_RANK in
0) python3 -c '` + tbonSockets + `' ;;
1) echo "parent $(` + flux + ` getattr tbon.parent-endpoint)" ;;
esac`}
}

var tbonSocketLine = regexp.MustCompile(`(?m)^(listen|peer) (\S+)$`)

// TBONSocketsIn returns the addresses TBONCommand's rank 0 printed into out: those
// rank 0 listens on and those its children connected from.
func TBONSocketsIn(out string) (listen, peers []string) {
	for _, m := range tbonSocketLine.FindAllStringSubmatch(out, -1) {
		if m[1] == "listen" {
			listen = append(listen, m[2])
		} else {
			peers = append(peers, m[2])
		}
	}
	return listen, peers
}

// IsIPv6 reports whether addr is written as an IPv6 address.
func IsIPv6(addr string) bool { return strings.Contains(addr, ":") }
