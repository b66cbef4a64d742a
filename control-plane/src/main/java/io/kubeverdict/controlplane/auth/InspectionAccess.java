package io.kubeverdict.controlplane.auth;

import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewBuilder;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewStatus;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.grpc.Status;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
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

    private record Entry(Status status, long expiresNanos) {}

    private final Function<Review, Status> reviewer;
    private final LongSupplier nanoTime;
    private final Map<String, Entry> entries = new ConcurrentHashMap<>();

    InspectionAccess(Function<Review, Status> reviewer, LongSupplier nanoTime) {
        this.reviewer = reviewer;
        this.nanoTime = nanoTime;
    }

    /** Asks the API server (SubjectAccessReview), as the control plane's own account. */
    public static InspectionAccess subjectAccessReviews(KubernetesClient client) {
        return new InspectionAccess(who -> review(client, who), System::nanoTime);
    }

    /** OK, or why this user may not inspect (PERMISSION_DENIED; UNAVAILABLE when the API could not say). */
    public Status check(Review who) {
        String key = who.username() + "\u0000" + who.groups();
        long now = nanoTime.getAsLong();
        Entry e = entries.get(key);
        if (e != null && now - e.expiresNanos() < 0) {
            return e.status();
        }
        Status status = reviewer.apply(who);
        if (status.getCode() != Status.Code.UNAVAILABLE) {
            if (entries.size() >= MAX_ENTRIES) {
                entries.clear(); // a flood of made-up users: start over rather than grow
            }
            entries.put(key, new Entry(status, now + (status.isOk() ? ALLOWED_FOR_NANOS : DENIED_FOR_NANOS)));
        }
        return status;
    }

    private static Status review(KubernetesClient client, Review who) {
        SubjectAccessReview asked = new SubjectAccessReviewBuilder().withNewSpec()
                .withUser(who.username()).withGroups(who.groups()).withExtra(Map.copyOf(who.extra()))
                .withNewNonResourceAttributes().withPath(PATH).withVerb(VERB).endNonResourceAttributes()
                .endSpec().build();
        SubjectAccessReviewStatus answer;
        try {
            SubjectAccessReview reviewed = client.authorization().v1().subjectAccessReview().create(asked);
            answer = reviewed == null ? null : reviewed.getStatus();
        } catch (RuntimeException e) {
            return Status.UNAVAILABLE.withDescription("could not ask the API server whether " + who.username()
                    + " may inspect (SubjectAccessReview: " + e.getMessage() + ")");
        }
        if (answer != null && Boolean.TRUE.equals(answer.getAllowed()) && !Boolean.TRUE.equals(answer.getDenied())) {
            return Status.OK;
        }
        String reason = answer == null || answer.getReason() == null || answer.getReason().isBlank()
                ? "" : " (" + answer.getReason() + ")";
        return Status.PERMISSION_DENIED.withDescription(who.username() + " may not inspect: the API server does not "
                + "allow it " + VERB + " " + PATH + reason + "; bind the ClusterRole kube-verdict-inspector to grant it");
    }
}
