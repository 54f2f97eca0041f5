//! Which IP addresses count as "inside": the SSRF check.
//!
//! A host pattern is checked against the name in the URL; DNS can still
//! answer that name with `127.0.0.1` or the cloud metadata address. So after
//! resolution the runtime refuses an address for which [`is_internal_address`]
//! is true, unless the table names it explicitly
//! ([`NetAllowlist::names_address_explicitly`](super::NetAllowlist::names_address_explicitly)).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// True when `ip` is not a public internet address: loopback, private,
/// link-local (including the cloud metadata addresses), shared, reserved,
/// documentation, benchmarking, broadcast or multicast.
///
/// IPv6 forms that carry an IPv4 address (IPv4-mapped `::ffff:a.b.c.d`,
/// IPv4-compatible `::a.b.c.d`, NAT64 `64:ff9b::a.b.c.d`, 6to4
/// `2002:aabb:ccdd::`) are judged by the IPv4 address inside them, because
/// that is where a connection to them ends up.
pub fn is_internal_address(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_internal_v4(v4),
        IpAddr::V6(v6) => is_internal_v6(v6),
    }
}

/// IPv4 networks that are not the public internet: (network, prefix length,
/// why it is here).
const INTERNAL_V4: &[(Ipv4Addr, u8, &str)] = &[
    (Ipv4Addr::new(0, 0, 0, 0), 8, "\"this network\", including 0.0.0.0"),
    (Ipv4Addr::new(10, 0, 0, 0), 8, "private"),
    (Ipv4Addr::new(100, 64, 0, 0), 10, "carrier-grade NAT shared space"),
    (Ipv4Addr::new(127, 0, 0, 0), 8, "loopback"),
    (Ipv4Addr::new(169, 254, 0, 0), 16, "link-local, cloud metadata 169.254.169.254"),
    (Ipv4Addr::new(172, 16, 0, 0), 12, "private"),
    (Ipv4Addr::new(192, 0, 0, 0), 24, "IETF protocol assignments"),
    (Ipv4Addr::new(192, 0, 2, 0), 24, "documentation"),
    (Ipv4Addr::new(192, 168, 0, 0), 16, "private"),
    (Ipv4Addr::new(198, 18, 0, 0), 15, "benchmarking"),
    (Ipv4Addr::new(198, 51, 100, 0), 24, "documentation"),
    (Ipv4Addr::new(203, 0, 113, 0), 24, "documentation"),
    (Ipv4Addr::new(224, 0, 0, 0), 4, "multicast"),
    (Ipv4Addr::new(240, 0, 0, 0), 4, "reserved, including broadcast 255.255.255.255"),
];

/// IPv6 networks that are not the public internet. The IPv4-carrying forms
/// are handled before this table is consulted.
const INTERNAL_V6: &[(Ipv6Addr, u8, &str)] = &[
    (Ipv6Addr::UNSPECIFIED, 128, "unspecified"),
    (Ipv6Addr::LOCALHOST, 128, "loopback"),
    // What is left of ::/8 after ::, ::1 and the IPv4 forms is reserved.
    (Ipv6Addr::new(0, 0, 0, 0, 0, 0, 0, 0), 8, "reserved"),
    (Ipv6Addr::new(0x64, 0xff9b, 1, 0, 0, 0, 0, 0), 48, "local-use NAT64"),
    (Ipv6Addr::new(0x100, 0, 0, 0, 0, 0, 0, 0), 64, "discard-only"),
    (Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0), 32, "Teredo: tunnels to an address we cannot see"),
    (Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0), 32, "documentation"),
    (
        Ipv6Addr::new(0xfc00, 0, 0, 0, 0, 0, 0, 0),
        7,
        "unique local, including AWS metadata fd00:ec2::254",
    ),
    (Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 0), 10, "link-local"),
    (
        Ipv6Addr::new(0xfec0, 0, 0, 0, 0, 0, 0, 0),
        10,
        "deprecated site-local, still routed by some stacks",
    ),
    (Ipv6Addr::new(0xff00, 0, 0, 0, 0, 0, 0, 0), 8, "multicast"),
];

fn is_internal_v4(ip: Ipv4Addr) -> bool {
    let ip = u32::from(ip);
    INTERNAL_V4.iter().any(|&(net, len, _)| {
        let mask = u32::MAX.checked_shl(32 - u32::from(len)).unwrap_or(0);
        ip & mask == u32::from(net)
    })
}

fn is_internal_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = embedded_v4(ip) {
        return is_internal_v4(v4);
    }
    let ip = u128::from(ip);
    INTERNAL_V6.iter().any(|&(net, len, _)| {
        let mask = u128::MAX.checked_shl(128 - u32::from(len)).unwrap_or(0);
        ip & mask == u128::from(net)
    })
}

/// The IPv4 address an IPv6 address forwards to, if it is one of the
/// translation forms.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let low = Ipv4Addr::from((u32::from(s[6]) << 16) | u32::from(s[7]));
    if let Some(mapped) = ip.to_ipv4_mapped() {
        return Some(mapped);
    }
    // IPv4-compatible ::a.b.c.d; `::` and `::1` are IPv6's own and are not
    // translated.
    if s[..6] == [0; 6] && !ip.is_unspecified() && !ip.is_loopback() {
        return Some(low);
    }
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return Some(low);
    }
    if s[0] == 0x2002 {
        return Some(Ipv4Addr::from((u32::from(s[1]) << 16) | u32::from(s[2])));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (address, internal?)
    const CASES: &[(&str, bool)] = &[
        // IPv4 internal
        ("127.0.0.1", true),
        ("127.255.255.254", true),
        ("0.0.0.0", true),
        ("0.1.2.3", true),
        ("10.0.0.1", true),
        ("10.255.255.255", true),
        ("172.16.0.1", true),
        ("172.31.255.255", true),
        ("192.168.1.1", true),
        ("169.254.169.254", true),
        ("169.254.0.1", true),
        ("100.64.0.1", true),
        ("100.127.255.255", true),
        ("198.18.0.1", true),
        ("198.19.255.255", true),
        ("224.0.0.1", true),
        ("239.255.255.250", true),
        ("255.255.255.255", true),
        ("240.0.0.1", true),
        ("192.0.0.8", true),
        ("192.0.2.1", true),
        ("198.51.100.7", true),
        ("203.0.113.9", true),
        // IPv4 public, including the neighbours of each internal range
        ("8.8.8.8", false),
        ("1.1.1.1", false),
        ("93.184.216.34", false),
        ("172.15.255.255", false),
        ("172.32.0.0", false),
        ("100.63.255.255", false),
        ("100.128.0.0", false),
        ("169.253.255.255", false),
        ("198.17.255.255", false),
        ("198.20.0.0", false),
        ("11.0.0.1", false),
        ("126.255.255.255", false),
        ("128.0.0.1", false),
        ("223.255.255.255", false),
        ("192.169.0.1", false),
        // IPv6 internal
        ("::1", true),
        ("::", true),
        ("fc00::1", true),
        ("fd12:3456::1", true),
        ("fd00:ec2::254", true),
        ("fe80::1", true),
        ("febf::1", true),
        ("fec0::1", true),
        ("ff02::1", true),
        ("ff05::2", true),
        ("2001:db8::1", true),
        ("2001:0:4136:e378::1", true),
        ("100::1", true),
        ("64:ff9b:1::1", true),
        // IPv4 inside IPv6: judged by the IPv4 address
        ("::ffff:127.0.0.1", true),
        ("::ffff:169.254.169.254", true),
        ("::ffff:10.1.2.3", true),
        ("::ffff:8.8.8.8", false),
        ("::127.0.0.1", true),
        ("::10.0.0.1", true),
        ("::8.8.8.8", false),
        ("64:ff9b::127.0.0.1", true),
        ("64:ff9b::169.254.169.254", true),
        ("64:ff9b::192.168.0.1", true),
        ("64:ff9b::8.8.8.8", false),
        ("2002:7f00:1::", true),
        ("2002:a9fe:a9fe::1", true),
        ("2002:808:808::1", false),
        // IPv6 public
        ("2606:4700:4700::1111", false),
        ("2001:4860:4860::8888", false),
        ("2a00:1450:4001:80b::200e", false),
        ("fbff::1", false),
        ("fe00::1", false),
    ];

    #[test]
    fn internal_address_table() {
        for &(text, expected) in CASES {
            let ip: IpAddr = text.parse().expect(text);
            assert_eq!(is_internal_address(ip), expected, "is_internal_address({text})");
        }
    }

    #[test]
    fn range_tables_have_no_host_bits_set() {
        // A network written with host bits (10.0.0.1/8) would never match.
        for &(net, len, why) in INTERNAL_V4 {
            let mask = u32::MAX.checked_shl(32 - u32::from(len)).unwrap_or(0);
            assert_eq!(u32::from(net) & !mask, 0, "{net}/{len} ({why})");
        }
        for &(net, len, why) in INTERNAL_V6 {
            let mask = u128::MAX.checked_shl(128 - u32::from(len)).unwrap_or(0);
            assert_eq!(u128::from(net) & !mask, 0, "{net}/{len} ({why})");
        }
    }

    #[test]
    fn std_agrees_on_the_obvious_ones() {
        // Guard against a typo in a range: everything std calls loopback,
        // private, link-local or multicast must be internal here too.
        for &(text, _) in CASES {
            let ip: IpAddr = text.parse().expect(text);
            let obvious = match ip {
                IpAddr::V4(v4) => {
                    v4.is_loopback() || v4.is_private() || v4.is_link_local() || v4.is_multicast()
                }
                IpAddr::V6(v6) => v6.is_loopback() || v6.is_multicast() || v6.is_unspecified(),
            };
            if obvious {
                assert!(is_internal_address(ip), "{text} should be internal");
            }
        }
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        /// Every IPv6 form that carries `v4`, each of which ends up at `v4`.
        fn carriers(v4: Ipv4Addr) -> [Ipv6Addr; 4] {
            let [a, b, c, d] = v4.octets();
            let hi = u16::from_be_bytes([a, b]);
            let lo = u16::from_be_bytes([c, d]);
            [
                v4.to_ipv6_mapped(),
                Ipv6Addr::new(0, 0, 0, 0, 0, 0, hi, lo),
                Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, hi, lo),
                Ipv6Addr::new(0x2002, hi, lo, 0, 0, 0, 0, 1),
            ]
        }

        proptest! {
            #[test]
            fn ipv6_forms_of_an_ipv4_address_are_judged_as_that_address(v4 in any::<Ipv4Addr>()) {
                let inside = is_internal_address(IpAddr::V4(v4));
                for v6 in carriers(v4) {
                    prop_assert_eq!(
                        is_internal_address(IpAddr::V6(v6)),
                        inside,
                        "{} carrying {}",
                        v6,
                        v4
                    );
                }
            }

            #[test]
            fn every_address_in_an_internal_network_is_internal(
                v4 in (0..INTERNAL_V4.len(), any::<u32>()),
                v6 in (0..INTERNAL_V6.len(), any::<u128>()),
            ) {
                let (net, len, why) = INTERNAL_V4[v4.0];
                let host = v4.1.checked_shr(u32::from(len)).unwrap_or(0);
                let ip = Ipv4Addr::from(u32::from(net) | host);
                prop_assert!(is_internal_address(IpAddr::V4(ip)), "{} ({})", ip, why);
                let (net, len, why) = INTERNAL_V6[v6.0];
                let host = v6.1.checked_shr(u32::from(len)).unwrap_or(0);
                let ip = Ipv6Addr::from(u128::from(net) | host);
                // IPv4-carrying forms inside ::/8 are judged by their IPv4 address.
                prop_assume!(embedded_v4(ip).is_none());
                prop_assert!(is_internal_address(IpAddr::V6(ip)), "{} ({})", ip, why);
            }

            #[test]
            fn what_std_calls_local_is_internal(ip in any::<IpAddr>()) {
                let local = match ip {
                    IpAddr::V4(v4) => v4.is_loopback() || v4.is_private() || v4.is_link_local()
                        || v4.is_multicast() || v4.is_broadcast() || v4.is_documentation()
                        || v4.is_unspecified(),
                    IpAddr::V6(v6) => v6.is_loopback() || v6.is_multicast() || v6.is_unspecified()
                        || v6.is_unique_local() || v6.is_unicast_link_local()
                        || v6.to_ipv4_mapped()
                            .is_some_and(|v4| v4.is_loopback() || v4.is_private()),
                };
                if local {
                    prop_assert!(is_internal_address(ip), "{}", ip);
                }
            }
        }
    }
}
