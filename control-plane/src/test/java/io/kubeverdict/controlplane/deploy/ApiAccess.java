// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.deploy;

import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import java.util.Set;
import java.util.TreeSet;

/** One Kubernetes API permission: a verb on a resource of an API group ("" = core). */
record ApiAccess(String group, String resource, String verb) implements Comparable<ApiAccess> {

    /** The permission an HTTP request to the API server needs, or null for non-resource paths. */
    static ApiAccess ofRequest(String method, String pathAndQuery) {
        String[] pq = pathAndQuery.split("\\?", 2);
        String query = pq.length > 1 ? pq[1] : "";
        String[] p = pq[0].replaceAll("^/+", "").split("/");
        int rest;
        String group;
        if (p.length >= 3 && p[0].equals("api")) {
            group = "";
            rest = 2;
        } else if (p.length >= 4 && p[0].equals("apis")) {
            group = p[1];
            rest = 3;
        } else {
            return null;
        }
        int remaining = p.length - rest;
        String resource;
        boolean named;
        int at;
        if (remaining >= 3 && p[rest].equals("namespaces")) {
            at = rest + 2;
        } else {
            at = rest;
        }
        resource = p[at];
        named = p.length > at + 1;
        if (p.length > at + 2) {
            resource = resource + "/" + p[at + 2]; // a subresource: pods/status
        }
        boolean watch = query.matches("(^|.*&)watch=(true|1)(&.*|$)");
        String verb = switch (method) {
            case "GET" -> watch ? "watch" : named ? "get" : "list";
            case "POST" -> "create";
            case "PUT" -> "update";
            case "PATCH" -> "patch";
            case "DELETE" -> named ? "delete" : "deletecollection";
            default -> method.toLowerCase();
        };
        return new ApiAccess(group, resource, verb);
    }

    /** Every (group, resource, verb) a ClusterRole grants, expanded. */
    static Set<ApiAccess> grantedBy(ClusterRole role) {
        return grantedBy(role.getRules());
    }

    /** Every (group, resource, verb) a Role grants, expanded (resource names aside). */
    static Set<ApiAccess> grantedBy(io.fabric8.kubernetes.api.model.rbac.Role role) {
        return grantedBy(role.getRules());
    }

    private static Set<ApiAccess> grantedBy(java.util.List<PolicyRule> rules) {
        Set<ApiAccess> granted = new TreeSet<>();
        for (PolicyRule rule : rules) {
            for (String group : rule.getApiGroups()) {
                for (String resource : rule.getResources()) {
                    for (String verb : rule.getVerbs()) {
                        granted.add(new ApiAccess(group, resource, verb));
                    }
                }
            }
        }
        return granted;
    }

    @Override
    public int compareTo(ApiAccess o) {
        return toString().compareTo(o.toString());
    }

    @Override
    public String toString() {
        return (group.isEmpty() ? "core" : group) + "/" + resource + ":" + verb;
    }
}
