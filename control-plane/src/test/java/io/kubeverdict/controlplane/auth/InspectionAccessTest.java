// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.auth;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class InspectionAccessTest {
    private final AtomicLong nanos = new AtomicLong();
    private final List<Review> asked = new ArrayList<>();
    private Status answer = Status.OK;
    private final InspectionAccess access = new InspectionAccess(
            who -> {
                asked.add(who);
                return answer;
            },
            nanos::get);

    private static Review user(String name, Map<String, List<String>> extra) {
        return Review.authenticated(name, List.of("system:authenticated"), extra);
    }

    @Test
    void anAnswerIsReusedOnlyForTheSameUserGroupsAndExtra() {
        Review plain = user("alice", Map.of());
        Review scoped = user("alice", Map.of("scopes", List.of("read-only")));
        assertThat(access.check(plain).isOk()).isTrue();
        assertThat(access.check(plain).isOk()).isTrue();
        answer = Status.PERMISSION_DENIED;
        assertThat(access.check(scoped).getCode())
                .as("extra is part of what the API server was asked")
                .isEqualTo(Status.Code.PERMISSION_DENIED);
        assertThat(asked).containsExactly(plain, scoped);
    }

    @Test
    void allowedExpiresAndUnavailableIsNeverKept() {
        Review alice = user("alice", Map.of());
        access.check(alice);
        nanos.addAndGet(InspectionAccess.ALLOWED_FOR_NANOS);
        answer = Status.UNAVAILABLE;
        assertThat(access.check(alice).getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        answer = Status.PERMISSION_DENIED;
        assertThat(access.check(alice).getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
        assertThat(asked).hasSize(3);
    }
}
