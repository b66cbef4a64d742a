// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.auth;

import io.fabric8.kubernetes.api.model.authentication.TokenReview;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewBuilder;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewSpecBuilder;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewStatus;
import io.fabric8.kubernetes.api.model.authentication.UserInfo;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.List;
import java.util.Map;

/**
 * TokenReview (authentication.k8s.io/v1) with this process's audience: the API server checks the
 * signature, expiry, audience and that the bound pod still exists. The answer's audiences must
 * include ours (a reviewer must check that, the API documents).
 */
public final class KubernetesTokenReviewer implements TokenReviewer {
    private final KubernetesClient client;
    private final String audience;

    /** @param audience null: the API server's own (for operators' tokens) */
    public KubernetesTokenReviewer(KubernetesClient client, String audience) {
        this.client = client;
        this.audience = audience;
    }

    @Override
    public Review review(String token) {
        TokenReview review = new TokenReviewBuilder()
                .withSpec(new TokenReviewSpecBuilder()
                        .withToken(token)
                        .withAudiences(audience == null ? List.of() : List.of(audience))
                        .build())
                .build();
        TokenReview answer;
        try {
            answer = client.authentication().v1().tokenReviews().create(review);
        } catch (RuntimeException e) {
            return Review.failed("the token could not be reviewed (TokenReview API: " + e.getMessage() + ")");
        }
        TokenReviewStatus status = answer == null ? null : answer.getStatus();
        if (status == null || !Boolean.TRUE.equals(status.getAuthenticated())) {
            String why = status == null
                            || status.getError() == null
                            || status.getError().isBlank()
                    ? "not authenticated"
                    : status.getError();
            return Review.rejected("token rejected by the API server: " + why);
        }
        if (audience != null
                && (status.getAudiences() == null || !status.getAudiences().contains(audience))) {
            return Review.rejected(
                    "token is not for audience '" + audience + "' (it is for " + status.getAudiences() + ")");
        }
        UserInfo user = status.getUser();
        if (user == null || user.getUsername() == null || user.getUsername().isEmpty()) {
            return Review.rejected("the API server authenticated the token but named no user");
        }
        Map<String, List<String>> extra = user.getExtra() == null ? Map.of() : user.getExtra();
        return Review.authenticated(user.getUsername(), user.getGroups() == null ? List.of() : user.getGroups(), extra);
    }
}
