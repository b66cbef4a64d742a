// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.auth;

import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewBuilder;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewStatus;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.grpc.Status;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * Whether an authenticated user other than the agents may inspect every node (ListNodes,
 * GetSnapshot, Explain, DescribeEndpoint, ObserveVerdicts): the API server decides, by a
 * SubjectAccessReview of {@code get} on the non-resource path {@value #PATH} — what the ClusterRole
 * {@code kube-verdict-inspector} grants, so an operator grants inspection with one
 * ClusterRoleBinding and Kubernetes audits it. Answers are kept briefly (allowed 30 s, denied
 * 5 s, an API failure not at all, at most {@value #MAX_ENTRIES} users).
 */
public final class InspectionAccess {
    public static final String PATH = "/kube-verdict/inspect";
    public static final String VERB = "get";
    static final long ALLOWED_FOR_NANOS = 30_000_000_000L;
    static final long DENIED_FOR_NANOS = 5_000_000_000L;
    static final int MAX_ENTRIES = 10_000;

    private final Function<Review, Status> reviewer;
    private final ExpiringAnswers<Status> answers;

    InspectionAccess(Function<Review, Status> reviewer, LongSupplier nanoTime) {
        this.reviewer = reviewer;
        this.answers = new ExpiringAnswers<>(MAX_ENTRIES, nanoTime);
    }

    /** Asks the API server (SubjectAccessReview), as the control plane's own account. */
    public static InspectionAccess subjectAccessReviews(KubernetesClient client) {
        return new InspectionAccess(who -> review(client, who), System::nanoTime);
    }

    /** OK, or why this user may not inspect (PERMISSION_DENIED; UNAVAILABLE when the API could not say). */
    public Status check(Review who) {
        // Everything the review is asked about is in the key: an authorizer may decide on extra too.
        String key = who.username() + "\u0000" + who.groups() + "\u0000" + new TreeMap<>(who.extra());
        Status kept = answers.get(key);
        if (kept != null) {
            return kept;
        }
        Status status = reviewer.apply(who);
        if (status.getCode() != Status.Code.UNAVAILABLE) {
            answers.put(key, status, status.isOk() ? ALLOWED_FOR_NANOS : DENIED_FOR_NANOS);
        }
        return status;
    }

    private static Status review(KubernetesClient client, Review who) {
        SubjectAccessReview asked = new SubjectAccessReviewBuilder()
                .withNewSpec()
                .withUser(who.username())
                .withGroups(who.groups())
                .withExtra(Map.copyOf(who.extra()))
                .withNewNonResourceAttributes()
                .withPath(PATH)
                .withVerb(VERB)
                .endNonResourceAttributes()
                .endSpec()
                .build();
        SubjectAccessReviewStatus answer;
        try {
            SubjectAccessReview reviewed =
                    client.authorization().v1().subjectAccessReview().create(asked);
            answer = reviewed == null ? null : reviewed.getStatus();
        } catch (RuntimeException e) {
            return Status.UNAVAILABLE.withDescription("could not ask the API server whether " + who.username()
                    + " may inspect (SubjectAccessReview: " + e.getMessage() + ")");
        }
        if (answer != null && Boolean.TRUE.equals(answer.getAllowed()) && !Boolean.TRUE.equals(answer.getDenied())) {
            return Status.OK;
        }
        String reason = answer == null
                        || answer.getReason() == null
                        || answer.getReason().isBlank()
                ? ""
                : " (" + answer.getReason() + ")";
        return Status.PERMISSION_DENIED.withDescription(
                who.username() + " may not inspect: the API server does not " + "allow it " + VERB + " " + PATH + reason
                        + "; bind the ClusterRole kube-verdict-inspector to grant it");
    }
}
