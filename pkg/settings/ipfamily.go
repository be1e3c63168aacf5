package settings

// The ip-family values.
const (
	// IPv4: the brokers bind network-device's IPv4 address and resolve
	// their peers' names to IPv4 addresses (Flux's default).
	IPv4 = "ipv4"
	// IPv6: Flux's [bootstrap] enable_ipv6. The brokers bind
	// network-device's first IPv6 address, which the kernel lists global
	// before link-local, and resolve their peers' names to IPv6
	// addresses (an IPv4-only name comes back IPv4-mapped).
	IPv6 = "ipv6"
)
