// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import io.kubeverdict.proto.v1.IpSetType;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * The numbers an index gives IP sets (what membership lists and programs hold) and each set's
 * type. Immutable: an update that adds or removes a set makes a new one. A removed set's number
 * is retired, never reused, until the next full compile.
 */
final class SetNumbers {

    static final SetNumbers EMPTY = new SetNumbers(Map.of(), new IpSetType[0]);

    private final Map<String, Integer> byId;
    private final IpSetType[] types; // by number; null = retired

    SetNumbers(Map<String, Integer> byId, IpSetType[] types) {
        this.byId = Map.copyOf(byId);
        this.types = types.clone();
    }

    /** The set's number, or -1 when the index has no such set. */
    int number(String id) {
        Integer n = byId.get(id);
        return n == null ? -1 : n;
    }

    IpSetType type(int number) {
        return types[number];
    }

    int size() {
        return byId.size();
    }

    /** A copy with one more set, numbered after every number given so far. */
    SetNumbers with(String id, IpSetType type) {
        Map<String, Integer> ids = new HashMap<>(byId);
        ids.put(id, types.length);
        IpSetType[] t = Arrays.copyOf(types, types.length + 1);
        t[types.length] = type;
        return new SetNumbers(ids, t);
    }

    /** A copy without the set; its number is retired. */
    SetNumbers without(String id) {
        Map<String, Integer> ids = new HashMap<>(byId);
        Integer n = ids.remove(id);
        IpSetType[] t = types.clone();
        if (n != null) {
            t[n] = null;
        }
        return new SetNumbers(ids, t);
    }
}
