package shim

import (
	"fmt"
	"net"
	"os"
	"strings"

	"golang.org/x/net/dns/dnsmessage"
)

// ServeDNS answers DNS queries on UDP addr (host:port) from records, which
// map fully qualified names (no trailing dot) to IPv4 or IPv6 addresses:
// an A query for a name with an IPv4 address gets it, an AAAA query for
// one with an IPv6 address gets that, other types for a known name an
// empty answer, and unknown names NXDOMAIN. That is what cluster DNS
// answers for the pods of a headless Service of one family, and it lets
// the resolver's search path (resolv.conf's "search <ns>.svc.<domain>
// ...") do the rest, as in a pod.
func ServeDNS(addr string, records map[string]string) error {
	conn, err := net.ListenPacket("udp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	fmt.Fprintf(os.Stderr, "serving %d names on %s\n", len(records), addr)
	known := make(map[string]net.IP, len(records))
	for name, ip := range records {
		parsed := net.ParseIP(ip)
		if parsed == nil {
			return fmt.Errorf("record %s: %q is not an IP address", name, ip)
		}
		known[strings.ToLower(strings.TrimSuffix(name, "."))+"."] = parsed
	}
	buf := make([]byte, 4096)
	for {
		n, from, err := conn.ReadFrom(buf)
		if err != nil {
			return err
		}
		reply, err := answer(buf[:n], known)
		if err != nil {
			continue // not a query we can parse: drop it, as a server would
		}
		if _, err := conn.WriteTo(reply, from); err != nil {
			return err
		}
	}
}

func answer(query []byte, known map[string]net.IP) ([]byte, error) {
	var p dnsmessage.Parser
	header, err := p.Start(query)
	if err != nil {
		return nil, err
	}
	q, err := p.Question()
	if err != nil {
		return nil, err
	}
	name := strings.ToLower(q.Name.String())
	ip, found := known[name]
	rcode := dnsmessage.RCodeSuccess
	if !found {
		rcode = dnsmessage.RCodeNameError
	}
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{
		ID: header.ID, Response: true, Authoritative: true,
		RecursionDesired: header.RecursionDesired, RCode: rcode,
	})
	b.EnableCompression()
	if err := b.StartQuestions(); err != nil {
		return nil, err
	}
	if err := b.Question(q); err != nil {
		return nil, err
	}
	if err := b.StartAnswers(); err != nil {
		return nil, err
	}
	if found && q.Class == dnsmessage.ClassINET {
		rh := dnsmessage.ResourceHeader{Name: q.Name, Type: q.Type, Class: dnsmessage.ClassINET, TTL: 5}
		v4 := ip.To4()
		switch {
		case q.Type == dnsmessage.TypeA && v4 != nil:
			err = b.AResource(rh, dnsmessage.AResource{A: [4]byte(v4)})
		case q.Type == dnsmessage.TypeAAAA && v4 == nil:
			err = b.AAAAResource(rh, dnsmessage.AAAAResource{AAAA: [16]byte(ip.To16())})
		}
		if err != nil {
			return nil, err
		}
	}
	return b.Finish()
}
