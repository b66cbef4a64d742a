// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.dns;

import io.kubeverdict.policy.IpAddress;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The DNS servers whose answers pods may learn from (M5): a pod's query is recorded only when
 * it is sent to one of them, so an answer from any other server (a resolver the pod runs or
 * reaches itself through an "allow port 53 anywhere" rule) teaches nothing. Addresses are as the
 * pod sees them: the cluster DNS Service's IP, not its endpoints' (queries are seen before DNAT,
 * answers after it is undone). Empty: nothing is learned (fail-closed). Immutable; {@link
 * #contains} allocates nothing.
 */
public final class DnsResolvers {
    private final int[] family;
    private final long[] hi;
    private final long[] lo;
    private final List<String> text;

    private DnsResolvers(List<IpAddress> addresses) {
        family = new int[addresses.size()];
        hi = new long[addresses.size()];
        lo = new long[addresses.size()];
        text = new ArrayList<>();
        for (int i = 0; i < addresses.size(); i++) {
            IpAddress a = addresses.get(i);
            family[i] = a.family();
            hi[i] = a.hi();
            lo[i] = a.lo();
            text.add(a.toString());
        }
    }

    /** The given addresses (IPv4 or IPv6 literals); throws on anything else. */
    public static DnsResolvers of(List<String> addresses) {
        Set<IpAddress> parsed = new LinkedHashSet<>();
        for (String a : addresses) {
            IpAddress ip = IpAddress.tryParse(a.strip());
            if (ip == null) {
                throw new IllegalArgumentException("--dns-resolvers: not an IP address: " + a);
            }
            parsed.add(ip);
        }
        return new DnsResolvers(new ArrayList<>(parsed));
    }

    public static DnsResolvers none() {
        return new DnsResolvers(List.of());
    }

    /**
     * The {@code nameserver} addresses of a resolv.conf text. The agent runs with
     * {@code dnsPolicy: ClusterFirstWithHostNet}, so its own resolv.conf names the kubelet's
     * cluster DNS (the DNS Service IP, or node-local DNS): the servers pods are configured to ask.
     * Lines that are not an IP literal (or carry a zone, {@code %eth0}) are skipped.
     */
    public static List<String> nameservers(String resolvConf) {
        List<String> out = new ArrayList<>();
        for (String line : resolvConf.split("\n")) {
            String[] words = line.strip().split("\\s+");
            if (words.length >= 2 && words[0].equals("nameserver") && IpAddress.tryParse(words[1]) != null) {
                out.add(words[1]);
            }
        }
        return out;
    }

    /** family 4 or 6; IPv4 in lo's low 32 bits, hi 0 (as {@link DnsSegment} reads addresses). */
    public boolean contains(int fam, long h, long l) {
        for (int i = 0; i < family.length; i++) {
            if (family[i] == fam && hi[i] == h && lo[i] == l) {
                return true;
            }
        }
        return false;
    }

    public boolean isEmpty() {
        return family.length == 0;
    }

    public List<String> addresses() {
        return List.copyOf(text);
    }

    @Override
    public String toString() {
        return String.join(",", text);
    }
}
