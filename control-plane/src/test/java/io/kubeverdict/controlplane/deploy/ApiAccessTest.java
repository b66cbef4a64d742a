// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ApiAccessTest {
    @ParameterizedTest
    @CsvSource({
        "GET, /api/v1/pods, core/pods:list",
        "GET, /api/v1/pods?resourceVersion=0&watch=true, core/pods:watch",
        "GET, /api/v1/namespaces, core/namespaces:list",
        "GET, /api/v1/namespaces/x, core/namespaces:get",
        "GET, /api/v1/namespaces/x/pods/a, core/pods:get",
        "POST, /api/v1/namespaces/x/events, core/events:create",
        "PATCH, /api/v1/namespaces/x/events/e1, core/events:patch",
        "GET, /apis/networking.k8s.io/v1/networkpolicies?allowWatchBookmarks=true&watch=true, networking.k8s.io/networkpolicies:watch",
        "DELETE, /apis/networking.k8s.io/v1/namespaces/x/networkpolicies, networking.k8s.io/networkpolicies:deletecollection",
        "PATCH, /api/v1/namespaces/x/pods/a/status, core/pods/status:patch",
        "PUT, /apis/policy.networking.k8s.io/v1alpha1/adminnetworkpolicies/a/status, policy.networking.k8s.io/adminnetworkpolicies/status:update",
        "PUT, /apis/coordination.k8s.io/v1/namespaces/k/leases/l, coordination.k8s.io/leases:update",
    })
    void mapsRequestsToPermissions(String method, String path, String expected) {
        assertThat(ApiAccess.ofRequest(method, path)).hasToString(expected);
    }

    @ParameterizedTest
    @CsvSource({"GET, /version", "GET, /apis", "GET, /api/v1"})
    void nonResourcePathsNeedNoResourcePermission(String method, String path) {
        assertThat(ApiAccess.ofRequest(method, path)).isNull();
    }
}
