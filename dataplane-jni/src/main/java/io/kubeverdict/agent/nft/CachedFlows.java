// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.nft;

import io.kubeverdict.jni.Nftables;
import io.kubeverdict.policy.IpAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The keys the kernel's verdict cache holds, with the connections each accepted (the key's
 * element counter: the first connection, judged by the agent, and every hit after it), read from
 * nft's listing of the cache sets. Only a table made with {@link CacheSettings#counters()} has
 * the counts; without them the listing is empty.
 */
public final class CachedFlows {
    /** One cached key: source, destination, IP protocol number, destination port, connections. */
    public record Flow(IpAddress source, IpAddress destination, int protocol, int port, long connections) {}

    // "10.0.0.1 . 10.0.0.2 . tcp . 80 counter packets 3 bytes 180 expires 59s": the protocol as
    // nft names it (or its number), the port as a number.
    private static final Pattern ELEMENT =
            Pattern.compile("([0-9a-fA-F:.]+) \\. ([0-9a-fA-F:.]+) \\. ([a-z0-9-]+) \\. (\\d+) counter packets (\\d+)");
    private static final Map<String, Integer> PROTOCOLS = Map.of("tcp", 6, "udp", 17, "sctp", 132);

    private CachedFlows() {}

    /**
     * Both families' cached keys of the table {@code config} describes, through {@code nft} (a
     * context of the caller's thread); empty when the table has no cache or no counters.
     */
    public static List<Flow> read(Nftables nft, RulesetConfig config) {
        if (!config.cache().enabled() || !config.cache().counters()) {
            return List.of();
        }
        List<Flow> flows = new ArrayList<>();
        for (boolean v4 : new boolean[] {true, false}) {
            String set = RulesetRenderer.setRef(config, v4 ? CacheRules.CACHE_V4 : CacheRules.CACHE_V6);
            flows.addAll(parse(nft.run("list set " + set)));
        }
        return flows;
    }

    /** The elements of nft's listing of one cache set; an element it cannot read is skipped. */
    static List<Flow> parse(String listing) {
        List<Flow> flows = new ArrayList<>();
        Matcher m = ELEMENT.matcher(listing);
        while (m.find()) {
            Integer protocol = protocol(m.group(3));
            if (protocol == null) {
                continue; // the cache rules store only tcp, udp and sctp keys
            }
            try {
                flows.add(new Flow(
                        IpAddress.parse(m.group(1)),
                        IpAddress.parse(m.group(2)),
                        protocol,
                        Integer.parseInt(m.group(4)),
                        Long.parseLong(m.group(5))));
            } catch (IllegalArgumentException e) {
                // not an address after all (the pattern is loose): not a key
            }
        }
        return flows;
    }

    private static Integer protocol(String text) {
        Integer named = PROTOCOLS.get(text);
        if (named != null) {
            return named;
        }
        return text.chars().allMatch(Character::isDigit) && text.length() <= 3 ? Integer.valueOf(text) : null;
    }
}
